"""MCP for toolmesh: external MCP servers become mesh tools, and the mesh becomes an MCP server.

Installed through the ``toolmesh.plugins`` entry point::

    [project.entry-points."toolmesh.plugins"]
    mcp = "toolmesh.plugins.mcp"

Configure servers in ``toolmesh.toml`` (``[mcp.servers.NAME]``, see
``docs/mcp.md``); serve the mesh with ``toolmesh mcp serve --stdio`` or
``--http HOST:PORT``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    # pluggy finds hook implementations through dir() and inspect.getattr_static, which never calls
    # __getattr__: listing the package loads every name into it (as a plugin manager registers it)
    for name in _MODULE_OF.keys() - globals().keys():
        __getattr__(name)
    return sorted({*globals(), *__all__})


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
