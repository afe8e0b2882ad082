"""Errors of the crew lifecycle, each with a stable ``code`` an agent framework can branch on.

Hierarchy: each class, its ``code``, and the wire ``ErrorCode`` (``ToolError.code``)::

    toolmesh.ToolmeshError
    └── CrewError               crew_error               rejected
        ├── ParseError          parse_error              bad_request: no usable tool call in the output
        ├── ToolSelectionError  unknown_tool             unknown_tool: no tool of that name (or close)
        ├── ToolUsageLimitExceeded  usage_limit          usage_limit: max_usage_count is used up
        ├── ToolConstraintError invalid_tool_constraint  rejected: a toolset requirement cannot be met
        ├── RoundCommitError    commit_missing, commit_extra, commit_duplicate, commit_mismatched
        │                                                bad_request: results do not pair with calls
        ├── ToolRoundError      unexpected_call_count, round_closed
        │                                                bad_request: ``expect_one`` or
        │                                                ``expect_at_most_one`` saw another number of
        │                                                calls; the round was
        │                                                already committed or discarded
        ├── PathOutsideRoot     path_outside_root        rejected: read-file outside its root
        ├── CoworkerError       unknown_coworker, coworker_unavailable, coworker_failed
        │                                                rejected: the coworker cannot be reached
        └── ScriptError         script_error             bad_request: a replay script line is malformed
                                (also a ValueError; defined in ``replay``)

``code`` is the crew's own, finer vocabulary (what an ``Observation`` reports);
``wire_code`` is the ``ErrorCode`` of toolmesh's protocol, and
:meth:`CrewError.to_tool_error` carries both (``details["crew_code"]``).

Failures of a *call* (invalid arguments, usage limit, a failing tool) are not
raised: they become an ``Observation`` whose ``code`` says what happened.
"""

from __future__ import annotations

from typing import ClassVar

from toolmesh import ToolmeshError
from toolmesh.contracts import RETRYABLE_CODES, ErrorCode, ToolError

__all__ = [
    "CoworkerError",
    "CrewError",
    "ParseError",
    "PathOutsideRoot",
    "RoundCommitError",
    "ToolConstraintError",
    "ToolRoundError",
    "ToolSelectionError",
    "ToolUsageLimitExceeded",
]


class CrewError(ToolmeshError):
    """Base of the crew plugin's exceptions; ``code`` is stable, ``message`` tells what to do."""

    code: ClassVar[str] = "crew_error"  # type: ignore[assignment]  # the crew's finer codes; see wire_code
    crew_wire_code: ClassVar[ErrorCode] = ErrorCode.REJECTED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def wire_code(self) -> ErrorCode:
        """The protocol's ``ErrorCode`` for this failure (``code`` is the crew's own, finer one)."""
        return self.crew_wire_code

    def to_tool_error(self) -> ToolError:
        """The wire form: ``wire_code``, the message, and the crew's code as ``details["crew_code"]``."""
        return ToolError(
            code=self.wire_code,
            message=self.message,
            details={"crew_code": self.code},
            retryable=self.wire_code in RETRYABLE_CODES,
        )


class ParseError(CrewError):
    """The agent's output could not be read as a tool call or a final answer."""

    code = "parse_error"
    crew_wire_code = ErrorCode.BAD_REQUEST

    def __init__(self, message: str, tool: str | None = None, call_id: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        """The tool name, when the call named one but its input could not be read."""
        self.call_id = call_id
        """The provider's id of the call, when the output carried one."""


class ToolSelectionError(CrewError):
    """No available tool matches the name the agent gave."""

    code = "unknown_tool"
    crew_wire_code = ErrorCode.UNKNOWN_TOOL


class ToolUsageLimitExceeded(CrewError):
    """A tool's ``max_usage_count`` is used up (for the crew or for one agent)."""

    code = "usage_limit"
    crew_wire_code = ErrorCode.USAGE_LIMIT


class ToolConstraintError(CrewError):
    """A toolset's requirement names a tool that is not available this turn."""

    code = "invalid_tool_constraint"


class RoundCommitError(CrewError):
    """The results offered for a round of calls do not pair one-to-one with the calls."""

    code = "commit_mismatched"
    crew_wire_code = ErrorCode.BAD_REQUEST

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # one of commit_missing/extra/duplicate/mismatched


class ToolRoundError(CrewError):
    """A round does not have the number of calls asked for, or was already committed or discarded."""

    code = "unexpected_call_count"
    crew_wire_code = ErrorCode.BAD_REQUEST

    def __init__(self, message: str, code: str = "unexpected_call_count") -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # unexpected_call_count or round_closed


class PathOutsideRoot(CrewError):
    """read-file was asked for a path that resolves outside its root directory."""

    code = "path_outside_root"


class CoworkerError(CrewError):
    """A delegation or question could not reach the coworker (unknown role, nobody answering)."""

    code = "unknown_coworker"

    def __init__(self, message: str, code: str = "unknown_coworker") -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # unknown_coworker or coworker_unavailable
