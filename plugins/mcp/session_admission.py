"""``SessionAdmission``: how many Streamable HTTP sessions each client may hold, and for how long.

Every MCP session costs the gateway memory and a server task, and the SDK
caps only their total, so one client that keeps sending ``initialize`` could
take every slot and lock everyone else out.  This ASGI layer, in front of the
SDK's session manager, admits a new session only while its client holds fewer
than ``max_client_sessions`` (HTTP 429 with ``Retry-After`` beyond that) and
the gateway fewer than ``max_sessions`` (HTTP 503).  A client is its remote
address (IPv6 addresses by their /64 network) together with the credential it
presents, if any.

It follows each session from the response that opened it: a session that has
answered no request (only notifications, or a bare event stream) within
``unused_timeout`` seconds of its opening, or that has had no HTTP request in
flight for ``idle_timeout`` seconds, is ended with the protocol's own
``DELETE``, after which its id answers 404 and the client initializes again.
:meth:`SessionAdmission.close_all` ends every session the same way when the
gateway stops, so shutdown does not wait for their streams.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from toolmesh import ConfigError

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_CLIENT_SESSIONS",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_UNUSED_TIMEOUT",
    "SESSION_LIMIT_ERROR",
    "SessionAdmission",
    "SessionLimits",
    "client_key",
]

DEFAULT_MAX_SESSIONS = 2000
"""Open sessions the gateway holds at most (about 40 KB of memory each)."""

DEFAULT_MAX_CLIENT_SESSIONS = 100
"""Open sessions one client (address plus credential) holds at most."""

DEFAULT_UNUSED_TIMEOUT = 30.0
"""Seconds a session may stay without its first request after ``initialize``."""

DEFAULT_IDLE_TIMEOUT = 1800.0
"""Seconds a session may stay with no HTTP request in flight (an open event stream counts as one)."""

SESSION_LIMIT_ERROR = -32010
"""JSON-RPC error code of a refused session (in the implementation-defined range -32000..-32019)."""

_MAX_REFUSED_BODY = 64 * 1024
_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"
_log = logging.getLogger("toolmesh.mcp.gateway")


@dataclass(frozen=True)
class SessionLimits:
    """How many sessions the HTTP gateway keeps, per client and in all, and when it ends them."""

    max_sessions: int = DEFAULT_MAX_SESSIONS
    max_client_sessions: int = DEFAULT_MAX_CLIENT_SESSIONS
    unused_timeout: float = DEFAULT_UNUSED_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT

    def __post_init__(self) -> None:
        for name, flag in (
            ("max_sessions", "--max-sessions"),
            ("max_client_sessions", "--max-client-sessions"),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"MCP gateway {name} ({flag}) must be a whole number ≥ 1, got {value!r}")
        for name, flag in (
            ("unused_timeout", "--session-unused-timeout"),
            ("idle_timeout", "--session-idle-timeout"),
        ):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ConfigError(
                    f"MCP gateway session {name} ({flag}) must be a positive number of seconds, got {value!r}"
                )


def client_key(scope: Scope) -> str:
    """Who opens a session: the remote address (an IPv6 address by its /64) plus a digest of any credential."""
    client = scope.get("client")
    address = str(client[0]) if client else "unknown"
    try:
        ip = ipaddress.ip_address(address)
        if ip.version == 6 and ip.ipv4_mapped is None:
            address = str(ipaddress.ip_network(f"{ip}/64", strict=False))
    except ValueError:
        pass
    credential = _header(scope, b"authorization")
    if credential:
        return f"{address} credential {hashlib.sha256(credential).hexdigest()[:16]}"
    return address


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


@dataclass(slots=True)
class _Session:
    client: str
    host: bytes
    opened: float
    last_active: float
    used: bool = False
    in_flight: int = 0
    posting: int = 0


class SessionAdmission:
    """ASGI wrapper admitting, following and ending the MCP sessions of ``app`` (see the module docstring)."""

    def __init__(self, app: ASGIApp, limits: SessionLimits, *, path: str = "/mcp") -> None:
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # the SDK loads only when serving

        self._handshake_versions = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
        self.app = app
        self.limits = limits
        self.path = path
        self.refused = 0
        """How many session openings were refused."""
        self.expired = 0
        """How many sessions were ended for being unused or idle."""
        self._sessions: dict[str, _Session] = {}
        self._per_client: Counter[str] = Counter()  # open sessions plus openings in progress
        self._client_sessions: dict[str, set[str]] = {}
        # Retry-After for a full gateway, as (when computed, seconds): scanning every session is costly.
        self._any_retry: tuple[float, int] = (-math.inf, 0)
        self._opening = 0
        self._closing = False

    @property
    def open_sessions(self) -> int:
        """Sessions open now (opening ones not counted)."""
        return len(self._sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is not None:
            await self._serve_session(session_id.decode("latin-1"), scope, receive, send)
            return
        version = _header(scope, _VERSION_HEADER)
        if version is not None and version.decode("latin-1") not in self._handshake_versions:
            await self.app(scope, receive, send)  # the stateless 2026 protocol opens no session
            return
        await self._open_session(scope, receive, send)

    # ------------------------------------------------------------------ admission

    async def _open_session(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = client_key(scope)
        if self._closing:
            await self._refuse(
                503, "the MCP gateway is shutting down; try another instance", 1, scope, receive, send
            )
            return
        if self._per_client[client] >= self.limits.max_client_sessions:
            retry = self._retry_after(client)
            message = (
                f"client {client} already holds {self.limits.max_client_sessions} open MCP sessions (the limit"
                f" per client); end unused ones with DELETE, or retry after {retry} s"
            )
            await self._refuse(429, message, retry, scope, receive, send)
            return
        if len(self._sessions) + self._opening >= self.limits.max_sessions:
            retry = self._retry_after(None)
            message = f"Too many open sessions ({self.limits.max_sessions} in all); retry after {retry} s"
            await self._refuse(503, message, retry, scope, receive, send)
            return
        host = _header(scope, b"host") or b"127.0.0.1"
        self._per_client[client] += 1
        self._opening += 1
        opening = True

        async def learn_the_session(message: Message) -> None:
            nonlocal opening
            if opening and message["type"] == "http.response.start" and message["status"] < 400:
                for name, value in message.get("headers", ()):
                    if name.lower() == _SESSION_HEADER:
                        now = time.monotonic()
                        session_id = bytes(value).decode("latin-1")
                        self._sessions[session_id] = _Session(client, host, now, now)
                        self._client_sessions.setdefault(client, set()).add(session_id)
                        self._opening -= 1  # counted as open from now on
                        opening = False
            await send(message)

        try:
            await self.app(scope, receive, learn_the_session)
        finally:
            if opening:
                self._opening -= 1
                self._release(client)

    def _release(self, client: str) -> None:
        self._per_client[client] -= 1
        if self._per_client[client] <= 0:
            del self._per_client[client]

    def _retry_after(self, client: str | None) -> int:
        """Seconds until one of ``client``'s sessions (any session for ``None``) may expire, at least 1."""
        now = time.monotonic()
        if client is None:
            when, seconds = self._any_retry
            if now - when < 1.0:
                return seconds
            sessions = list(self._sessions.values())
        else:
            sessions = [self._sessions[session_id] for session_id in self._client_sessions.get(client, ())]
        soonest = math.inf
        for session in sessions:
            if not session.used and not session.posting:
                soonest = min(soonest, session.opened + self.limits.unused_timeout - now)
            elif not session.in_flight:
                soonest = min(soonest, session.last_active + self.limits.idle_timeout - now)
        if soonest == math.inf:
            soonest = self.limits.unused_timeout
        seconds = max(1, math.ceil(soonest))
        if client is None:
            self._any_retry = (now, seconds)
        return seconds

    async def _refuse(
        self, status: int, message: str, retry_after: int, scope: Scope, receive: Receive, send: Send
    ) -> None:
        self.refused += 1
        if self.refused == 1 or self.refused % 1000 == 0:
            _log.warning("refused MCP session (%d so far): %s", self.refused, message)
        error = {"code": SESSION_LIMIT_ERROR, "message": message, "data": {"retryAfter": retry_after}}
        body = json.dumps({"jsonrpc": "2.0", "id": await _request_id(receive), "error": error}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", str(retry_after).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    # ------------------------------------------------------------------ open sessions

    async def _serve_session(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            await self.app(scope, receive, send)  # unknown or ended: the SDK answers 404
            return
        method = scope["method"]
        status: int | None = None
        session.in_flight += 1
        session.posting += method == "POST"

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if method == "POST" and status == 200:  # a request was answered (notifications get 202)
                    session.used = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            session.in_flight -= 1
            session.posting -= method == "POST"
            session.last_active = time.monotonic()
            if status == 404 or (method == "DELETE" and status is not None and status < 300):
                self._forget(session_id)

    def _forget(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._release(session.client)
            mine = self._client_sessions.get(session.client)
            if mine is not None:
                mine.discard(session_id)
                if not mine:
                    del self._client_sessions[session.client]

    def _expired(self, now: float) -> list[str]:
        limits = self.limits
        return [
            session_id
            for session_id, session in self._sessions.items()
            if (not session.used and not session.posting and now - session.opened > limits.unused_timeout)
            or (not session.in_flight and now - session.last_active > limits.idle_timeout)
        ]

    async def expire_sessions(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """End unused and idle sessions as they expire, until cancelled."""
        interval = min(max(min(self.limits.unused_timeout, self.limits.idle_timeout) / 4, 0.1), 5.0)
        task_status.started()
        while True:
            await anyio.sleep(interval)
            for session_id in self._expired(time.monotonic()):
                session = self._sessions.get(session_id)
                if session is not None:
                    _log.info("ending %s MCP session %s", "idle" if session.used else "unused", session_id)
                    self.expired += 1
                    await self._end(session_id, session)

    async def close_all(self) -> None:
        """Refuse new sessions and end every open one (the gateway is stopping)."""
        self._closing = True
        for session_id, session in list(self._sessions.items()):
            await self._end(session_id, session)

    async def _end(self, session_id: str, session: _Session) -> None:
        """End a session the way a client does, with ``DELETE`` (the SDK then forgets it and stops its task)."""
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": self.path,
            "raw_path": self.path.encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [(b"host", session.host), (_SESSION_HEADER, session_id.encode("latin-1"))],
            "client": None,
            "server": None,
            "state": {},
        }
        requested = False

        async def receive() -> Message:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def discard(message: Message) -> None:
            return None

        try:
            await self.app(scope, receive, discard)
        except Exception as exc:  # noqa: BLE001 - isolation boundary around the MCP SDK ending a session
            _log.warning("ending MCP session %s failed: %s", session_id, exc)
        finally:
            self._forget(session_id)


async def _request_id(receive: Receive) -> str | int | None:
    """The JSON-RPC id of a refused request, when its (small) body names one."""
    body = b""
    while len(body) <= _MAX_REFUSED_BODY:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    else:
        return None
    try:
        request = json.loads(body)
    except ValueError:
        return None
    request_id = request.get("id") if isinstance(request, dict) else None
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return request_id
    return None
