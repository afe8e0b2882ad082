"""``WorkerPool``: warm Deno worker processes, one group per ``Profile``.

Tools with different profiles never share a process.  A call goes to the
least busy live process of its tool's profile; a process that dies is
replaced in the background and gets every tool of its profile loaded again,
so the next call finds a warm worker.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from .permissions import Profile
from .worker import CallOutcome, DenoWorker, RequestHandler, WorkerCrashed

__all__ = ["PoolTool", "WorkerPool"]

_log = logging.getLogger("toolmesh.sandbox.pool")


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


class WorkerPool:
    """Warm worker processes per profile; ``size`` processes per profile."""

    def __init__(self, *, deno: str | None, size: int = 1, log_limit: int = 65536, max_idle: int = 2,
                 rss_base_mb: int = 256, max_result: int = 1024 * 1024) -> None:
        self.deno = deno
        self.size = size
        self.log_limit = log_limit
        self.max_idle = max_idle
        self.rss_base_mb = rss_base_mb
        self.max_result = max_result
        self.tools: dict[str, PoolTool] = {}
        self.workers: dict[Profile, list[DenoWorker]] = {}
        self.replaced = 0
        """Processes started to replace dead ones (for tests and stats)."""
        self._locks: dict[Profile, asyncio.Lock] = {}
        self._started: set[DenoWorker] = set()
        self._background: set[asyncio.Task[Any]] = set()
        self._closed = False

    async def load(self, tool: PoolTool) -> str | None:
        """Register ``tool`` and load it into its profile's processes; returns a load error or ``None``."""
        self.tools[tool.name] = tool
        try:
            for worker in await self._workers(tool.profile):
                error = await worker.load(tool.name, tool.language, tool.source, tool.fingerprint)
                if error is not None:
                    return f"the code does not load: {error.get('name', 'Error')}: {error.get('message', '')}".strip()
        except WorkerCrashed as exc:
            return f"the sandbox cannot run it: {exc}"
        return None

    def forget(self, names: set[str]) -> None:
        """Drop tools no longer served, with their warm isolates."""
        for name in names:
            self.tools.pop(name, None)
            for group in self.workers.values():
                for worker in group:
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
        """Run a call of a loaded tool on the least busy live process of its profile."""
        tool = self.tools[name]
        workers = [worker for worker in await self._workers(tool.profile) if worker.alive]
        if not workers:
            raise WorkerCrashed("no live Deno worker for this tool")
        worker = min(workers, key=lambda candidate: candidate.inflight)
        await worker.load(tool.name, tool.language, tool.source, tool.fingerprint)
        return await worker.call(name, arguments, timeout_ms=timeout_ms, secrets=secrets, request=request,
                                 handler=handler)

    async def close(self) -> None:
        """Stop every process."""
        self._closed = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self.workers.clear()
        # Every process ever started, including dead ones and any a cancelled replacement left behind.
        await asyncio.gather(*(worker.close() for worker in self._started), return_exceptions=True)
        self._started.clear()

    def pids(self) -> list[int]:
        """Process ids of the live workers."""
        return [w.pid for group in self.workers.values() for w in group if w.alive and w.pid is not None]

    async def _workers(self, profile: Profile) -> list[DenoWorker]:
        lock = self._locks.setdefault(profile, asyncio.Lock())
        async with lock:
            group = self.workers.setdefault(profile, [])
            for dead in [worker for worker in group if not worker.alive]:
                group.remove(dead)
                self._in_background(self._close(dead))
            while len(group) < self.size:
                group.append(await self._start(profile))
            return list(group)

    async def _start(self, profile: Profile) -> DenoWorker:
        if self.deno is None:
            raise WorkerCrashed("Deno is not installed: pip install 'toolmesh[sandbox]' (the deno package)")
        worker = DenoWorker(profile, deno=self.deno, log_limit=self.log_limit, max_idle=self.max_idle,
                            rss_base_mb=self.rss_base_mb, max_result=self.max_result)
        self._started.add(worker)
        await worker.start()
        worker.on_exit = self._on_exit
        for tool in [tool for tool in self.tools.values() if tool.profile == profile]:
            error = await worker.load(tool.name, tool.language, tool.source, tool.fingerprint)
            if error is not None:
                _log.warning("tool %s did not load in a new worker: %s", tool.name, error.get("message"))
        return worker

    async def _close(self, worker: DenoWorker) -> None:
        await worker.close()
        self._started.discard(worker)

    def _on_exit(self, worker: DenoWorker) -> None:
        if self._closed:
            return
        _log.warning("deno worker %s stopped (%s); replacing it", worker.pid, worker.crashed)
        self._in_background(self._replace(worker.profile))

    def _in_background(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _replace(self, profile: Profile) -> None:
        try:
            await self._workers(profile)
            self.replaced += 1
        except WorkerCrashed as exc:
            _log.error("could not replace a deno worker: %s", exc)
        finally:
            await asyncio.sleep(0)
