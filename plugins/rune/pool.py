"""Admission of Rune scripts: a few run at a time, a bounded number wait, the rest are refused.

A script is CPU-bound Python code, and every thread running one competes for the one GIL with
the event loop: with dozens of spinning scripts in threads the loop gets a sliver of the CPU,
other tools stop answering and the cancellation that should end a spin arrives seconds late.
So a node runs at most ``max_running`` scripts at once (each in a worker thread); further calls
wait in line, which counts against their deadline (the kernel's deadline covers the wait, and
the script's own deadline is the call's, so a call that waited long gets only what is left);
past ``max_waiting`` waiting calls a call is refused at once with ``unavailable`` (retryable)
and a ``retry_after`` hint.

A script awaiting the mesh (``toolmesh::call(...).await``) runs no Rune code meanwhile: it
gives its slot back for the wait and takes one again before it goes on, so scripts calling
other Rune tools on the same node cannot hold every slot while their callees wait for one.

Threads rather than processes: a process per script would isolate memory and CPU completely but
costs milliseconds per call and a copy of every compiled unit; the limits the interpreter
enforces in-thread (instruction budget, deadline, depth, memory budget) already stop a script,
and bounding how many run keeps the loop responsive.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable
from typing import Any

import anyio
from toolmesh import CallTimeout, ToolUnavailable

__all__ = ["DEFAULT_MAX_RUNNING", "DEFAULT_MAX_WAITING", "ScriptPool", "Slot"]

DEFAULT_MAX_RUNNING = 2
"""Scripts a node runs at once by default (``[rune] max_running``)."""

DEFAULT_MAX_WAITING = 200
"""Calls that may wait for a slot by default (``[rune] max_waiting``); more are refused."""

_MIN_RETRY_AFTER = 0.05
_MAX_RETRY_AFTER = 5.0
_SMOOTHING = 0.2  # weight of the newest run time in the moving average


class ScriptPool:
    """The slots of one node's Rune scripts."""

    def __init__(
        self, max_running: int = DEFAULT_MAX_RUNNING, max_waiting: int = DEFAULT_MAX_WAITING
    ) -> None:
        self.max_running = max_running
        self.max_waiting = max_waiting
        self._slots = anyio.Semaphore(max_running)
        self._typical = _MIN_RETRY_AFTER  # seconds a script holds a slot, smoothed

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot now."""
        return self._slots.statistics().tasks_waiting

    async def admit(self, tool: str, deadline: float | None) -> Slot:
        """Wait for a slot (refused with ``ToolUnavailable`` when too many calls wait already)."""
        if self._slots.value == 0 and self.waiting >= self.max_waiting:
            retry = min(
                _MAX_RETRY_AFTER, max(_MIN_RETRY_AFTER, self._typical * self.waiting / self.max_running)
            )
            raise ToolUnavailable(
                f"Rune tool {tool!r} not started: {self.max_running} scripts run and {self.waiting} wait"
                f" on this node (the [rune] max_waiting limit); retry in {retry:.2f} s or add nodes",
                details={"retry_after": round(retry, 3), "limit": self.max_waiting, "scope": "rune"},
            )
        slot = Slot(self, deadline)
        await slot.take()
        return slot

    def note(self, seconds: float) -> None:
        """A slot was held this long: the retry hint follows the typical run time."""
        self._typical += _SMOOTHING * (seconds - self._typical)


class Slot:
    """One call's right to run Rune code; given back while the script awaits the host."""

    def __init__(self, pool: ScriptPool, deadline: float | None) -> None:
        self._pool = pool
        self._deadline = deadline
        self._held = False
        self._closed = False
        self._since = 0.0

    async def take(self) -> None:
        await self._pool._slots.acquire()
        self._held, self._since = True, time.monotonic()
        if self._closed:  # the call ended while this waited: nobody runs on it any more
            self.give_back()

    def give_back(self) -> None:
        """Release the slot if held (idempotent)."""
        if self._held:
            self._held = False
            self._pool._slots.release()
            self._pool.note(time.monotonic() - self._since)

    def close(self) -> None:
        """The call ended (or was cancelled): release the slot for good."""
        self._closed = True
        self.give_back()

    async def outside(self, awaitable: Awaitable[Any]) -> Any:
        """Await a host coroutine without holding the slot, then take it again before the
        script goes on (by the call's deadline: a script never runs without a slot)."""
        self.give_back()
        try:
            return await awaitable
        finally:
            remaining = math.inf if self._deadline is None else self._deadline - time.monotonic()
            with anyio.CancelScope(shield=True), anyio.move_on_after(max(remaining, 0.0)):
                await self.take()
            if not self._held:
                raise CallTimeout("the call's deadline passed while its script waited for a free slot")
