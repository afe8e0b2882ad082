"""Code sandbox: ``tool.code.v1`` TypeScript/JavaScript tools run in Deno, deny-by-default.

Registered like any plugin, through the entry point::

    [project.entry-points."toolmesh.plugins"]
    sandbox = "toolmesh.plugins.sandbox"

Serve a directory of ``*.tool.json`` documents with ``toolmesh up DIR``; run
their examples as self-tests with ``toolmesh sandbox test DIR``.  See
``docs/sandbox.md``.
"""

from .plugin import (
    sandbox_of,
    toolmesh_claim_sources,
    toolmesh_cli,
    toolmesh_discover_tools,
    toolmesh_execute_tool,
    toolmesh_shutdown,
    toolmesh_startup,
)

__all__ = [
    "sandbox_of",
    "toolmesh_claim_sources",
    "toolmesh_cli",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
    "toolmesh_shutdown",
    "toolmesh_startup",
]
