"""Run a ``Gateway`` over stdio or Streamable HTTP (uvicorn on one port, ``/mcp``)."""

from __future__ import annotations

import logging

import anyio
import uvicorn
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette
from starlette.types import ASGIApp

from .event_store import MemoryEventStore, SessionTagging
from .gateway import Gateway
from .http_security import BearerTokenMiddleware, HttpSecurity

__all__ = ["http_app", "serve_http", "serve_stdio"]

_log = logging.getLogger("toolmesh.mcp.gateway")


async def serve_stdio(gateway: Gateway) -> None:
    """Serve one MCP client on this process's stdin/stdout until it closes them."""
    async with anyio.create_task_group() as tg:
        await tg.start(gateway.follow_catalog)
        async with stdio_server() as (read_stream, write_stream):
            await gateway.server.run(read_stream, write_stream, gateway.initialization_options())
        tg.cancel_scope.cancel()


def http_app(gateway: Gateway, security: HttpSecurity) -> ASGIApp:
    """The ASGI app: ``/mcp`` (sessions via ``Mcp-Session-Id``, resumable SSE), guarded by ``security``."""
    starlette: Starlette = gateway.server.streamable_http_app(
        transport_security=security.transport_settings(),
        host=security.host,
        event_store=MemoryEventStore(),
        retry_interval=1000,
    )
    app: ASGIApp = SessionTagging(starlette)  # keeps each session's replayed events its own
    if security.token:
        return BearerTokenMiddleware(app, security)
    return app


async def serve_http(
    gateway: Gateway, security: HttpSecurity, *, ready: anyio.Event | None = None, log_level: str = "warning"
) -> None:
    """Serve Streamable HTTP on ``security.host:security.port`` until cancelled."""
    config = uvicorn.Config(
        http_app(gateway, security),
        host=security.host,
        port=security.port,
        log_level=log_level,
        lifespan="on",
        access_log=False,
    )
    server = uvicorn.Server(config)

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.02)
        if ready is not None:
            ready.set()

    async with anyio.create_task_group() as tg:
        await tg.start(gateway.follow_catalog)
        tg.start_soon(announce)
        await server.serve()
        tg.cancel_scope.cancel()
