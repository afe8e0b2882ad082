"""Process lifetime: a tool's Deno processes stop after ``idle_stop_s`` without a call and start again on demand.

The processes are real; that a process is gone is read from /proc.  A call in
flight keeps its process however long it runs, and a tool started again
still keeps every containment guarantee (its left-behind work stops).
"""

from __future__ import annotations

import sys

import anyio
import pytest
import toolmesh
from toolmesh.contracts import ToolRequest
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.config import SandboxSettings
from toolmesh.plugins.sandbox.limits import (
    RETIRE_GRACE,
    process_cpu_seconds,
    process_rss_bytes,
    process_thread_names,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the Deno processes through /proc"),
]

SLEEPER = """
export async function execute(i) {
  await new Promise((r) => setTimeout(r, i.ms));
  if (i.leave) setInterval(() => { const end = Date.now() + 40; while (Date.now() < end) {} }, 0);
  return { n: i.n }
}"""


async def _gone(pid: int) -> None:
    with anyio.fail_after(10):
        while process_rss_bytes(pid) is not None:
            await anyio.sleep(0.05)


async def test_an_idle_tool_process_stops_and_the_next_call_starts_it(write_tool, tool_dir, kernel_for) -> None:
    write_tool("sleeper", SLEEPER, limits={"memory_mb": 64, "timeout_ms": 5000, "cpu_percent": 100})
    write_tool("other", "export function execute(i) { return { n: i.n } }")
    async with kernel_for([str(tool_dir)], idle_stop_s=0.4) as kernel:
        pool = sandbox.sandbox_of(kernel).pool
        [first] = pool.pids("sleeper")
        # A call longer than idle_stop_s keeps its process the whole time.
        long = await kernel.call(ToolRequest(id="1", tool="sleeper", arguments={"n": 1, "ms": 1200}))
        kept = pool.pids("sleeper")
        await _gone(first)
        stopped = pool.pids("sleeper")
        # Started again by the next call, with the tool loaded, and still contained: work left behind stops.
        again = await kernel.call(ToolRequest(id="2", tool="sleeper", arguments={"n": 2, "ms": 0, "leave": True}))
        [second] = pool.pids("sleeper")
        before = process_cpu_seconds(second) or 0.0
        await anyio.sleep(0.3)
        spun = (process_cpu_seconds(second) or before) - before
        other = await kernel.call(ToolRequest(id="3", tool="other", arguments={"n": 3}))
    assert long.structured_content == {"n": 1}, long
    assert kept == [first]
    assert stopped == []
    assert again.structured_content == {"n": 2}, again
    assert second != first
    assert spun < 0.15, spun
    assert other.structured_content == {"n": 3}, other
    assert pool.stopped >= 2  # both tools' processes went idle


async def test_idle_stop_can_be_turned_off_and_refuses_a_negative_value(write_tool, tool_dir, kernel_for) -> None:
    write_tool("kept", "export function execute() { return 1 }")
    async with kernel_for([str(tool_dir)], idle_stop_s=0) as kernel:
        pool = sandbox.sandbox_of(kernel).pool
        [pid] = pool.pids("kept")
        await anyio.sleep(0.5)
        assert pool.pids("kept") == [pid]
    with pytest.raises(toolmesh.ConfigError) as caught:
        SandboxSettings.from_table({"idle_stop_s": -1})
    assert "sandbox.idle_stop_s must not be negative" in str(caught.value)


async def test_tools_load_side_by_side_and_a_broken_one_stays_unavailable(write_tool, tool_dir, kernel_for) -> None:
    for n in range(4):
        write_tool(f"fine{n}", f"export function execute() {{ return {n} }}")
    write_tool("broken", "export function execute( {", language="typescript")
    async with kernel_for([str(tool_dir)]) as kernel:
        results = [await kernel.call(ToolRequest(id=str(n), tool=f"fine{n}")) for n in range(4)]
        broken = await kernel.call(ToolRequest(id="b", tool="broken"))
        pids = {name: sandbox.sandbox_of(kernel).pool.pids(name) for name in ("fine0", "fine1", "broken")}
    assert [result.structured_content for result in results] == [0, 1, 2, 3]
    assert broken.error is not None and broken.error.code == "unavailable", broken
    assert "the code does not load" in broken.error.message, broken.error.message
    assert len({*pids["fine0"], *pids["fine1"]}) == 2


async def test_a_burst_of_calls_gets_an_extra_process_that_stops_afterwards(write_tool, tool_dir, kernel_for) -> None:
    write_tool("busy", "export function execute(i) { return { n: i.n } }")
    async with kernel_for([str(tool_dir)], burst_workers=1, max_idle=2) as kernel:
        pool = sandbox.sandbox_of(kernel).pool
        pool.burst_rate = 5  # whatever this machine's speed, 60 calls in a row are a burst
        [first] = pool.pids("busy")
        seen: set[int] = set()
        results = []
        for n in range(60):
            results.append(await kernel.call(ToolRequest(id=str(n), tool="busy", arguments={"n": n})))
            seen.update(pool.pids("busy"))
        with anyio.fail_after(15):
            while len(pool.pids("busy")) > 1:
                await anyio.sleep(0.1)
        after = pool.pids("busy")
        last = await kernel.call(ToolRequest(id="last", tool="busy", arguments={"n": -1}))
    assert [result.structured_content for result in results] == [{"n": n} for n in range(60)]
    assert len(seen) == 2 and first in seen, seen
    assert after == [first]
    assert pool.replaced == 0
    assert last.structured_content == {"n": -1}


@pytest.mark.slow
async def test_quiet_after_heavy_churn_does_not_replace_the_process(write_tool, tool_dir, kernel_for) -> None:
    # Deno's own resident size grows with the isolates it started; a quiet moment right after a long run of
    # calls, while terminated isolates are still being reaped, must not count that as memory held by no call.
    write_tool("churn", "export function execute(i) { return i.n }")
    async with kernel_for([str(tool_dir)], burst_workers=0, max_idle=2) as kernel:
        pool = sandbox.sandbox_of(kernel).pool
        [pid] = pool.pids("churn")
        for round_ in range(3):
            async with anyio.create_task_group() as group:
                for k in range(8):
                    group.start_soon(_calls, kernel, k, 50)
            await anyio.sleep(RETIRE_GRACE + 0.6)
        assert pool.pids("churn") == [pid]
        assert pool.replaced == 0


async def _calls(kernel: toolmesh.Kernel, k: int, count: int) -> None:
    for i in range(count):
        result = await kernel.call(ToolRequest(id=f"{k}-{i}", tool="churn", arguments={"n": i}))
        assert result.structured_content == i, result


def _isolate_threads(pid: int) -> int:
    return sum(1 for name in process_thread_names(pid) or [] if name.startswith("worker-"))


async def _settles_at(pid: int, count: int) -> int:
    with anyio.move_on_after(10):
        while _isolate_threads(pid) != count:
            await anyio.sleep(0.05)
    await anyio.sleep(0.3)  # and stays there
    return _isolate_threads(pid)


async def test_spares_follow_the_calls_in_flight(write_tool, tool_dir, kernel_for) -> None:
    write_tool("wait", "export async function execute(i) { await new Promise((r) => setTimeout(r, 200)); return i.n }")
    async with kernel_for([str(tool_dir)], max_idle=3) as kernel:
        [pid] = sandbox.sandbox_of(kernel).pool.pids("wait")
        # A tool that had no call keeps one spare, not max_idle of them (each holds some MiB).
        quiet = await _settles_at(pid, 1)
        async with anyio.create_task_group() as group:
            for n in range(3):
                group.start_soon(kernel.call, ToolRequest(id=str(n), tool="wait", arguments={"n": n}))
        busy = await _settles_at(pid, 3)
        many = [await kernel.call(ToolRequest(id=f"m{n}", tool="wait", arguments={"n": n})) for n in range(2)]
    assert quiet == 1
    assert busy == 3
    assert [result.structured_content for result in many] == [0, 1]
