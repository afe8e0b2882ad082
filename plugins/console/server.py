"""Serve the console with uvicorn: ``toolmesh console`` and ``toolmesh up --console`` both end here."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import anyio
from toolmesh import ConfigError, Mesh, Settings

from .access import TOKEN_ENV, is_loopback
from .app import create_app

if TYPE_CHECKING:
    import uvicorn

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "TRACE_URL_ENV", "console_token", "serve_console"]

DEFAULT_HOST = "127.0.0.1"
"""The console listens on loopback unless told otherwise."""

DEFAULT_PORT = 8470
"""The console's default port."""

TRACE_URL_ENV = "TOOLMESH_CONSOLE_TRACE_URL"
"""Environment variable: the link to a call's trace (``{trace_id}`` replaced) if ``trace_url`` is None."""


def console_token(host: str, token: str | None) -> str | None:
    """The token to require (``token``, else ``TOOLMESH_CONSOLE_TOKEN``); raises ``ConfigError`` when
    ``host`` is not loopback and there is none."""
    token = token or os.environ.get(TOKEN_ENV) or None
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"the console would listen on {host}, beyond this machine, with no token: pass --token"
            f" (or set {TOKEN_ENV}) or listen on 127.0.0.1"
        )
    if token is not None and len(token) < 16:
        raise ConfigError(
            "the console token is shorter than 16 characters; use a long random one"
            " (e.g. python -c 'import secrets; print(secrets.token_urlsafe(24))')"
        )
    return token


async def serve_console(
    settings: Settings,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    trace_url: str | None = None,
    on_ready: Callable[[str], None] | None = None,
    handle_signals: bool = True,
) -> None:
    """Serve the console of the mesh of ``settings`` until cancelled; ``on_ready`` gets its URL.

    ``handle_signals=False`` leaves SIGINT and SIGTERM to the caller (``toolmesh up --console``
    drains its node on them); cancelling this function then stops the console gracefully.
    """
    import uvicorn

    token = console_token(host, token)
    trace_url = trace_url or os.environ.get(TRACE_URL_ENV) or None
    async with Mesh(settings=settings, name="toolmesh-console"):
        pass  # an unreachable or refusing mesh fails here, with the message that says what to do
    app = create_app(settings, token=token, host=host, trace_url=trace_url)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=2,
        proxy_headers=False,
    )
    server = _uvicorn_server(config, handle_signals)
    stopped = anyio.Event()

    async def run() -> None:
        try:
            with anyio.CancelScope(
                shield=True
            ):  # stopped through should_exit, so the lifespan closes the mesh
                await server.serve()
        finally:
            stopped.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        try:
            while not server.started:
                if stopped.is_set():
                    raise ConfigError(f"the console could not listen on {host}:{port} (see the log above)")
                await anyio.sleep(0.02)
            sockets = [sock for listener in server.servers for sock in listener.sockets]
            bound = sockets[0].getsockname()[1] if sockets else port
            shown = f"[{host}]" if ":" in host else host
            if on_ready is not None:
                on_ready(f"http://{shown}:{bound}/")
            await stopped.wait()
        finally:
            server.should_exit = True
            with anyio.move_on_after(SHUTDOWN_GRACE, shield=True):
                await stopped.wait()


SHUTDOWN_GRACE = 5.0
"""Seconds a stopping console waits for its open requests and live streams before it lets go."""


def _uvicorn_server(config: uvicorn.Config, handle_signals: bool) -> uvicorn.Server:
    import uvicorn

    if handle_signals:
        return uvicorn.Server(config)

    class EmbeddedServer(uvicorn.Server):
        """Leaves SIGINT and SIGTERM to the process it runs in."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return EmbeddedServer(config)
