"""Tools for reliability tests: each records its executions in the file named by ``TOOLMESH_TEST_RECORD``.

A line ``start <key> <pid>`` is written when a call begins and ``done <key> <pid>``
when its side effect is complete, so a test can tell which process ran a call,
kill it mid-call, and count how often each call really executed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import toolmesh


def _record(event: str, key: str) -> None:
    path = os.environ.get("TOOLMESH_TEST_RECORD")
    if path:
        # one short O_APPEND write per line: lines from several processes never interleave
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{event} {key} {os.getpid()}\n")


@toolmesh.tool
def record(key: str, seconds: float = 0.0, context: toolmesh.CallContext | None = None) -> int:
    """Sleep ``seconds``, record one execution of ``key``, and return this process id.

    On a second attempt of a durable call it first looks for its own earlier
    effect (as a tool with external side effects should) and records a ``skip``
    instead of doing it again.
    """
    _record("start", key)
    time.sleep(seconds)
    attempt = context.state.get("toolmesh.durable_attempt", 1) if context is not None else 1
    path = os.environ.get("TOOLMESH_TEST_RECORD")
    if attempt > 1 and path and f"done {key} " in Path(path).read_text(encoding="utf-8"):
        _record("skip", key)
    else:
        _record("done", key)
    return os.getpid()


@toolmesh.tool
def spin(n: int) -> int:
    """CPU-bound: sum of i*i for i below ``n``."""
    return sum(i * i for i in range(n))


@toolmesh.tool
async def pause(seconds: float) -> float:
    """I/O-bound: wait ``seconds`` without using the CPU."""
    import anyio

    await anyio.sleep(seconds)
    return seconds


@toolmesh.tool(max_concurrency=2)
async def narrow(seconds: float) -> float:
    """At most two calls at once per node; waits ``seconds``."""
    import anyio

    await anyio.sleep(seconds)
    return seconds


@toolmesh.tool(cache=60)
def stamp(key: str) -> str:
    """A cached tool whose value names the process that computed it."""
    _record("done", key)
    return f"{key}@{os.getpid()}"
