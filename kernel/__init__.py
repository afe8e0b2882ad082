"""toolmesh: a distributed execution layer for AI-agent tools.

A pluggy kernel runs every call through one pipeline; plugins provide tools
(Python functions, Rune scripts, sandboxed TypeScript, MCP servers); nodes
serve them on NATS so any number of processes share one catalog.

Write a tool::

    import toolmesh

    @toolmesh.tool
    def add(a: int, b: int) -> int:
        "Add two integers."
        return a + b

Write a plugin: see :mod:`toolmesh.markers` and ``docs/writing-plugins.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below load on first use (PEP 562), so `import toolmesh.contracts` stays light
    from .config import Settings, load_settings
    from .context import CallContext
    from .decisions import Complete, Decision, Reject, RunNormally
    from .errors import (
        BadRequest,
        BrokerError,
        CallRejected,
        CallTimeout,
        ConfigError,
        ExecutionFailed,
        InvalidArguments,
        PayloadTooLarge,
        SandboxViolation,
        ToolCallError,
        ToolDefinitionError,
        ToolmeshError,
        ToolUnavailable,
        UnknownTool,
        UsageLimitExceeded,
    )
    from .kernel import Kernel
    from .markers import hookimpl, hookspec
    from .mesh import Mesh, SyncMesh
    from .node import Node
    from .tool_function import ToolFunction, tool
    from .validation import ValidationIssue

_MODULE_OF = {
    **dict.fromkeys(("Settings", "load_settings"), "config"),
    "CallContext": "context",
    **dict.fromkeys(("Complete", "Decision", "Reject", "RunNormally"), "decisions"),
    **dict.fromkeys(
        (
            "BadRequest", "BrokerError", "CallRejected", "CallTimeout", "ConfigError", "ExecutionFailed",
            "InvalidArguments", "PayloadTooLarge", "SandboxViolation", "ToolCallError", "ToolDefinitionError",
            "ToolmeshError", "ToolUnavailable", "UnknownTool", "UsageLimitExceeded",
        ),
        "errors",
    ),
    "Kernel": "kernel",
    **dict.fromkeys(("hookimpl", "hookspec"), "markers"),
    **dict.fromkeys(("Mesh", "SyncMesh"), "mesh"),
    "Node": "node",
    **dict.fromkeys(("ToolFunction", "tool"), "tool_function"),
    "ValidationIssue": "validation",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value: Any = version("toolmesh")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
            value = "0.0.0"
    elif name in _MODULE_OF:
        value = getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = (
    "BadRequest",
    "BrokerError",
    "CallContext",
    "CallRejected",
    "CallTimeout",
    "Complete",
    "ConfigError",
    "Decision",
    "ExecutionFailed",
    "InvalidArguments",
    "Kernel",
    "Mesh",
    "Node",
    "PayloadTooLarge",
    "Reject",
    "RunNormally",
    "SandboxViolation",
    "Settings",
    "SyncMesh",
    "ToolCallError",
    "ToolDefinitionError",
    "ToolFunction",
    "ToolUnavailable",
    "ToolmeshError",
    "UnknownTool",
    "UsageLimitExceeded",
    "ValidationIssue",
    "__version__",
    "hookimpl",
    "hookspec",
    "load_settings",
    "tool",
)
