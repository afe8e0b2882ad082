"""Process logging: text or JSON lines on stderr, correlated with traces, secrets redacted.

Every record carries the current ``trace_id``/``span_id`` when a span is
active.  Values registered with :func:`register_secret` (plugins register the
secrets they resolve) and values of fields whose name says they are secret
are replaced by ``***`` before anything is written.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import sys
import time
from typing import Any

from opentelemetry import trace

__all__ = [
    "JsonFormatter",
    "SecretRedactor",
    "configure_logging",
    "redact",
    "redact_arguments",
    "redact_issues",
    "register_secret",
    "secret_arguments",
]

REDACTED = "***"
_SECRET_KEY = re.compile(r"secret|token|password|passwd|authorization|api[_-]?key|credential", re.IGNORECASE)
_secrets: set[str] = set()
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
        for secret in _secrets:
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
        if _secrets or record.args:
            record.msg = redact(record.getMessage())
            record.args = None
        for key in set(vars(record)) - _RESERVED:
            setattr(record, key, redact(getattr(record, key), key))
        return True


class JsonFormatter(logging.Formatter):
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
            entry["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(entry, default=str)


def configure_logging(log_format: str = "text", level: str = "INFO") -> logging.Handler:
    """Send toolmesh's logs to stderr in ``text`` or ``json`` format; returns the handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(SecretRedactor())
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("toolmesh")
    logger.handlers = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
    return handler
