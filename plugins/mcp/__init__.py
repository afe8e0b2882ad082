"""MCP for toolmesh: external MCP servers become mesh tools, and the mesh becomes an MCP server.

Installed through the ``toolmesh.plugins`` entry point::

    [project.entry-points."toolmesh.plugins"]
    mcp = "toolmesh.plugins.mcp"

Configure servers in ``toolmesh.toml`` (``[mcp.servers.NAME]``, see
``docs/mcp.md``); serve the mesh with ``toolmesh mcp serve --stdio`` or
``--http HOST:PORT``.
"""

from .hooks import (
    toolmesh_cli,
    toolmesh_discover_tools,
    toolmesh_execute_tool,
    toolmesh_shutdown,
    toolmesh_startup,
)
from .server_config import ServerConfig, load_server_configs
from .tool_names import SOURCE, mesh_tool_name

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
