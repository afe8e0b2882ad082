"""``CallContext``: what a plugin knows about the call it is executing.

Nested calls (``context.call_tool``) stay inside their parent call: each
carries the chain of tools above it (``ToolRequest.chain``) and only the time
the parent has left, a chain of ``max_call_depth`` tools refuses to grow, and
when the parent's call ends every nested call still in flight is cancelled —
also those made from other tasks, such as a worker thread's bridge to the
event loop.  So a tool that calls itself ends with a clear error instead of
holding the node's workers until they run out.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolmesh._errors import ToolUnavailable, tool_error
from toolmesh.contracts import Caller, ErrorCode, ToolError, ToolRequest, ToolResult

if TYPE_CHECKING:
    from toolmesh._pipeline.kernel import Kernel

__all__ = ["PARENT_CALL", "CallContext", "CallbackChannel", "NestedCall", "NestedSend", "chain_refusal"]

PARENT_CALL = "parent_call"
"""``ToolRequest.meta`` key of a nested call: the request id of the call that made it (its events name it)."""

_log = logging.getLogger("toolmesh.tool")

NestedCall = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""Signature of ``CallContext.call_tool``: call another tool (by name) on the mesh."""

NestedSend = Callable[[ToolRequest], Coroutine[Any, Any, ToolResult]]
"""How a nested request travels: a node sends it over NATS, a kernel on its own runs it locally."""

_CHAIN_SHOWN = 10
"""Tool names a chain-too-deep message shows (the first two and the last ones)."""


def chain_refusal(request: ToolRequest, limit: int) -> ToolError | None:
    """The ``rejected`` error for a request whose call chain already holds ``limit`` tools, else ``None``."""
    if len(request.chain) < limit:
        return None
    names = [*request.chain, request.tool]
    shown = _shorten(names)
    return ToolError(
        code=ErrorCode.REJECTED,
        message=(
            f"call chain too deep: {' → '.join(shown)} (limit {limit} tools); a tool that calls itself,"
            " directly or through others, needs a case that stops the recursion — or, if the chain is"
            " meant to be this deep, raise max_call_depth (TOOLMESH_MAX_CALL_DEPTH)"
        ),
        details={"chain": shown, "depth": len(names), "limit": limit},
    )


def _shorten(names: Sequence[str]) -> list[str]:
    """The names a message shows: all of a short chain; of a long one the first two, "…", the last ones."""
    if len(names) > _CHAIN_SHOWN:
        names = [*names[:2], "…", *names[3 - _CHAIN_SHOWN:]]
    return [name if len(name) <= 128 else name[:127] + "…" for name in names]


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running event loop
        return None


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
    NATS, or through the local kernel otherwise; see :meth:`nested_call`.
    """

    request: ToolRequest
    kernel: Kernel
    node: str | None = None
    deadline: float | None = None
    call_tool: NestedCall | None = None
    channel: CallbackChannel | None = None
    state: dict[str, Any] = field(default_factory=dict)
    _owner: asyncio.Task[Any] | None = field(default_factory=_current_task, init=False, repr=False)
    _nested: set[asyncio.Task[ToolResult]] | None = field(default=None, init=False, repr=False)
    _ended: bool = field(default=False, init=False, repr=False)

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

    # -------------------------------------------------------------- nested calls

    def nested_call(self, send: NestedSend) -> NestedCall:
        """A ``call_tool`` for this call: ``send`` receives requests that carry the chain and the time left.

        The returned function never raises for a failed call: a nested call made
        when no time is left answers ``timeout``, one made after this call ended
        ``cancelled``, one that would make the chain longer than ``max_call_depth``
        ``rejected`` — none of them runs.
        """

        async def call_tool(name: str, arguments: dict[str, Any]) -> ToolResult:
            return await self._call_nested(send, name, arguments)

        return call_tool

    def end(self) -> None:
        """The call is over: cancel its nested calls still in flight, refuse new ones."""
        self._ended = True
        if self._nested:
            for task in list(self._nested):
                task.cancel()

    async def _call_nested(self, send: NestedSend, name: str, arguments: dict[str, Any]) -> ToolResult:
        parent = self.request
        if self._ended:
            return _nested_failure(
                name, ErrorCode.CANCELLED,
                f"tool {parent.tool!r} called {name!r} after its own call had ended; nothing was run",
            )
        remaining = self.remaining()
        if remaining is not None and remaining <= 0:
            return _nested_failure(
                name, ErrorCode.TIMEOUT,
                f"tool {parent.tool!r} called {name!r} after its own deadline had passed; nothing was run",
            )
        request = ToolRequest(
            tool=name, arguments=arguments, caller=parent.caller, timeout=remaining, deadline=parent.deadline,
            chain=(*parent.chain, parent.tool), meta={PARENT_CALL: parent.id} if parent.id else None,
        )
        refusal = chain_refusal(request, self.kernel.settings.max_call_depth)
        if refusal is not None:
            return ToolResult.failure("", name, refusal)
        task = _current_task()
        if task is None or task is self._owner:
            return await send(request)  # in the call's own task: ended and cancelled with it
        # From another task (a worker thread's bridge, a task the tool started): run the call in a
        # task of its own, so that the end of this call can cancel it without touching its caller.
        nested: asyncio.Task[ToolResult] = asyncio.get_running_loop().create_task(send(request))
        if self._nested is None:
            self._nested = set()
        children = self._nested
        children.add(nested)
        try:
            return await nested
        except asyncio.CancelledError:
            if nested.cancelled() and not task.cancelling():
                return _nested_failure(
                    name, ErrorCode.CANCELLED,
                    f"the call of {parent.tool!r} ended (answered, timed out or cancelled) while its nested"
                    f" call of {name!r} ran; the nested call was cancelled",
                )
            raise
        finally:
            children.discard(nested)


def _nested_failure(tool: str, code: ErrorCode, message: str) -> ToolResult:
    return ToolResult.failure("", tool, tool_error(code, message))
