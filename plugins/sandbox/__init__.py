"""Code sandbox: ``tool.code.v1`` TypeScript/JavaScript tools run in Deno, deny-by-default.

Registered like any plugin, through the entry point::

    [project.entry-points."toolmesh.plugins"]
    sandbox = "toolmesh.plugins.sandbox"

Serve a directory of ``*.tool.json`` documents with ``toolmesh up DIR``; run
their examples as self-tests with ``toolmesh sandbox test DIR``.  See
``docs/sandbox.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "sandbox_of",
    "toolmesh_claim_sources",
    "toolmesh_cli",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
    "toolmesh_shutdown",
    "toolmesh_startup",
]
