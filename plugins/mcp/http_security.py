"""HTTP protection of ``toolmesh mcp serve --http``: Host/Origin checks, bearer tokens, resource metadata.

DNS-rebinding protection is the SDK's ``TransportSecuritySettings`` (Host and
Origin must be in the allowed lists); the bearer token is checked here, in
constant time, before any MCP message is read.  With a token set, the
OAuth protected-resource metadata document (RFC 9728) names this server so an
OAuth-aware client learns how it is protected.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["TOKEN_ENV", "BearerTokenMiddleware", "HttpSecurity", "is_loopback"]

TOKEN_ENV = "TOOLMESH_MCP_TOKEN"
"""Environment variable holding the bearer token clients must send (``--token`` wins)."""

METADATA_PATH = "/.well-known/oauth-protected-resource"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpSecurity:
    """What the HTTP gateway accepts: hosts, origins and an optional bearer token."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    allowed_hosts: tuple[str, ...] = field(default_factory=tuple)
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)

    def transport_settings(self) -> TransportSecuritySettings:
        """Host/Origin validation: loopback names always, plus the configured ones."""
        from mcp.server.transport_security import TransportSecuritySettings

        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
        origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
        if not is_loopback(self.host) and self.host not in ("0.0.0.0", "::"):
            hosts.append(f"{self.host}:*")
        hosts.extend(self.allowed_hosts)
        origins.extend(self.allowed_origins)
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )

    def resource_url(self) -> str:
        """The URL of the MCP endpoint, as named in the resource metadata."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"


class BearerTokenMiddleware:
    """Reject requests to the MCP endpoint without ``Authorization: Bearer <token>`` (401)."""

    def __init__(self, app: ASGIApp, security: HttpSecurity) -> None:
        self.app = app
        self.security = security
        self.expected = f"Bearer {security.token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == METADATA_PATH or scope["path"].startswith(METADATA_PATH + "/"):
            await self._metadata(send)
            return
        supplied = dict(scope["headers"]).get(b"authorization", b"")
        if hmac.compare_digest(supplied, self.expected):
            await self.app(scope, receive, send)
            return
        challenge = (
            f'Bearer error="invalid_token", resource_metadata="{self._metadata_url()}"'
            if supplied
            else f'Bearer resource_metadata="{self._metadata_url()}"'
        )
        body = b'{"error": "unauthorized", "error_description": "send Authorization: Bearer <token>"}'
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", challenge.encode()),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _metadata_url(self) -> str:
        return self.security.resource_url().removesuffix("/mcp") + METADATA_PATH

    async def _metadata(self, send: Send) -> None:
        body = json.dumps(
            {
                "resource": self.security.resource_url(),
                "bearer_methods_supported": ["header"],
                "authorization_servers": [],
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
