"""The hook implementations of the ``mcp`` plugin (registered through ``toolmesh.plugins.mcp``).

The MCP SDK is imported only by a kernel that has servers configured, so
loading the plugin costs every other ``toolmesh`` command nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from toolmesh import CallContext, ConfigError, Kernel, ToolUnavailable, hookimpl
from toolmesh.contracts import ToolResult, ToolSpec

from .server_config import load_server_configs
from .tool_names import SOURCE

if TYPE_CHECKING:
    import typer

    from .remote_catalog import RemoteCatalog

STATE_KEY = "mcp"
"""Key of this plugin's state in ``Kernel.plugin_state``."""

__all__ = [
    "toolmesh_cli",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
    "toolmesh_shutdown",
    "toolmesh_startup",
]


@hookimpl
async def toolmesh_startup(kernel: Kernel) -> None:
    """Read ``[mcp.servers.*]`` and start connecting to every server."""
    configs = load_server_configs(kernel.settings.plugins.get("mcp", {}) or {})
    if not configs:
        return
    try:
        from .remote_catalog import RemoteCatalog
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"toolmesh.toml configures MCP servers ({', '.join(config.name for config in configs)}) but the MCP SDK"
            f" is missing ({exc}); install it with: pip install 'toolmesh[mcp]'"
        ) from exc

    catalog = RemoteCatalog(kernel, configs)
    kernel.plugin_state[STATE_KEY] = catalog
    await catalog.start()


@hookimpl
async def toolmesh_shutdown(kernel: Kernel) -> None:
    """Close every MCP session and stop stdio server processes."""
    catalog = kernel.plugin_state.pop(STATE_KEY, None)
    if catalog is not None:
        await catalog.stop()


@hookimpl
def toolmesh_discover_tools(kernel: Kernel, sources: list[str]) -> Awaitable[list[ToolSpec]] | None:
    """The tools of the configured MCP servers, named ``SERVER_TOOL``."""
    catalog: RemoteCatalog | None = kernel.plugin_state.get(STATE_KEY)
    return catalog.specs() if catalog is not None else None


@hookimpl
def toolmesh_execute_tool(
    spec: ToolSpec, arguments: dict[str, Any], context: CallContext
) -> Awaitable[ToolResult] | None:
    """Call the remote tool behind ``spec`` (only for ``source == "mcp"``)."""
    if spec.source != SOURCE:
        return None
    return _execute(spec, arguments, context)


async def _execute(spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> ToolResult:
    catalog: RemoteCatalog | None = context.kernel.plugin_state.get(STATE_KEY)
    found = catalog.server_of(spec) if catalog is not None else None
    if found is None:
        raise ToolUnavailable(f"tool {spec.name!r} belongs to an MCP server this node no longer knows")
    server, remote = found
    return await server.call(remote, arguments, context)


@hookimpl
def toolmesh_cli(app: typer.Typer) -> None:
    """Add ``toolmesh mcp serve`` and ``toolmesh mcp add``."""
    from .cli import mcp_app

    app.add_typer(mcp_app, name="mcp")
