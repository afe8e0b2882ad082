"""Await a step under an absolute deadline, cheaply on the hot path.

A timer per call is the expensive part of a deadline: ``anyio.fail_after``
costs about 20 µs per call on asyncio and ``asyncio.timeout_at`` about 11 µs
with uvloop, a fair share of a whole small call.  Instead, one
:class:`DeadlineWatch` per event loop keeps every pending deadline in a heap
behind a single loop timer, set for the earliest one: adding and removing a
deadline costs about a microsecond.  Any other anyio backend keeps the
portable ``anyio.move_on_after``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
import weakref
from collections.abc import Awaitable
from typing import TypeVar

import anyio
from toolmesh._errors import DeadlineExceeded

__all__ = ["DeadlineExceeded", "DeadlineWatch", "within_deadline"]

T = TypeVar("T")


class _Entry:
    __slots__ = ("active", "expired", "task")

    def __init__(self, task: asyncio.Task[object]) -> None:
        self.task = task
        self.active = True
        self.expired = False


class DeadlineWatch:
    """Cancels tasks whose deadline passed, with one loop timer for all of them (one watch per loop)."""

    _COMPACT_SLACK = 1024  # finished entries tolerated in the heap before it is rebuilt

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._heap: list[tuple[float, int, _Entry]] = []  # tuples: compared in C, not by a Python __lt__
        self._live = 0
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")

    def add(self, at: float, task: asyncio.Task[object]) -> _Entry:
        """Cancel ``task`` at loop time ``at`` unless :meth:`remove` comes first."""
        entry = _Entry(task)
        heapq.heappush(self._heap, (at, next(self._order), entry))
        self._live += 1
        if at < self._timer_at:
            self._arm(at)
        if len(self._heap) > 2 * self._live + self._COMPACT_SLACK:
            # Finished calls leave their entries behind until their deadline: drop them in one pass.
            self._heap = [kept for kept in self._heap if kept[2].active]
            heapq.heapify(self._heap)
        return entry

    def remove(self, entry: _Entry) -> None:
        """The step of ``entry`` is over: it is no longer cancelled at its deadline."""
        if entry.active:
            entry.active = False
            self._live -= 1

    def _arm(self, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_at(at, self._expire)
        self._timer_at = at

    def _expire(self) -> None:
        self._timer, self._timer_at = None, float("inf")
        now = self._loop.time()
        heap = self._heap
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)[2]
            if entry.active:
                entry.active, entry.expired = False, True
                self._live -= 1
                entry.task.cancel()
        while heap and not heap[0][2].active:
            heapq.heappop(heap)
        if heap:
            self._arm(heap[0][0])


_watches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, DeadlineWatch] = weakref.WeakKeyDictionary()


def _watch(loop: asyncio.AbstractEventLoop) -> DeadlineWatch:
    watch = _watches.get(loop)
    if watch is None:
        watch = _watches[loop] = DeadlineWatch(loop)
    return watch


async def within_deadline(deadline: float | None, step: Awaitable[T]) -> T:
    """Await ``step``; raise :class:`DeadlineExceeded` if ``deadline`` (``time.monotonic``) passes first.

    A ``TimeoutError`` the step raises itself (an upstream call timing out)
    propagates unchanged, and so does a cancellation from anywhere else.
    """
    if deadline is None:
        return await step
    remaining = deadline - time.monotonic()
    loop = asyncio._get_running_loop()
    task = asyncio.current_task(loop) if loop is not None else None
    if loop is None or task is None:  # trio, through anyio
        with anyio.move_on_after(max(0.0, remaining)):
            return await step
        raise DeadlineExceeded
    watch = _watch(loop)
    entry = watch.add(loop.time() + remaining, task)
    swallowed = True
    try:
        return await step
    except asyncio.CancelledError:
        if entry.expired:
            swallowed = False
            if task.uncancel() == 0:  # ours alone: nobody else cancelled the task meanwhile
                raise DeadlineExceeded from None
        raise
    finally:
        watch.remove(entry)
        if entry.expired and swallowed:
            task.uncancel()  # the step caught our cancellation and ended otherwise: take it back
