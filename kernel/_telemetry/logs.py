"""Process logging: text or JSON lines on stderr, correlated with traces, secrets redacted.

Every record carries the current ``trace_id``/``span_id`` when a span is
active.  Values registered with :func:`register_secret` (plugins register the
secrets they resolve), the values of the current call's secret arguments (see
:func:`hide_call_secrets`) and values of fields whose name says they are
secret are replaced by ``***`` before anything is written — in messages,
extra fields and exception tracebacks alike.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import sys
import time
from contextvars import ContextVar
from typing import Any

from opentelemetry import trace

__all__ = [
    "JsonFormatter",
    "RedactingFormatter",
    "SecretRedactor",
    "configure_logging",
    "hide_call_secrets",
    "redact",
    "redact_arguments",
    "redact_issues",
    "redact_url",
    "register_secret",
    "secret_arguments",
]

REDACTED = "***"
_SECRET_KEY = re.compile(r"secret|token|password|passwd|authorization|api[_-]?key|credential", re.IGNORECASE)
_secrets: set[str] = set()
_call_secrets: ContextVar[tuple[str, ...]] = ContextVar("toolmesh_call_secrets", default=())
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<userinfo>[^@/\s,'\"]+)@")
_SECRET_FORMATS = {"password", "secret"}


def _hide_credentials(match: re.Match[str]) -> str:
    user, sep, _ = match.group("userinfo").partition(":")
    # user:password keeps the user (useful when debugging); a lone token is the secret itself.
    return f"{match.group('scheme')}{user}:{REDACTED}@" if sep else f"{match.group('scheme')}{REDACTED}@"


def secret_arguments(spec: Any) -> frozenset[str]:
    """Names of ``spec``'s arguments that hold secrets.

    An argument is secret when its input-schema property says ``"writeOnly": true``,
    ``"format": "password"`` or ``"x-secret": true``, or when its name looks like
    one (``token``, ``password``, ``api_key``, ...).
    """
    schema = getattr(spec, "input_schema", None) or {}
    properties = schema.get("properties") or {} if isinstance(schema, dict) else {}
    names = set()
    for name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        if (
            prop.get("writeOnly") is True
            or prop.get("x-secret") is True
            or prop.get("format") in _SECRET_FORMATS
            or _SECRET_KEY.search(name)
        ):
            names.add(name)
    return frozenset(names)


def redact_arguments(spec: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` fit for a log or an event: secret ones (see :func:`secret_arguments`) become ``***``."""
    hidden = secret_arguments(spec)
    return {name: REDACTED if name in hidden or _SECRET_KEY.search(name) else redact(value, name)
            for name, value in arguments.items()}


def redact_issues(spec: Any, arguments: dict[str, Any], issues: list[Any]) -> list[Any]:
    """Validation issues whose messages no longer quote the values of secret arguments."""
    values = [value for name, value in arguments.items()
              if (name in secret_arguments(spec) or _SECRET_KEY.search(name)) and isinstance(value, str) and value]
    if not values:
        return issues
    cleaned = []
    for issue in issues:
        message = issue.message
        for value in values:
            message = message.replace(value, REDACTED)
        cleaned.append(dataclasses.replace(issue, message=message))
    return cleaned


def hide_call_secrets(spec: Any, arguments: dict[str, Any]) -> None:
    """Keep the values of the secret arguments of the call being served out of every log line it causes.

    Set for the current task; a node serves each call in a task of its own, so
    the values are forgotten when the call ends.  A tool's exception that quotes
    its API key is logged with ``***`` in its place.
    """
    hidden, known = _argument_names(spec)
    values = tuple(
        value for name, value in arguments.items()
        if (name in hidden or (name not in known and _SECRET_KEY.search(name)))
        and isinstance(value, str) and len(value) >= 4
    )
    if values or _call_secrets.get():
        _call_secrets.set(values)


_names_by_schema: dict[int, tuple[Any, frozenset[str], frozenset[str]]] = {}
_NAMES_CACHE_SIZE = 4096  # tools reloaded for days must not grow it for ever


def _argument_names(spec: Any) -> tuple[frozenset[str], frozenset[str]]:
    # Once per input schema, not per call: (secret argument names, all declared names).
    # The schema itself is kept so its id cannot be reused by another object.
    schema = getattr(spec, "input_schema", None)
    cached = _names_by_schema.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1], cached[2]
    properties = schema.get("properties") or {} if isinstance(schema, dict) else {}
    names = (secret_arguments(spec), frozenset(properties))
    if len(_names_by_schema) >= _NAMES_CACHE_SIZE:
        _names_by_schema.clear()
    _names_by_schema[id(schema)] = (schema, *names)
    return names


_RESERVED = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


def register_secret(value: str) -> None:
    """Never write ``value`` to a log again (values shorter than 4 characters are ignored)."""
    if len(value) >= 4:
        _secrets.add(value)


def redact(value: Any, key: str = "") -> Any:
    """``value`` with registered secrets, secret-named fields and URL credentials replaced by ``***``."""
    if key and _SECRET_KEY.search(key):
        return REDACTED
    if isinstance(value, str):
        for secret in (*_secrets, *_call_secrets.get()):
            if secret in value:
                value = value.replace(secret, REDACTED)
        if "@" in value and "://" in value:
            value = _URL_CREDENTIALS.sub(_hide_credentials, value)
        return value
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    return value


class SecretRedactor(logging.Filter):
    """Redacts every record's message, arguments and extra fields."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _secrets or record.args or _call_secrets.get():
            record.msg = redact(record.getMessage())
            record.args = None
        for key in set(vars(record)) - _RESERVED:
            setattr(record, key, redact(getattr(record, key), key))
        return True


class RedactingFormatter(logging.Formatter):
    """Text lines whose exception tracebacks are redacted too (exception messages may quote secrets)."""

    def formatException(self, ei: Any) -> str:
        return redact(super().formatException(ei))


class JsonFormatter(RedactingFormatter):
    """One JSON object per line: time, level, logger, message, trace ids, extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            entry["trace_id"] = f"{context.trace_id:032x}"
            entry["span_id"] = f"{context.span_id:016x}"
        entry.update({key: value for key, value in vars(record).items() if key not in _RESERVED})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(log_format: str = "text", level: str = "INFO") -> logging.Handler:
    """Send toolmesh's logs to stderr in ``text`` or ``json`` format; returns the handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(SecretRedactor())
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("toolmesh")
    logger.handlers = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
    return handler


def redact_url(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced: ``nats://user:***@host``, ``nats://***@host``."""
    return _URL_CREDENTIALS.sub(_hide_credentials, text)
