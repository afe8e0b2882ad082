"""``CallContext``: what a plugin knows about the call it is executing."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolmesh.contracts import Caller, ToolRequest, ToolResult

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["CallContext", "NestedCall"]

NestedCall = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""Signature of ``CallContext.call_tool``: call another tool (by name) on the mesh."""


@dataclass(slots=True)
class CallContext:
    """The request being served, its deadline, and what the tool may use.

    ``deadline`` is a ``time.monotonic()`` instant (``None``: no limit).
    ``call_tool`` reaches other tools through the mesh when the call came over
    NATS, or through the local kernel otherwise.
    """

    request: ToolRequest
    kernel: Kernel
    node: str | None = None
    deadline: float | None = None
    call_tool: NestedCall | None = None
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def caller(self) -> Caller | None:
        """Who made the call, when the request says so."""
        return self.request.caller

    def remaining(self) -> float | None:
        """Seconds left before the deadline (never negative), or ``None``."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress; observers receive a ``progress`` event."""
        attributes: dict[str, Any] = {"progress": progress}
        if total is not None:
            attributes["total"] = total
        if message is not None:
            attributes["message"] = message
        await self.kernel.emit("progress", self.request.tool, request_id=self.request.id, attributes=attributes)
