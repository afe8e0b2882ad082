"""What a ``toolmesh_before_call`` hook may decide about a call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolmesh.contracts import ErrorCode

__all__ = ["Complete", "Decision", "Reject", "RunNormally"]


@dataclass(frozen=True, slots=True)
class RunNormally:
    """Go on with the call, with these (possibly edited) arguments."""

    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Complete:
    """Answer the call with this result without executing the tool.

    ``result`` may be a ``ToolResult`` or any JSON-able value.
    """

    result: Any


@dataclass(frozen=True, slots=True)
class Reject:
    """Refuse the call; the caller gets ``code`` (``rejected`` unless said otherwise)."""

    reason: str
    code: ErrorCode = ErrorCode.REJECTED
    details: dict[str, Any] | None = field(default=None)


Decision = RunNormally | Complete | Reject
"""The union a decision hook returns (``None`` means "run normally, unchanged")."""
