"""``Observation``: what an agent reads back for one output it gave the lifecycle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolmesh.contracts import ToolEvent, ToolResult

__all__ = ["Observation"]


@dataclass
class Observation:
    """What the agent receives for one output.

    ``code`` is ``None`` on success, else a stable code (``parse_error``,
    ``unknown_tool``, ``invalid_arguments``, ``usage_limit``,
    ``repeated_call``, ``unavailable``, or the mesh's error code).
    ``is_answer`` ends the agent's turn: a final answer, or a
    ``result_as_answer`` tool's output.
    """

    text: str
    code: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    result: ToolResult | None = None
    from_cache: bool = False
    is_answer: bool = False
    final_answer: bool = False
    events: list[ToolEvent] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the call (or final answer) succeeded."""
        return self.code is None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-able summary (what ``toolmesh crew replay --json`` prints)."""
        return {
            "observation": self.text,
            "code": self.code,
            "tool": self.tool,
            "arguments": self.arguments,
            "from_cache": self.from_cache,
            "is_answer": self.is_answer,
            "final_answer": self.final_answer,
            "events": [
                {"kind": event.kind, "tool": event.tool, "attributes": event.attributes}
                for event in self.events
            ],
        }
