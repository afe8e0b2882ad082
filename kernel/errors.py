"""Exceptions raised inside toolmesh, each mapped to one protocol error code.

Hierarchy::

    ToolmeshError                 (code = internal)
    ├── ToolCallError             a call failed; carries the code and details
    │   ├── UnknownTool           unknown_tool (with suggestions)
    │   ├── InvalidArguments      invalid_arguments (with JSON-path issues)
    │   ├── CallRejected          rejected
    │   ├── UsageLimitExceeded    usage_limit
    │   ├── CallTimeout           timeout
    │   ├── ExecutionFailed       execution_failed
    │   ├── SandboxViolation      sandbox_violation
    │   ├── ToolUnavailable       unavailable
    │   ├── PayloadTooLarge       too_large
    │   └── BadRequest            bad_request
    ├── ConfigError               invalid configuration (CLI flags, env, toolmesh.toml)
    ├── BrokerError               NATS cannot be reached or started
    └── ToolDefinitionError       a tool cannot be loaded (bad decorator use, bad file)

Two channels: kernel and protocol failures raise these; a failing *call*
becomes a ``ToolResult`` with ``is_error`` — :meth:`ToolCallError.to_tool_error`
is the one seam between them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from toolmesh.contracts import ErrorCode, ToolError

__all__ = [
    "BadRequest",
    "BrokerError",
    "CallRejected",
    "CallTimeout",
    "ConfigError",
    "ExecutionFailed",
    "InvalidArguments",
    "PayloadTooLarge",
    "SandboxViolation",
    "ToolCallError",
    "ToolDefinitionError",
    "ToolUnavailable",
    "ToolmeshError",
    "UnknownTool",
    "UsageLimitExceeded",
    "error_class",
]


class ToolmeshError(Exception):
    """Base of every toolmesh exception."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL


class ToolCallError(ToolmeshError):
    """A call failed; converts to the ``ToolError`` a caller receives."""

    retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        suggestions: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.suggestions = suggestions

    def to_tool_error(self) -> ToolError:
        """The wire form of this failure."""
        return ToolError(
            code=self.code,
            message=self.message,
            details=self.details,
            retryable=self.retryable,
            suggestions=self.suggestions,
        )


class UnknownTool(ToolCallError):
    code = ErrorCode.UNKNOWN_TOOL

    def __init__(self, name: str, suggestions: tuple[str, ...] = ()) -> None:
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(
            f"no tool named {name!r} is served on this mesh.{hint} Run 'toolmesh tools' to list them.",
            suggestions=suggestions,
        )


class InvalidArguments(ToolCallError):
    code = ErrorCode.INVALID_ARGUMENTS


class CallRejected(ToolCallError):
    code = ErrorCode.REJECTED


class UsageLimitExceeded(ToolCallError):
    code = ErrorCode.USAGE_LIMIT


class CallTimeout(ToolCallError):
    code = ErrorCode.TIMEOUT
    retryable = True


class ExecutionFailed(ToolCallError):
    code = ErrorCode.EXECUTION_FAILED


class SandboxViolation(ToolCallError):
    code = ErrorCode.SANDBOX_VIOLATION


class ToolUnavailable(ToolCallError):
    code = ErrorCode.UNAVAILABLE
    retryable = True


class PayloadTooLarge(ToolCallError):
    code = ErrorCode.TOO_LARGE


class BadRequest(ToolCallError):
    code = ErrorCode.BAD_REQUEST


class ConfigError(ToolmeshError):
    """Configuration that cannot work; the message names the setting and the fix."""


class BrokerError(ToolmeshError):
    """NATS could not be reached, or the embedded broker could not start."""

    code = ErrorCode.UNAVAILABLE


class ToolDefinitionError(ToolmeshError):
    """A tool definition is wrong (decorator misuse, unloadable file or module)."""


def error_class(code: ErrorCode) -> type[ToolCallError]:
    """The ``ToolCallError`` subclass that carries ``code``."""
    for cls in ToolCallError.__subclasses__():
        if cls.code == code:
            return cls
    return ToolCallError
