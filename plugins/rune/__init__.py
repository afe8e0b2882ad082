"""Rune tools plugin: ``.rn`` scripts become mesh tools, with hot reload.

Registered like any plugin, through the entry point::

    [project.entry-points."toolmesh.plugins"]
    rune = "toolmesh.plugins.rune"

``toolmesh up DIR`` serves every ``#[tool]`` function (and every legacy
``//!``-header file) under DIR as ``rune_<name>``; ``toolmesh rune check
PATH`` lints tool files.  The language itself is ``toolmesh.plugins.rune.lang``;
the tool format is described in ``docs/rune-tools.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolmesh import lazy_exports

if TYPE_CHECKING:  # the names below load on first use (PEP 562): `toolmesh --help` imports this package
    from .hooks import (
        catalog_of,
        toolmesh_claim_sources,
        toolmesh_cli,
        toolmesh_discover_tools,
        toolmesh_execute_tool,
        toolmesh_shutdown,
        toolmesh_tools_changed,
    )
    from .loader import check_paths
    from .reload import SOURCE, RuneCatalog, RuneSettings
    from .tool_format import Problem, RuneTool, ToolParam

_MODULE_OF = {
    **dict.fromkeys(
        (
            "catalog_of",
            "toolmesh_claim_sources",
            "toolmesh_cli",
            "toolmesh_discover_tools",
            "toolmesh_execute_tool",
            "toolmesh_shutdown",
            "toolmesh_tools_changed",
        ),
        "hooks",
    ),
    "check_paths": "loader",
    **dict.fromkeys(("SOURCE", "RuneCatalog", "RuneSettings"), "reload"),
    **dict.fromkeys(("Problem", "RuneTool", "ToolParam"), "tool_format"),
}


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, load_on_dir=True)  # pluggy reads dir()


__all__ = [
    "SOURCE",
    "Problem",
    "RuneCatalog",
    "RuneSettings",
    "RuneTool",
    "ToolParam",
    "catalog_of",
    "check_paths",
    "toolmesh_claim_sources",
    "toolmesh_cli",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
    "toolmesh_shutdown",
    "toolmesh_tools_changed",
]
