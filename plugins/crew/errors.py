"""Errors of the crew lifecycle, each with a stable ``code`` an agent framework can branch on.

Hierarchy::

    CrewError                      (code = crew_error)
    ├── ParseError                 parse_error: the agent's output holds no usable tool call
    ├── ToolSelectionError         unknown_tool: no tool of that name (or close enough)
    ├── ToolConstraintError        invalid_tool_constraint: a toolset requirement cannot be met
    ├── RoundCommitError           commit_missing / commit_extra / commit_duplicate / commit_mismatched
    ├── PathOutsideRoot            path_outside_root: read-file was asked for a file outside its root
    └── CoworkerError              unknown_coworker / coworker_unavailable: the coworker cannot be reached

Failures of a *call* (invalid arguments, usage limit, a failing tool) are not
raised: they become an ``Observation`` whose ``code`` says what happened.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "CoworkerError",
    "CrewError",
    "ParseError",
    "PathOutsideRoot",
    "RoundCommitError",
    "ToolConstraintError",
    "ToolSelectionError",
    "ToolUsageLimitExceeded",
]


class CrewError(Exception):
    """Base of the crew plugin's exceptions; ``code`` is stable, ``message`` tells what to do."""

    code: ClassVar[str] = "crew_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ParseError(CrewError):
    """The agent's output could not be read as a tool call or a final answer."""

    code = "parse_error"

    def __init__(self, message: str, tool: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        """The tool name, when the call named one but its input could not be read."""


class ToolSelectionError(CrewError):
    """No available tool matches the name the agent gave."""

    code = "unknown_tool"


class ToolUsageLimitExceeded(CrewError):
    """A tool's ``max_usage_count`` is used up (for the crew or for one agent)."""

    code = "usage_limit"


class ToolConstraintError(CrewError):
    """A toolset's requirement names a tool that is not available this turn."""

    code = "invalid_tool_constraint"


class RoundCommitError(CrewError):
    """The results offered for a round of calls do not pair one-to-one with the calls."""

    code = "commit_mismatched"

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # one of commit_missing/extra/duplicate/mismatched


class PathOutsideRoot(CrewError):
    """read-file was asked for a path that resolves outside its root directory."""

    code = "path_outside_root"


class CoworkerError(CrewError):
    """A delegation or question could not reach the coworker (unknown role, nobody answering)."""

    code = "unknown_coworker"

    def __init__(self, message: str, code: str = "unknown_coworker") -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # unknown_coworker or coworker_unavailable
