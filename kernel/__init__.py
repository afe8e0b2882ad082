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

Write a plugin: see ``docs/writing-plugins.md``.

The public API is exactly ``__all__``, documented name by name in
``docs/api.md``; a plugin imports only these names, ``toolmesh.contracts`` and
its own package.  Every other module of the package is internal and may change.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below load on first use (PEP 562), so `import toolmesh.contracts` stays light
    from toolmesh._cli.options import JsonOption, NatsOption, PrefixOption
    from toolmesh._cli.options import error_console as cli_stderr
    from toolmesh._cli.options import fail as cli_error
    from toolmesh._config import Settings, load_settings
    from toolmesh._errors import (
        BadRequest,
        BrokerError,
        CallCancelled,
        CallRejected,
        CallTimeout,
        ConfigError,
        DeadlineExceeded,
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
        tool_error,
    )
    from toolmesh._lazy_names import lazy_exports
    from toolmesh._markers import hookimpl, hookspec
    from toolmesh._pipeline.context import CallContext
    from toolmesh._pipeline.decisions import Complete, Decision, Reject, RunNormally
    from toolmesh._pipeline.kernel import Kernel
    from toolmesh._pipeline.memory_cache import cache_key
    from toolmesh._pipeline.plugin_manager import await_maybe
    from toolmesh._pipeline.results import result_from_value
    from toolmesh._pipeline.tool_function import ToolFunction, tool
    from toolmesh._pipeline.validation import ValidationIssue, compile_schema, json_path, schema_issues
    from toolmesh._telemetry.logs import redact_arguments, redact_issues
    from toolmesh._transport.callbacks import CallbackHandler
    from toolmesh._transport.mesh import Mesh, SyncMesh, connect_nats
    from toolmesh._transport.nats_errors import nats_error
    from toolmesh._transport.node import Node

_MODULE_OF = {
    "CallbackHandler": "_transport.callbacks",
    **dict.fromkeys(("JsonOption", "NatsOption", "PrefixOption", "cli_error", "cli_stderr"), "_cli.options"),
    **dict.fromkeys(("Settings", "load_settings"), "_config"),
    "CallContext": "_pipeline.context",
    **dict.fromkeys(("Complete", "Decision", "Reject", "RunNormally"), "_pipeline.decisions"),
    **dict.fromkeys(
        (
            "BadRequest", "BrokerError", "CallCancelled", "CallRejected", "CallTimeout", "ConfigError",
            "DeadlineExceeded", "ExecutionFailed", "InvalidArguments", "PayloadTooLarge", "SandboxViolation",
            "ToolCallError", "ToolDefinitionError", "ToolmeshError", "ToolUnavailable", "UnknownTool",
            "UsageLimitExceeded", "tool_error",
        ),
        "_errors",
    ),
    "nats_error": "_transport.nats_errors",
    "Kernel": "_pipeline.kernel",
    "lazy_exports": "_lazy_names",
    **dict.fromkeys(("redact_arguments", "redact_issues"), "_telemetry.logs"),
    **dict.fromkeys(("hookimpl", "hookspec"), "_markers"),
    "cache_key": "_pipeline.memory_cache",
    **dict.fromkeys(("Mesh", "SyncMesh", "connect_nats"), "_transport.mesh"),
    "Node": "_transport.node",
    "await_maybe": "_pipeline.plugin_manager",
    "result_from_value": "_pipeline.results",
    **dict.fromkeys(("ToolFunction", "tool"), "_pipeline.tool_function"),
    **dict.fromkeys(("ValidationIssue", "compile_schema", "json_path", "schema_issues"), "_pipeline.validation"),
}

_NAME_IN_MODULE = {"cli_error": "fail", "cli_stderr": "error_console"}
"""Public names that differ from the kernel module's own: a top-level name must say what it is for."""


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from toolmesh._version import package_version

        value: Any = package_version()
    elif name in _MODULE_OF:
        module = importlib.import_module(f"{__name__}.{_MODULE_OF[name]}")
        value = getattr(module, _NAME_IN_MODULE.get(name, name))
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = (
    "BadRequest",
    "BrokerError",
    "CallCancelled",
    "CallContext",
    "CallRejected",
    "CallTimeout",
    "CallbackHandler",
    "Complete",
    "ConfigError",
    "DeadlineExceeded",
    "Decision",
    "ExecutionFailed",
    "InvalidArguments",
    "JsonOption",
    "Kernel",
    "Mesh",
    "NatsOption",
    "Node",
    "PayloadTooLarge",
    "PrefixOption",
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
    "await_maybe",
    "cache_key",
    "cli_error",
    "cli_stderr",
    "compile_schema",
    "connect_nats",
    "hookimpl",
    "hookspec",
    "json_path",
    "lazy_exports",
    "load_settings",
    "nats_error",
    "redact_arguments",
    "redact_issues",
    "result_from_value",
    "schema_issues",
    "tool",
    "tool_error",
)
