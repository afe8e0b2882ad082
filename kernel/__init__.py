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

from importlib.metadata import PackageNotFoundError, version

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

try:
    __version__ = version("toolmesh")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

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
