"""``WorkerPool``: warm Deno worker processes, one group per tool (or per ``Profile``).

With ``isolation="tool"`` (the default) every tool has processes of its own:
the node's resident-memory watchdog measures a process, so only then does a
tool's overrun of ``memory_mb`` — array buffers included, which V8's heap
limit does not count — end that tool's calls and no other tool's.  With
``isolation="profile"`` tools with equal profiles share processes (fewer
processes; an overrun there fails every call in flight on the process).
Tools with different profiles never share a process.  A call goes to the
least busy live process of its group; a process that dies is replaced in the
background and gets every tool of its group loaded again, so the next call
finds a warm worker.  A group whose processes had no call for ``idle_stop_s``
seconds is stopped, so a node serving many rarely used tools does not hold a
process per tool; its next call starts it again (and loads its tools).

Every call gets a fresh isolate, and Deno starts a Web Worker on the thread
of the process that asks for it (10-15 ms of CPU): one process starts at
most some 60-80 isolates a second, however many spares it keeps.  A group
whose calls come faster than ``BURST_RATE`` gets up to ``burst`` extra
processes, started off the call path; calls alternate between the processes,
so isolates are started on several cores.  Extra processes stop once the
rate stayed below half of that for ``BURST_LINGER`` seconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal

from .permissions import Profile
from .worker import CallOutcome, DenoWorker, RequestHandler, WorkerCrashed

__all__ = ["Isolation", "PoolTool", "WorkerGroup", "WorkerPool"]

Isolation = Literal["tool", "profile"]

_log = logging.getLogger("toolmesh.sandbox.pool")

BURST_RATE = 30.0
"""Calls a second of one group past which a single process spends much of its time starting isolates."""
BURST_LINGER = 3.0
"""Seconds the call rate must stay below ``BURST_RATE / 2`` before a group's extra processes stop."""
_RATE_WINDOW = 1.0


@dataclass(frozen=True, slots=True)
class PoolTool:
    """What the pool needs of a tool: its name, code and profile."""

    name: str
    language: str
    source: str
    profile: Profile

    @property
    def fingerprint(self) -> str:
        """Changes whenever the code does (a reload is needed)."""
        return hashlib.sha256(f"{self.language}\0{self.source}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class WorkerGroup:
    """The processes a tool may run in: its profile's, and its own when ``tool`` is set."""

    profile: Profile
    tool: str | None = None


class WorkerPool:
    """Warm worker processes per group (tool or profile); ``size`` processes per group."""

    def __init__(self, *, deno: str | None, size: int = 1, log_limit: int = 65536, max_idle: int = 2,
                 rss_base_mb: int = 256, max_result: int = 1024 * 1024, isolation: Isolation = "tool",
                 idle_stop_s: float = 0.0, burst: int = 0) -> None:
        self.deno = deno
        self.size = size
        self.isolation = isolation
        self.log_limit = log_limit
        self.max_idle = max_idle
        self.rss_base_mb = rss_base_mb
        self.max_result = max_result
        self.idle_stop_s = idle_stop_s
        self.burst = burst
        self.burst_rate = BURST_RATE
        """Calls a second of one group that start an extra process (when ``burst`` allows one)."""
        self.tools: dict[str, PoolTool] = {}
        self.workers: dict[WorkerGroup, list[DenoWorker]] = {}
        self.replaced = 0
        """Processes started to replace dead ones (for tests and stats)."""
        self.stopped = 0
        """Processes stopped for want of calls: idle groups, extra processes after a burst (for tests and stats)."""
        self._used: dict[WorkerGroup, float] = {}
        """When each group last started or ended a call, or started a process."""
        self._entering: dict[WorkerGroup, int] = {}
        """Calls of each group on their way to a process (not yet counted in its ``inflight``)."""
        self._idle_watch: asyncio.Task[None] | None = None
        self._arrivals: dict[WorkerGroup, deque[float]] = {}
        self._busy: dict[WorkerGroup, float] = {}
        """When each group last had calls at more than ``BURST_RATE / 2`` a second."""
        self._extra: weakref.WeakSet[DenoWorker] = weakref.WeakSet()
        self._growing: set[WorkerGroup] = set()
        self._picked: weakref.WeakKeyDictionary[DenoWorker, float] = weakref.WeakKeyDictionary()
        self._locks: dict[WorkerGroup, asyncio.Lock] = {}
        self._started: set[DenoWorker] = set()
        self._background: set[asyncio.Task[Any]] = set()
        self._closed = False

    async def load(self, tool: PoolTool) -> str | None:
        """Register ``tool`` and load it into its profile's processes; returns a load error or ``None``."""
        previous = self.tools.get(tool.name)
        if previous is not None and self.group_of(previous) != self.group_of(tool):
            self.forget({tool.name})
        self.tools[tool.name] = tool
        try:
            for worker in await self._workers(self.group_of(tool)):
                error = await worker.load(tool.name, tool.language, tool.source, tool.fingerprint)
                if error is not None:
                    return f"the code does not load: {error.get('name', 'Error')}: {error.get('message', '')}".strip()
        except WorkerCrashed as exc:
            return f"the sandbox cannot run it: {exc}"
        return None

    def group_of(self, tool: PoolTool) -> WorkerGroup:
        """The group of processes ``tool`` runs in."""
        return WorkerGroup(tool.profile, tool.name if self.isolation == "tool" else None)

    def forget(self, names: set[str]) -> None:
        """Drop tools no longer served, with their spare isolates (and their own processes)."""
        for name in names:
            self.tools.pop(name, None)
            for group, workers in list(self.workers.items()):
                if group.tool == name:
                    del self.workers[group]
                    for worker in workers:
                        self._in_background(self._close(worker))
                    continue
                for worker in workers:
                    worker.unload(name)

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        timeout_ms: int,
        secrets: dict[str, str],
        request: dict[str, Any],
        handler: RequestHandler,
    ) -> CallOutcome:
        """Run a call of a loaded tool on the least busy live process of its group."""
        tool = self.tools[name]
        key = self.group_of(tool)
        # Counted from here on, so the idle stop never takes a process this call is about to use.
        self._entering[key] = self._entering.get(key, 0) + 1
        self._used[key] = time.monotonic()
        self._count_arrival(key)
        try:
            workers = [worker for worker in await self._workers(key) if worker.usable]
            if not workers:
                raise WorkerCrashed("no live Deno worker for this tool")
            # Among equally busy processes the one used least recently: it had the longest time to start spares.
            worker = min(workers, key=lambda candidate: (candidate.inflight, self._picked.get(candidate, 0.0)))
            self._picked[worker] = time.monotonic()
            await worker.load(tool.name, tool.language, tool.source, tool.fingerprint)
            call = worker.call(name, arguments, timeout_ms=timeout_ms, secrets=secrets, request=request,
                               handler=handler)
        finally:
            self._entering[key] -= 1
        try:
            return await call
        finally:
            self._used[key] = time.monotonic()

    def _count_arrival(self, key: WorkerGroup) -> None:
        now = time.monotonic()
        arrivals = self._arrivals.setdefault(key, deque(maxlen=256))
        arrivals.append(now)
        while arrivals[0] < now - _RATE_WINDOW:
            arrivals.popleft()
        rate = len(arrivals) / _RATE_WINDOW
        if rate >= self.burst_rate / 2:
            self._busy[key] = now
        group = self.workers.get(key, [])
        if (rate >= self.burst_rate and self.burst and group and key not in self._growing
                and len(group) < self.size + self.burst):
            self._growing.add(key)
            self._in_background(self._grow(key))

    async def _grow(self, key: WorkerGroup) -> None:
        try:
            worker = await self._start(key)
        except WorkerCrashed as exc:
            _log.warning("could not start an extra deno worker: %s", exc)
            return
        finally:
            self._growing.discard(key)
        async with self._locks.setdefault(key, asyncio.Lock()):
            group = self.workers.get(key)
            if group is not None and not self._closed and len(group) < self.size + self.burst:
                group.append(worker)
                self._extra.add(worker)
                self._used[key] = time.monotonic()
                return
        await self._close(worker)

    async def close(self) -> None:
        """Stop every process."""
        self._closed = True
        if self._idle_watch is not None:
            self._idle_watch.cancel()
            await asyncio.gather(self._idle_watch, return_exceptions=True)
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self.workers.clear()
        # Every process ever started, including dead ones and any a cancelled replacement left behind.
        await asyncio.gather(*(worker.close() for worker in self._started), return_exceptions=True)
        self._started.clear()

    def pids(self, tool: str | None = None) -> list[int]:
        """Process ids of the live workers (of those running ``tool`` when given)."""
        return [
            worker.pid
            for group in self.workers.values()
            for worker in group
            if worker.alive and worker.pid is not None and (tool is None or tool in worker.loaded)
        ]

    async def _workers(self, key: WorkerGroup) -> list[DenoWorker]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            group = self.workers.setdefault(key, [])
            for stale in [worker for worker in group if not worker.usable]:
                group.remove(stale)
                self._in_background(self._close(stale))
            while len(group) < self.size:
                group.append(await self._start(key))
                self._used[key] = time.monotonic()
            if (self.idle_stop_s > 0 or self.burst) and self._idle_watch is None and not self._closed:
                self._idle_watch = asyncio.ensure_future(self._stop_idle())
            return list(group)

    async def _stop_idle(self) -> None:
        while True:
            await asyncio.sleep(min(max(self.idle_stop_s / 4, 0.05), 0.5) if self.idle_stop_s else 0.5)
            calm = time.monotonic() - BURST_LINGER
            for key in [key for key, group in self.workers.items() if len(group) > self.size]:
                if self._busy.get(key, 0.0) < calm:
                    self._shrink(key)
            if not self.idle_stop_s:
                continue
            due = time.monotonic() - self.idle_stop_s
            for key in [key for key, group in self.workers.items() if group and self._used.get(key, 0.0) < due]:
                async with self._locks.setdefault(key, asyncio.Lock()):
                    group = self.workers.get(key, [])
                    busy = self._entering.get(key, 0) or any(worker.inflight for worker in group)
                    if busy or self._used.get(key, 0.0) >= due:
                        continue
                    del self.workers[key]
                for worker in group:
                    self.stopped += 1
                    self._in_background(self._close(worker))

    async def _start(self, key: WorkerGroup) -> DenoWorker:
        profile = key.profile
        if self.deno is None:
            raise WorkerCrashed("Deno is not installed: pip install 'toolmesh[sandbox]' (the deno package)")
        worker = DenoWorker(profile, deno=self.deno, log_limit=self.log_limit, max_idle=self.max_idle,
                            rss_base_mb=self.rss_base_mb, max_result=self.max_result)
        self._started.add(worker)
        await worker.start()
        worker.on_exit = self._on_exit
        worker.on_recycle = self._on_recycle
        for tool in [tool for tool in self.tools.values() if self.group_of(tool) == key]:
            error = await worker.load(tool.name, tool.language, tool.source, tool.fingerprint)
            if error is not None:
                _log.warning("tool %s did not load in a new worker: %s", tool.name, error.get("message"))
        return worker

    def _shrink(self, key: WorkerGroup) -> None:
        group = self.workers[key]
        for worker in [worker for worker in group if worker in self._extra and not worker.inflight]:
            if len(group) <= self.size:
                break
            group.remove(worker)
            self.stopped += 1
            self._in_background(self._close(worker))

    async def _close(self, worker: DenoWorker) -> None:
        # A process being recycled finishes its calls in flight first (each has its own timeout).
        while worker.alive and worker.inflight:
            await asyncio.sleep(0.05)
        await worker.close()
        self._started.discard(worker)

    def _on_exit(self, worker: DenoWorker) -> None:
        key = next((key for key, group in self.workers.items() if worker in group), None)
        if self._closed or key is None:
            return
        _log.warning("deno worker %s stopped (%s); replacing it", worker.pid, worker.crashed)
        self._in_background(self._replace(key))

    def _on_recycle(self, worker: DenoWorker) -> None:
        # The worker logged why; start its successor now so the next call need not wait for it.
        key = next((key for key, group in self.workers.items() if worker in group), None)
        if not self._closed and key is not None:
            self._in_background(self._replace(key))

    def _in_background(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _replace(self, key: WorkerGroup) -> None:
        try:
            await self._workers(key)
            self.replaced += 1
        except WorkerCrashed as exc:
            _log.error("could not replace a deno worker: %s", exc)
        finally:
            await asyncio.sleep(0)
