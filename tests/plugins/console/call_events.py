"""The events a node publishes for one call, made up for feeding the console's live view."""

from __future__ import annotations

from typing import Any

from toolmesh.contracts import ErrorCode, ToolEvent


def call_events(
    tool: str,
    request_id: str,
    node: str,
    *,
    timestamp: float,
    duration_ms: float,
    failed: bool = False,
    started_attributes: dict[str, Any] | None = None,
    ended_attributes: dict[str, Any] | None = None,
) -> tuple[ToolEvent, ToolEvent]:
    """The ``started`` event of a call and its ``finished`` (or, when ``failed``, ``failed``) event."""
    started = ToolEvent(
        kind="started",
        tool=tool,
        request_id=request_id,
        node=node,
        timestamp=timestamp,
        attributes=started_attributes,
    )
    ended = ToolEvent(
        kind="failed" if failed else "finished",
        tool=tool,
        request_id=request_id,
        node=node,
        timestamp=timestamp,
        duration_ms=duration_ms,
        error_code=ErrorCode.EXECUTION_FAILED if failed else None,
        attributes=ended_attributes,
    )
    return started, ended
