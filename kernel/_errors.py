"""Exceptions raised inside toolmesh, each carrying one protocol error code.

Hierarchy::

    ToolmeshError                 (code = internal)
    ├── ToolCallError             a call failed; carries the code and details
    │   ├── UnknownTool           unknown_tool (with suggestions)
    │   ├── InvalidArguments      invalid_arguments (with JSON-path issues)
    │   ├── CallRejected          rejected
    │   │   └── PublishDenied     rejected: NATS refuses this user the subject
    │   ├── UsageLimitExceeded    usage_limit
    │   ├── CallTimeout           timeout
    │   ├── ExecutionFailed       execution_failed
    │   ├── SandboxViolation      sandbox_violation
    │   ├── ToolUnavailable       unavailable
    │   │   └── NoResponders      unavailable: nothing subscribes to the subject (yet)
    │   ├── PayloadTooLarge       too_large
    │   ├── BadRequest            bad_request
    │   └── CallCancelled         cancelled
    ├── DeadlineExceeded          timeout: a step outlived its deadline (the pipeline's signal)
    ├── ConfigError               invalid configuration (CLI flags, env, toolmesh.toml)
    ├── BrokerError               unavailable: NATS cannot be reached, refuses us, or was lost
    └── ToolDefinitionError       a tool cannot be loaded (bad decorator use, bad file)

Plugins extend the tree under ``ToolmeshError``: ``RuneError`` (Rune scripts),
``CrewError`` (the crew lifecycle; its ``code`` is its own finer vocabulary,
its wire code ``wire_code``), the sandbox's ``WorkerCrashed``.

Retryability is decided once, by the code: an error is retryable when its
wire code is in ``toolmesh.contracts.RETRYABLE_CODES``.  NATS exceptions
(``nats.errors.*``) become these classes in one place,
:func:`toolmesh._transport.nats_errors.nats_error`.

Two channels: kernel and protocol failures raise these; a failing *call*
becomes a ``ToolResult`` with ``is_error`` — :meth:`ToolmeshError.to_tool_error`
is the one seam between them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from toolmesh.contracts import RETRYABLE_CODES, ErrorCode, ToolError

__all__ = [
    "BadRequest",
    "BrokerError",
    "CallCancelled",
    "CallRejected",
    "CallTimeout",
    "ConfigError",
    "DeadlineExceeded",
    "ExecutionFailed",
    "InvalidArguments",
    "NoResponders",
    "PayloadTooLarge",
    "PublishDenied",
    "SandboxViolation",
    "ToolCallError",
    "ToolDefinitionError",
    "ToolUnavailable",
    "ToolmeshError",
    "UnknownTool",
    "UsageLimitExceeded",
    "error_class",
    "tool_error",
]


def tool_error(code: ErrorCode, message: str, **fields: Any) -> ToolError:
    """A ``ToolError`` whose ``retryable`` follows from ``code`` (``RETRYABLE_CODES``), never set by hand."""
    return ToolError(code=code, message=message, retryable=code in RETRYABLE_CODES, **fields)


class ToolmeshError(Exception):
    """Base of every toolmesh exception; ``code`` is what a caller sees in ``ToolError.code``."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL

    @property
    def wire_code(self) -> ErrorCode:
        """The ``ToolError.code`` of this failure: ``code``, unless a subclass's ``code`` is finer."""
        return self.code

    @property
    def retryable(self) -> bool:
        """True when sending the same request again may succeed (the wire code is in ``RETRYABLE_CODES``)."""
        return self.wire_code in RETRYABLE_CODES

    def to_tool_error(self) -> ToolError:
        """The wire form of this failure."""
        return tool_error(self.wire_code, str(self))


class ToolCallError(ToolmeshError):
    """A call failed; converts to the ``ToolError`` a caller receives."""

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
        return tool_error(self.code, self.message, details=self.details, suggestions=self.suggestions)


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


class PublishDenied(CallRejected):
    """NATS refused this connection's user permission to publish on a subject."""

    def __init__(self, subject: str) -> None:
        self.subject = subject
        super().__init__(
            f"NATS refuses this client's user permission to publish on {subject!r}: the user may not call"
            " this tool; ask an operator to allow the subject in the NATS server's permissions"
            " (ops/nats/permissions.conf)",
            details={"subject": subject},
        )


class UsageLimitExceeded(ToolCallError):
    code = ErrorCode.USAGE_LIMIT


class CallTimeout(ToolCallError):
    code = ErrorCode.TIMEOUT


class ExecutionFailed(ToolCallError):
    code = ErrorCode.EXECUTION_FAILED


class SandboxViolation(ToolCallError):
    code = ErrorCode.SANDBOX_VIOLATION


class ToolUnavailable(ToolCallError):
    code = ErrorCode.UNAVAILABLE


class NoResponders(ToolUnavailable):
    """Nothing subscribes to the subject a request went to (the receiver is gone, or not subscribed yet)."""

    def __init__(self, message: str, *, subject: str) -> None:
        super().__init__(message, details={"subject": subject})
        self.subject = subject


class PayloadTooLarge(ToolCallError):
    code = ErrorCode.TOO_LARGE


class BadRequest(ToolCallError):
    code = ErrorCode.BAD_REQUEST


class CallCancelled(ToolCallError):
    code = ErrorCode.CANCELLED


class DeadlineExceeded(ToolmeshError):
    """The deadline passed before the step finished (the step was cancelled): the call's ``timeout``."""

    code = ErrorCode.TIMEOUT

    def __init__(self, message: str = "the deadline passed before the step finished") -> None:
        super().__init__(message)


class ConfigError(ToolmeshError):
    """Configuration that cannot work; the message names the setting and the fix."""


class BrokerError(ToolmeshError):
    """NATS could not be reached, refused this client, or the connection was lost."""

    code = ErrorCode.UNAVAILABLE


class ToolDefinitionError(ToolmeshError):
    """A tool definition is wrong (decorator misuse, unloadable file or module)."""


def error_class(code: ErrorCode) -> type[ToolCallError]:
    """The ``ToolCallError`` subclass that carries ``code``."""
    for cls in ToolCallError.__subclasses__():
        if cls.code == code:
            return cls
    return ToolCallError
