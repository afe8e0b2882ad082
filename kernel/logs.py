"""Process logging: text or JSON lines on stderr, correlated with traces, secrets redacted.

Every record carries the current ``trace_id``/``span_id`` when a span is
active.  Values registered with :func:`register_secret` (plugins register the
secrets they resolve) and values of fields whose name says they are secret
are replaced by ``***`` before anything is written.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any

from opentelemetry import trace

__all__ = ["JsonFormatter", "SecretRedactor", "configure_logging", "redact", "register_secret"]

REDACTED = "***"
_SECRET_KEY = re.compile(r"secret|token|password|passwd|authorization|api[_-]?key|credential", re.IGNORECASE)
_secrets: set[str] = set()
_RESERVED = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


def register_secret(value: str) -> None:
    """Never write ``value`` to a log again (values shorter than 4 characters are ignored)."""
    if len(value) >= 4:
        _secrets.add(value)


def redact(value: Any, key: str = "") -> Any:
    """``value`` with registered secrets and secret-named fields replaced by ``***``."""
    if key and _SECRET_KEY.search(key):
        return REDACTED
    if isinstance(value, str):
        for secret in _secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
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
