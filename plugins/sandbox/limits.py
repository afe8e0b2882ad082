"""Enforcing ``limits`` on a worker process: CPU share (duty-cycle throttle), an RSS watchdog, and
``TerminationWatch``, which notices isolates that outlive their termination.

The V8 heap limit (``memory_mb``) is set per isolate with
``--max-old-space-size``; V8 aborts the process when an isolate exceeds it.
Memory outside the V8 heap (typed arrays, buffers) is caught by the RSS
watchdog here.

CPU share: every ``period`` the watch reads the process's CPU time from
``/proc/<pid>/stat``; when it used more than ``cpu_percent`` of one core over
that period it is stopped (``SIGSTOP``) for exactly as long as brings its
average back to the share, then continued (``SIGCONT``) — the mechanism of
``cpulimit``.  Precision: the share holds over windows of a few periods
(default 50 ms); within one period a tool may briefly run at full speed.
Linux only (``/proc``); elsewhere CPU share and RSS are not enforced.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import anyio

__all__ = ["RETIRE_GRACE", "ResourceWatch", "TerminationWatch", "process_cpu_seconds", "process_rss_bytes",
           "process_thread_names"]

RETIRE_GRACE = 1.0
"""Seconds a terminated isolate's thread may take to end before its process counts as running stray code."""

_log = logging.getLogger("toolmesh.sandbox.limits")
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def process_cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds used by ``pid`` so far (``None`` if unknown)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces: split after its closing parenthesis.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def process_rss_bytes(pid: int) -> int | None:
    """Resident set size of ``pid`` in bytes (``None`` if unknown)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


def process_thread_names(pid: int) -> list[str] | None:
    """Names of the threads of ``pid`` (``None`` if the process is gone)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    names = []
    for task in tasks:
        try:
            names.append((task / "comm").read_text().strip())
        except OSError:
            continue  # the thread ended while we looked
    return names


class ResourceWatch:
    """Throttle a process to ``cpu_percent`` of one core and kill it past an RSS limit.

    ``rss_limit`` is called on each sample with the RSS seen (the allowance
    depends on the calls in flight); ``on_exceeded`` is called once with the
    RSS seen, before the kill.
    """

    def __init__(
        self,
        pid: int,
        *,
        cpu_percent: int,
        rss_limit: Callable[[int], int],
        on_exceeded: Callable[[int], None],
        period: float = 0.05,
    ) -> None:
        self.pid = pid
        self.share = cpu_percent / 100.0
        self.rss_limit = rss_limit
        self.on_exceeded = on_exceeded
        self.period = period
        self.stopped_for = 0.0
        """Total seconds the process spent stopped by the throttle (for tests and stats)."""

    async def run(self) -> None:
        """Sample until the process is gone; cancel to stop watching."""
        last_cpu = process_cpu_seconds(self.pid)
        if last_cpu is None:
            return
        last_time = time.monotonic()
        while True:
            await anyio.sleep(self.period)
            cpu = process_cpu_seconds(self.pid)
            if cpu is None:
                return
            rss = process_rss_bytes(self.pid) or 0
            if rss > self.rss_limit(rss):
                self.on_exceeded(rss)
                return
            now = time.monotonic()
            if self.share < 1.0:
                used = cpu - last_cpu
                # Wall time needed for `used` CPU seconds at the allowed share, minus what passed.
                pause = used / self.share - (now - last_time)
                if pause > 0.002:
                    await self._pause(min(pause, 1.0))
                    now = time.monotonic()
                    cpu = process_cpu_seconds(self.pid) or cpu
            last_cpu, last_time = cpu, now

    async def _pause(self, seconds: float) -> None:
        try:
            os.kill(self.pid, signal.SIGSTOP)
        except ProcessLookupError:
            return
        try:
            await anyio.sleep(seconds)
        finally:
            self.stopped_for += seconds
            try:
                os.kill(self.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


class TerminationWatch:
    """Notice tool isolates whose code outlived ``Worker.terminate()``.

    Deno cannot interrupt code that never yields to its event loop (a busy
    loop, endless microtasks); such an isolate keeps its thread, which Deno
    names ``worker-<n>`` after the isolate's number in the process.  Every
    isolate the supervisor terminates is reported with ``retired``; ``run``
    calls ``on_stuck`` with the count once any of their threads is still
    there ``RETIRE_GRACE`` seconds later.
    """

    def __init__(self, pid: int, on_stuck: Callable[[int], None], *, period: float = 0.25) -> None:
        self.pid = pid
        self.on_stuck = on_stuck
        self.period = period
        self.active = process_thread_names(pid) is not None
        """False where threads cannot be listed (no ``/proc``): nothing is watched."""
        self._retired: dict[int, float] = {}

    @property
    def pending(self) -> bool:
        """True while some terminated isolate may still hold its thread."""
        return bool(self._retired)

    def retired(self, isolate: int) -> None:
        """The supervisor terminated isolate number ``isolate``."""
        if self.active:
            self._retired[isolate] = time.monotonic()

    async def run(self) -> None:
        """Check until the process is gone or ``on_stuck`` was called; cancel to stop."""
        while self.active:
            await asyncio.sleep(self.period)
            due = time.monotonic() - RETIRE_GRACE
            if not any(at < due for at in self._retired.values()):
                continue
            names = process_thread_names(self.pid)
            if names is None:
                self.active = False
                break
            threads = {int(name[7:]) for name in names if name.startswith("worker-") and name[7:].isdigit()}
            self._retired = {isolate: at for isolate, at in self._retired.items() if isolate in threads}
            stuck = sum(1 for at in self._retired.values() if at < due)
            if stuck:
                self.on_stuck(stuck)
                return
        self._retired.clear()
