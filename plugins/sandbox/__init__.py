"""Code sandbox: ``tool.code.v1`` TypeScript/JavaScript tools run in Deno, deny-by-default.

Registered like any plugin, through the entry point::

    [project.entry-points."toolmesh.plugins"]
    sandbox = "toolmesh.plugins.sandbox"

Serve a directory of ``*.tool.json`` documents with ``toolmesh up DIR``; run
their examples as self-tests with ``toolmesh sandbox test DIR``.  See
``docs/sandbox.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolmesh import lazy_exports

if TYPE_CHECKING:  # the names below load on first use (PEP 562): `toolmesh --help` imports this package
    from .plugin import (
        sandbox_of,
        toolmesh_claim_sources,
        toolmesh_cli,
        toolmesh_discover_tools,
        toolmesh_execute_tool,
        toolmesh_shutdown,
        toolmesh_startup,
    )

_MODULE_OF = {
    **dict.fromkeys(
        (
            "sandbox_of",
            "toolmesh_claim_sources",
            "toolmesh_cli",
            "toolmesh_discover_tools",
            "toolmesh_execute_tool",
            "toolmesh_shutdown",
            "toolmesh_startup",
        ),
        "plugin",
    ),
}


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, load_on_dir=True)  # pluggy reads dir()


__all__ = [
    "sandbox_of",
    "toolmesh_claim_sources",
    "toolmesh_cli",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
    "toolmesh_shutdown",
    "toolmesh_startup",
]
