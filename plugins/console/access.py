"""Who may use the console: the token, cross-site request protection, and the headers every answer carries.

- With a token, every request (pages, assets, the live stream, the API) must present it:
  ``Authorization: Bearer <token>``, or the session cookie set when a page is opened once
  as ``/?token=<token>`` (the token then leaves the address bar at once).
- State-changing requests (anything but GET/HEAD) must carry the page's CSRF token in the
  ``X-Console-CSRF`` header and, when the browser sends one, an ``Origin`` of the console itself;
  a page of another site can read neither the token nor the answer.
- Without a token the console listens on loopback only and answers only requests addressed
  to a loopback name (no DNS rebinding of a page onto it).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

__all__ = ["CSRF_HEADER", "SESSION_COOKIE", "TOKEN_ENV", "ConsoleAccess", "is_loopback"]

TOKEN_ENV = "TOOLMESH_CONSOLE_TOKEN"
"""Environment variable holding the console's token when ``--token`` is not given."""

SESSION_COOKIE = "toolmesh_console"
"""The cookie that carries a browser's proof of the token after its first visit."""

CSRF_HEADER = "x-console-csrf"
"""Header every state-changing request must carry, with the token the page was rendered with."""

_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}
_SAFE_METHODS = {"GET", "HEAD"}
_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' data:;"
    " connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_SECURITY_HEADERS = [
    (b"content-security-policy", _CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """True for a loopback address or ``localhost``."""
    if host.strip("[]") in _LOOPBACK_NAMES or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


class ConsoleAccess:
    """ASGI middleware enforcing the rules of this module's docstring around ``app``."""

    def __init__(self, app: ASGIApp, *, token: str | None, bind_host: str) -> None:
        self.app = app
        self.token = token
        self.bind_host = bind_host
        self.csrf_token = secrets.token_urlsafe(32)
        self._session = (
            hmac.new(token.encode(), b"toolmesh-console-session", hashlib.sha256).hexdigest()
            if token
            else None
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        if not self._host_allowed(headers.get("host", "")):
            await _plain(send, 421, "this console answers only requests addressed to its loopback name")
            return
        if self.token is not None:
            verdict = self._authenticate(scope, headers)
            if verdict == "login":
                await self._login(scope, send)
                return
            if verdict != "ok":
                await _plain(
                    send,
                    401,
                    "a console token is required: open the page as /?token=<token>"
                    " or send 'Authorization: Bearer <token>'",
                )
                return
        if scope["method"] not in _SAFE_METHODS and not self._same_site(headers):
            await _plain(
                send, 403, "cross-site request refused: state-changing requests need the page's CSRF token"
            )
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

    def _host_allowed(self, host_header: str) -> bool:
        if self.token is not None or not is_loopback(self.bind_host):
            return True  # the token guards a console reachable by other names
        return is_loopback(_host_name(host_header))

    def _authenticate(self, scope: Scope, headers: dict[str, str]) -> str:
        assert self.token is not None and self._session is not None
        authorization = headers.get("authorization", "")
        if authorization.lower().startswith("bearer ") and hmac.compare_digest(
            authorization[7:].strip().encode(), self.token.encode()
        ):
            return "ok"
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 - junk cookies raise CookieError and others: absent
            cookie = SimpleCookie()
        session = cookie.get(SESSION_COOKIE)
        if session is not None and hmac.compare_digest(session.value.encode(), self._session.encode()):
            return "ok"
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        offered = query.get("token")
        if (
            offered is not None
            and scope["method"] in _SAFE_METHODS
            and hmac.compare_digest(offered.encode(), self.token.encode())
        ):
            return "login"
        return "refused"

    async def _login(self, scope: Scope, send: Send) -> None:
        assert self._session is not None
        query = [
            (key, value)
            for key, value in parse_qsl(scope.get("query_string", b"").decode("latin-1"))
            if key != "token"
        ]
        location = scope.get("root_path", "") + scope["path"] + (f"?{urlencode(query)}" if query else "")
        cookie = f"{SESSION_COOKIE}={self._session}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode()),
                    (b"set-cookie", cookie.encode()),
                    *_SECURITY_HEADERS,
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    def _same_site(self, headers: dict[str, str]) -> bool:
        offered = headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(offered.encode(), self.csrf_token.encode()):
            return False
        origin = headers.get("origin")
        if origin is None:  # same-origin GETs and some older browsers send none; the CSRF token decides
            return True
        host = headers.get("host", "")
        return origin in (f"http://{host}", f"https://{host}")


async def _plain(send: Send, status: int, message: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                *_SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": (message + "\n").encode()})
