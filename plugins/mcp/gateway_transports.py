"""Run a ``Gateway`` over stdio or Streamable HTTP (uvicorn on one port, ``/mcp``)."""

from __future__ import annotations

import contextlib
import io
import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import suppress
from typing import Any, cast

import anyio
import anyio.abc
import uvicorn
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette
from starlette.types import ASGIApp

from .event_store import MemoryEventStore, SessionTagging
from .gateway import Gateway
from .http_security import BearerTokenMiddleware, HttpSecurity
from .session_admission import SessionAdmission, SessionLimits
from .stdio_messages import CheckedLines

__all__ = ["SHUTDOWN_GRACE", "http_app", "serve_http", "serve_stdio"]

SHUTDOWN_GRACE = 3
"""Seconds a stopping HTTP gateway waits for open sessions and connections before cutting them off."""

_log = logging.getLogger("toolmesh.mcp.gateway")


async def serve_stdio(gateway: Gateway) -> None:
    """Serve one MCP client on this process's stdin/stdout until it closes them.

    Malformed lines are answered with JSON-RPC errors (see ``stdio_messages``).
    """
    text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    lines = CheckedLines(anyio.wrap_file(text))
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(gateway.follow_catalog)
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                lines.attach(write_stream)
                await gateway.server.run(read_stream, write_stream, gateway.initialization_options())
            tg.cancel_scope.cancel()
    finally:
        with suppress(ValueError):
            text.detach()  # sys.stdin keeps its buffer: closing the wrapper must not close it


def _build_http_app(
    gateway: Gateway, security: HttpSecurity, limits: SessionLimits
) -> tuple[ASGIApp, SessionAdmission]:
    starlette: Starlette = gateway.server.streamable_http_app(
        transport_security=security.transport_settings(),
        host=security.host,
        event_store=MemoryEventStore(),
        retry_interval=1000,
        max_sessions=limits.max_sessions,
        # A backstop only: SessionAdmission ends idle and unused sessions first.
        session_idle_timeout=limits.idle_timeout + limits.unused_timeout,
    )
    admission = SessionAdmission(SessionTagging(starlette), limits)  # tagging keeps replays per session
    app: ASGIApp = admission
    if security.token:
        app = BearerTokenMiddleware(app, security)
    return app, admission


def http_app(gateway: Gateway, security: HttpSecurity, limits: SessionLimits | None = None) -> ASGIApp:
    """The ASGI app: ``/mcp`` (sessions via ``Mcp-Session-Id``, resumable SSE), guarded by ``security``.

    Sessions are admitted per client under ``limits``; expiring them needs
    :func:`serve_http`, which runs the expiry alongside the server.
    """
    return _build_http_app(gateway, security, limits or SessionLimits())[0]


class _Uvicorn(uvicorn.Server):
    """uvicorn leaving SIGINT/SIGTERM to ``serve_http``, which ends the sessions before the server stops."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_http(
    gateway: Gateway,
    security: HttpSecurity,
    *,
    limits: SessionLimits | None = None,
    ready: anyio.Event | None = None,
    log_level: str = "warning",
    stop_on_signals: bool = True,
) -> None:
    """Serve Streamable HTTP on ``security.host:security.port`` until cancelled (or SIGINT/SIGTERM).

    On a signal the gateway refuses new sessions, ends the open ones and
    stops; a second signal stops it without waiting for open connections.
    """
    app, admission = _build_http_app(gateway, security, limits or SessionLimits())
    config = uvicorn.Config(
        app,
        host=security.host,
        port=security.port,
        log_level=log_level,
        lifespan="on",
        access_log=False,
        proxy_headers=False,  # X-Forwarded-For from any local process would dodge the per-client limit
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )
    server = _Uvicorn(config)

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.02)
        if ready is not None:
            ready.set()

    async def stop_on_signal(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()
            async for _ in signals:
                if server.should_exit:
                    server.force_exit = True
                    continue
                with anyio.move_on_after(SHUTDOWN_GRACE):
                    await admission.close_all()
                server.should_exit = True

    async with anyio.create_task_group() as tg:
        if stop_on_signals:
            await tg.start(stop_on_signal)
        await tg.start(gateway.follow_catalog)
        await tg.start(admission.expire_sessions)
        tg.start_soon(announce)
        await server.serve()
        tg.cancel_scope.cancel()
