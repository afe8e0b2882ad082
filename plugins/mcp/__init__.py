"""MCP for toolmesh: external MCP servers become mesh tools, and the mesh becomes an MCP server.

Installed through the ``toolmesh.plugins`` entry point::

    [project.entry-points."toolmesh.plugins"]
    mcp = "toolmesh.plugins.mcp"

Configure servers in ``toolmesh.toml`` (``[mcp.servers.NAME]``, see
``docs/mcp.md``); serve the mesh with ``toolmesh mcp serve --stdio`` or
``--http HOST:PORT``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolmesh import lazy_exports

if TYPE_CHECKING:  # the names below load on first use (PEP 562): `toolmesh --help` imports this package
    from .hooks import (
        toolmesh_cli,
        toolmesh_discover_tools,
        toolmesh_execute_tool,
        toolmesh_shutdown,
        toolmesh_startup,
    )
    from .server_config import ServerConfig, load_server_configs
    from .tool_names import SOURCE, mesh_tool_name

_MODULE_OF = {
    **dict.fromkeys(
        (
            "toolmesh_cli",
            "toolmesh_discover_tools",
            "toolmesh_execute_tool",
            "toolmesh_shutdown",
            "toolmesh_startup",
        ),
        "hooks",
    ),
    **dict.fromkeys(("ServerConfig", "load_server_configs"), "server_config"),
    **dict.fromkeys(("SOURCE", "mesh_tool_name"), "tool_names"),
}


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, load_on_dir=True)  # pluggy reads dir()


__all__ = [
    "SOURCE",
    "ServerConfig",
    "load_server_configs",
    "mesh_tool_name",
    "toolmesh_cli",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
    "toolmesh_shutdown",
    "toolmesh_startup",
]
