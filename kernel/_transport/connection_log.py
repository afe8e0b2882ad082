"""``ConnectionLog``: one clear log line per change of a node's NATS connection.

nats.py reports a lost connection, a reconnect and asynchronous errors through
callbacks and, by default, prints errors to stderr or nowhere. A node logs:

* ``lost the NATS connection to URL`` when the link drops (a broker restart, a
  slow-consumer cut by the server, a network fault);
* ``reconnected to NATS at URL (down N s)`` when it is back;
* each distinct asynchronous error (``Slow Consumer``, a stale connection, a
  refused publish) at most once per :data:`REPEAT_AFTER` seconds — a client-side
  slow consumer reports every dropped message, which must not flood the log.

Failed attempts while reconnecting are logged at debug level only: the
disconnect line already said the link is down.
"""

from __future__ import annotations

import logging
import time

import nats.errors
from toolmesh._telemetry.logs import redact_url

__all__ = ["REPEAT_AFTER", "ConnectionLog"]

REPEAT_AFTER = 5.0
"""Seconds before the same asynchronous NATS error is logged again."""

_log = logging.getLogger("toolmesh.connection")


class ConnectionLog:
    """Log the connection events of one node (pass its methods as nats.py callbacks)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.url = ""
        self.disconnects = 0
        self.reconnects = 0
        self._down_since: float | None = None
        self._logged: dict[str, float] = {}

    def disconnected(self, *, closing: bool) -> None:
        """The link dropped (``closing``: the node closes it itself, which is not news)."""
        if closing or self._down_since is not None:
            return
        self._down_since = time.monotonic()
        self.disconnects += 1
        _log.warning(
            "node %s lost the NATS connection to %s (broker stopped, network fault, or cut off by the server as a"
            " slow consumer: see the server log); reconnecting", self.name, redact_url(self.url),
        )

    def reconnected(self) -> None:
        """The link is back."""
        down = time.monotonic() - self._down_since if self._down_since is not None else 0.0
        self._down_since = None
        self.reconnects += 1
        _log.warning("node %s reconnected to NATS at %s (down %.1f s)", self.name, redact_url(self.url), down)

    def error(self, exc: Exception) -> None:
        """An asynchronous error nats.py reported."""
        if self._down_since is not None and not isinstance(exc, nats.errors.AuthorizationError):
            _log.debug("reconnect attempt failed: %r", exc)
            return
        text = f"{type(exc).__name__}: {exc or 'no detail'}"
        now = time.monotonic()
        if now - self._logged.get(text, -REPEAT_AFTER) < REPEAT_AFTER:
            return
        if len(self._logged) > 256:  # error texts name subjects: keep the memory bounded
            self._logged.clear()
        self._logged[text] = now
        _log.warning("node %s: NATS reported %s", self.name, redact_url(text))
