"""``toolmesh mcp``: serve the mesh over MCP, and add MCP servers to ``toolmesh.toml``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from toolmesh import NatsOption, PrefixOption, cli_error

if TYPE_CHECKING:
    from .http_security import HttpSecurity
    from .session_admission import SessionLimits

__all__ = ["mcp_app", "parse_listen_address"]

# The names and defaults of toolmesh.plugins.mcp.http_security and .session_admission (a test keeps them
# equal), written out so that `toolmesh --help`, which imports this module, imports neither.
TOKEN_ENV = "TOOLMESH_MCP_TOKEN"
DEFAULT_MAX_SESSIONS = 2000
DEFAULT_MAX_CLIENT_SESSIONS = 100
DEFAULT_UNUSED_TIMEOUT = 30.0
DEFAULT_IDLE_TIMEOUT = 1800.0

mcp_app = typer.Typer(
    name="mcp",
    help="MCP: serve the mesh to MCP clients, connect MCP servers to the mesh.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def parse_listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT`` or ``PORT`` (loopback) → (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", text
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"--http {text!r} is not HOST:PORT (e.g. 127.0.0.1:8765)")
    return host, int(port)


@mcp_app.command()
def serve(
    stdio: Annotated[bool, typer.Option("--stdio", help="Serve one client on stdin/stdout.")] = False,
    http: Annotated[
        str | None,
        typer.Option("--http", metavar="HOST:PORT", help="Serve Streamable HTTP at http://HOST:PORT/mcp."),
    ] = None,
    nats_url: NatsOption = None,
    prefix: PrefixOption = None,
    token: Annotated[
        str | None, typer.Option("--token", envvar=TOKEN_ENV, help="Bearer token HTTP clients must send.")
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option("--allow-origin", help="Extra allowed Origin (e.g. https://app.example)."),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="Extra allowed Host header (e.g. mcp.example:443)."),
    ] = None,
    insecure: Annotated[
        bool, typer.Option("--insecure", help="Allow a non-loopback bind without --token.")
    ] = False,
    page_size: Annotated[int, typer.Option("--page-size", help="Tools per tools/list page.")] = 1000,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Deadline of each tool call in seconds.")
    ] = None,
    max_sessions: Annotated[
        int,
        typer.Option(
            "--max-sessions", envvar="TOOLMESH_MCP_MAX_SESSIONS", help="HTTP: open sessions in all at most."
        ),
    ] = DEFAULT_MAX_SESSIONS,
    max_client_sessions: Annotated[
        int,
        typer.Option(
            "--max-client-sessions",
            envvar="TOOLMESH_MCP_MAX_CLIENT_SESSIONS",
            help="HTTP: open sessions per client (remote address and credential) at most; beyond: 429.",
        ),
    ] = DEFAULT_MAX_CLIENT_SESSIONS,
    session_unused_timeout: Annotated[
        float,
        typer.Option(
            "--session-unused-timeout",
            envvar="TOOLMESH_MCP_SESSION_UNUSED_TIMEOUT",
            help="HTTP: end a session that sent no request this many seconds after initialize.",
        ),
    ] = DEFAULT_UNUSED_TIMEOUT,
    session_idle_timeout: Annotated[
        float,
        typer.Option(
            "--session-idle-timeout",
            envvar="TOOLMESH_MCP_SESSION_IDLE_TIMEOUT",
            help="HTTP: end a session with no request in flight for this many seconds.",
        ),
    ] = DEFAULT_IDLE_TIMEOUT,
    proxy_servers: Annotated[
        bool,
        typer.Option(
            "--proxy/--no-proxy",
            help="Serve the resources, prompts and completions of the MCP servers in toolmesh.toml.",
        ),
    ] = True,
) -> None:
    """Expose every tool of the mesh as one MCP server (stdio or Streamable HTTP)."""
    import importlib.util
    import logging
    import sys

    import anyio
    from toolmesh import Mesh, ToolmeshError, load_settings

    from .http_security import HttpSecurity, is_loopback
    from .server_config import load_server_configs
    from .session_admission import SessionLimits

    if stdio == (http is not None):
        raise cli_error("give exactly one of --stdio or --http HOST:PORT")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
    try:
        settings = load_settings({"nats_url": nats_url, "prefix": prefix})
        configs = load_server_configs(settings.plugins.get("mcp", {}) or {}) if proxy_servers else []
    except ToolmeshError as exc:
        raise cli_error(str(exc)) from None
    security: HttpSecurity | None = None
    limits: SessionLimits | None = None
    if http is not None:
        try:
            host, port = parse_listen_address(http)
        except ValueError as exc:
            raise cli_error(str(exc)) from None
        if not is_loopback(host) and not token and not insecure:
            raise cli_error(
                f"refusing to serve {host}:{port} without authentication: set --token (or {TOKEN_ENV}),"
                " bind to 127.0.0.1, or pass --insecure"
            )
        security = HttpSecurity(
            host=host,
            port=port,
            token=token,
            allowed_hosts=tuple(allow_host or ()),
            allowed_origins=tuple(allow_origin or ()),
        )
        try:
            limits = SessionLimits(
                max_sessions=max_sessions,
                max_client_sessions=max_client_sessions,
                unused_timeout=session_unused_timeout,
                idle_timeout=session_idle_timeout,
            )
        except ToolmeshError as exc:
            raise cli_error(str(exc)) from None

    try:
        from . import gateway_transports
        from .gateway import Gateway
        from .resource_proxy import ResourceProxy
    except ModuleNotFoundError as exc:
        raise cli_error(f"the MCP SDK is missing ({exc}); install it with: pip install 'toolmesh[mcp]'") from None

    async def run() -> None:
        from toolmesh import __version__

        proxy = ResourceProxy(configs)
        proxy.start()
        try:
            async with Mesh(settings=settings, name="toolmesh-mcp-gateway") as mesh:
                gateway = Gateway(
                    mesh, version=__version__, page_size=page_size, call_timeout=timeout, proxy=proxy
                )
                if security is None:
                    await gateway_transports.serve_stdio(gateway)
                    return
                ready = anyio.Event()

                async def announce() -> None:
                    await ready.wait()
                    typer.echo(f"toolmesh MCP gateway on {security.resource_url()}", err=True)

                async with anyio.create_task_group() as tg:
                    tg.start_soon(announce)
                    await gateway_transports.serve_http(gateway, security, limits=limits, ready=ready)
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await proxy.stop()

    try:
        # uvloop when installed (no wheels on Windows), decided before the gateway runs
        anyio.run(run, backend_options={"use_uvloop": importlib.util.find_spec("uvloop") is not None})
    except ToolmeshError as exc:
        raise cli_error(str(exc), 1) from None
    except KeyboardInterrupt:
        pass


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{json.dumps(key)} = {_toml_value(item)}" for key, item in value.items()) + " }"
        )
    return json.dumps(value)


def _pairs(items: list[str] | None, option: str) -> dict[str, str]:
    pairs = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise cli_error(f"{option} {item!r} is not KEY=VALUE")
        pairs[key] = value
    return pairs


@mcp_app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Server name; its tools become NAME_TOOL.")],
    url: Annotated[str | None, typer.Option("--url", help="Streamable HTTP endpoint of the server.")] = None,
    header: Annotated[
        list[str] | None, typer.Option("--header", help="HTTP header KEY=VALUE (repeatable).")
    ] = None,
    env: Annotated[
        list[str] | None, typer.Option("--env", help="Environment KEY=VALUE for a stdio server.")
    ] = None,
    mode: Annotated[str, typer.Option("--mode", help="native (persistent session) or on-demand.")] = "native",
    config: Annotated[
        Path | None,
        typer.Option("--config", help="File to write [default: $TOOLMESH_CONFIG or ./toolmesh.toml]"),
    ] = None,
) -> None:
    """Add an MCP server to toolmesh.toml: ``toolmesh mcp add NAME -- COMMAND ARGS...`` or ``--url URL``."""
    from toolmesh import ConfigError, load_settings

    from .server_config import MODES, load_server_configs

    command = list(ctx.args)
    if bool(command) == bool(url):
        raise cli_error(
            "give a command after '--' (stdio server) or --url URL (Streamable HTTP server), not both"
        )
    if mode not in MODES:
        raise cli_error(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    path = config or Path(os.environ.get("TOOLMESH_CONFIG", "toolmesh.toml"))
    table: dict[str, Any] = {}
    if command:
        table["command"] = command[0]
        table["args"] = command[1:]
        if env:
            table["env"] = _pairs(env, "--env")
    else:
        table["url"] = url
        if header:
            table["headers"] = _pairs(header, "--header")
    if mode != "native":
        table["mode"] = mode
    try:
        existing = load_settings(env={}, config_file=path) if path.is_file() else None
        if existing is not None and name in (existing.plugins.get("mcp", {}) or {}).get("servers", {}):
            raise cli_error(f"{path} already has [mcp.servers.{name}]; edit or remove it first")
        load_server_configs({"servers": {name: table}})
    except ConfigError as exc:
        raise cli_error(str(exc)) from None
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    block = f"[mcp.servers.{name}]\n" + "".join(
        f"{key} = {_toml_value(value)}\n" for key, value in table.items()
    )
    separator = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    path.write_text(text + separator + block, encoding="utf-8")
    try:
        load_settings(env={}, config_file=path)
    except ConfigError as exc:  # pragma: no cover - we wrote valid TOML
        raise cli_error(f"{path} is no longer valid after the edit: {exc}") from None
    typer.echo(f"added MCP server {name!r} to {path}", err=True)
