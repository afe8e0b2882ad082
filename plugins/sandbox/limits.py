"""Enforcing ``limits`` on a worker process: CPU share (duty-cycle throttle) and an RSS watchdog.

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

import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import anyio

__all__ = ["ResourceWatch", "process_cpu_seconds", "process_rss_bytes"]

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


class ResourceWatch:
    """Throttle a process to ``cpu_percent`` of one core and kill it past an RSS limit.

    ``rss_limit`` is called on each sample (the allowance depends on the calls
    in flight); ``on_exceeded`` is called once with the RSS seen, before the kill.
    """

    def __init__(
        self,
        pid: int,
        *,
        cpu_percent: int,
        rss_limit: Callable[[], int],
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
            if rss > self.rss_limit():
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
