"""``CallContext``: what a plugin knows about the call it is executing."""

from __future__ import annotations

import time
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolmesh.contracts import Caller, ToolRequest, ToolResult

from .errors import ToolUnavailable

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["CallContext", "CallbackChannel", "NestedCall"]

_log = logging.getLogger("toolmesh.tool")

NestedCall = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""Signature of ``CallContext.call_tool``: call another tool (by name) on the mesh."""


class CallbackChannel(Protocol):
    """**Protocol**: how a running tool reaches its caller (a node implements it over NATS)."""

    async def notify(self, kind: str, data: dict[str, Any]) -> None:
        """Send a notification (``progress``, ``log``); never fails the call."""

    async def ask(self, kind: str, data: dict[str, Any], timeout: float | None) -> Any:
        """Send a request (``sampling``, ``elicitation``) and return the caller's JSON answer."""


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
    channel: CallbackChannel | None = None
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
        if self.channel is not None:
            await self.channel.notify("progress", attributes)

    async def log(self, level: str, message: str, **data: Any) -> None:
        """Send a log message to the caller (MCP clients show it) and to the node's log."""
        _log.log(logging.getLevelNamesMapping().get(level.upper(), logging.INFO), "%s: %s", self.request.tool, message)
        if self.channel is not None:
            await self.channel.notify("log", {"level": level, "message": message, **data})

    async def ask(self, kind: str, data: dict[str, Any], timeout: float | None = None) -> Any:
        """Ask the caller (``sampling``: its model; ``elicitation``: a person) and return the answer.

        Raises ``ToolUnavailable`` when the caller offered no way to answer.
        """
        if self.channel is None:
            raise ToolUnavailable(
                f"tool {self.request.tool!r} asked its caller for {kind}, but the caller accepts no callbacks;"
                " call it from a client that handles them (e.g. an MCP client through 'toolmesh mcp serve')"
            )
        return await self.channel.ask(kind, data, self.remaining() if timeout is None else timeout)

