"""Stable error codes of the toolmesh protocol.

A code names *what kind* of failure a caller sees; it never changes once
published.  Callers branch on ``ToolError.code``, people read ``message``.
"""

from __future__ import annotations

import enum

__all__ = ["RETRYABLE_CODES", "ErrorCode"]


class ErrorCode(str, enum.Enum):
    """Every error code a ``ToolResult.error`` can carry."""

    UNKNOWN_TOOL = "unknown_tool"
    """No node serves a tool of that name; ``suggestions`` lists close names."""
    INVALID_ARGUMENTS = "invalid_arguments"
    """The arguments do not match the tool's ``input_schema``."""
    REJECTED = "rejected"
    """A decision hook refused the call (policy, authorization, toolset)."""
    USAGE_LIMIT = "usage_limit"
    """The tool's ``max_usage_count`` is used up for this caller."""
    TIMEOUT = "timeout"
    """The call did not finish before its deadline."""
    EXECUTION_FAILED = "execution_failed"
    """The tool ran and failed (raised, panicked, returned an invalid result)."""
    SANDBOX_VIOLATION = "sandbox_violation"
    """Sandboxed code tried something its permissions forbid."""
    UNAVAILABLE = "unavailable"
    """The tool or node cannot take the call now (busy, draining, down)."""
    TOO_LARGE = "too_large"
    """The request or the result exceeds the size limit."""
    BAD_REQUEST = "bad_request"
    """The message is not a valid ``ToolRequest`` (not JSON, wrong shape)."""
    CANCELLED = "cancelled"
    """The caller cancelled the call (``<prefix>.cancel``) before it finished."""
    INTERNAL = "internal"
    """A bug in toolmesh or a plugin; the message says where to look."""


RETRYABLE_CODES = frozenset({ErrorCode.UNAVAILABLE, ErrorCode.TIMEOUT})
"""Codes for which sending the same request again may succeed."""
