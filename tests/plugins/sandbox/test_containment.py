"""Containment: nothing of a finished call keeps running in Deno, and memory_mb covers all memory a call holds.

Each test attacks a real Deno worker: work left behind after ``execute``
returns (intervals, growing buffers, endless microtasks, a self-calling
chain) must stop when the call ends — measured on the Deno process through
/proc — and a tool over its ``memory_mb`` in array buffers fails alone while
other tools answer.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import msgspec
import pytest
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ToolRequest, ToolResult
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.limits import RETIRE_GRACE, process_cpu_seconds, process_rss_bytes
from toolmesh.testing import running_node

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="measures the Deno process through /proc"),
]

MIB = 1024 * 1024
QUIET = 0.6
"""Seconds over which a worker with no call in flight is watched."""

# (code run by the call, whether the call itself answers, whether the process survives: None when either may)
LEFT_BEHIND = [
    pytest.param("setInterval(() => { const end = Date.now() + 40; while (Date.now() < end) {} }, 0);", True, True,
                 id="spinning-interval"),
    pytest.param("const keep = []; setInterval(() => keep.push(new Uint8Array(16 * 1024 * 1024).fill(1)), 5);",
                 True, True, id="growing-buffers"),
    pytest.param("(function again() { setTimeout(again, 0); new Uint8Array(8 * 1024 * 1024).fill(2) })();", True, True,
                 id="timer-chain"),
    # Code that never yields survives Worker.terminate(): its process is recycled instead.
    # The supervisor may terminate the isolate before its timer fires: then the process is kept.
    pytest.param("setTimeout(() => { for (;;) {} }, 0);", True, None, id="busy-timer"),
    pytest.param("(async () => { for (;;) await null })();", True, False, id="endless-microtasks"),
    pytest.param("for (;;) {}", False, False, id="spins-past-its-timeout"),
]


def _leaver(statement: str) -> str:
    return f"export function execute(i) {{ if (i.leave) {{ {statement} }} return {{ n: i.n }} }}"


async def _watch_idle(pids: set[int]) -> tuple[float, int]:
    """CPU seconds ``pids`` used over ``QUIET`` seconds, and the largest total resident size seen meanwhile."""
    before = {pid: process_cpu_seconds(pid) or 0.0 for pid in pids}
    peak = 0
    with anyio.move_on_after(QUIET):
        while True:
            peak = max(peak, sum(process_rss_bytes(pid) or 0 for pid in pids))
            await anyio.sleep(0.02)
    return sum((process_cpu_seconds(pid) or before[pid]) - before[pid] for pid in pids), peak


@pytest.mark.parametrize(("statement", "answers", "keeps_process"), LEFT_BEHIND)
async def test_work_left_behind_stops_when_the_call_ends(
    statement, answers, keeps_process, write_tool, tool_dir, kernel_for
) -> None:
    write_tool("leaver", _leaver(statement), limits={"memory_mb": 64, "timeout_ms": 400, "cpu_percent": 100})
    async with kernel_for([str(tool_dir)]) as kernel:
        pool = sandbox.sandbox_of(kernel).pool
        warm = await kernel.call(ToolRequest(id="w", tool="leaver", arguments={"n": 0}))
        await anyio.sleep(0.2)
        [pid] = pool.pids("leaver")
        idle_cpu, idle_rss = await _watch_idle({pid})
        left = await kernel.call(ToolRequest(id="l", tool="leaver", arguments={"n": 1, "leave": True}))
        # Memory of a terminated isolate is returned within milliseconds; a thread that outlives its
        # termination is noticed after RETIRE_GRACE and its process recycled.
        await anyio.sleep(RETIRE_GRACE + 0.5)
        cpu, rss = await _watch_idle({pid, *pool.pids("leaver")})
        after = await kernel.call(ToolRequest(id="a", tool="leaver", arguments={"n": 2}, timeout=5))
        now = pool.pids("leaver")
    assert warm.structured_content == {"n": 0}
    if answers:
        assert left.structured_content == {"n": 1}, left
    else:
        assert left.error is not None and left.error.code == "timeout", left
    assert after.structured_content == {"n": 2}, after
    # Left running, the loops would use the whole quiet window (0.6 s of CPU) and the buffers would grow
    # by gigabytes (or get the process killed by the memory watchdog).
    assert cpu < idle_cpu + 0.15, (cpu, idle_cpu)
    assert rss < idle_rss + 48 * MIB, (rss // MIB, idle_rss // MIB)
    if keeps_process:
        assert now == [pid]
    elif keeps_process is False:
        assert pid not in now and process_rss_bytes(pid) is None


async def test_timers_inside_a_call_still_work(write_tool, tool_dir, kernel_for) -> None:
    write_tool("ticker", """
        export async function execute(i) {
          await new Promise((resolve) => setTimeout(resolve, i.ms));
          const ticks = await new Promise((resolve) => {
            let n = 0;
            const id = setInterval(() => { if (++n === 3) { clearInterval(id); resolve(n) } }, 5);
          });
          queueMicrotask(() => {});
          return { ticks, late: await Promise.race([new Promise((r) => setTimeout(() => r("timer"), 5))]) };
        }""")
    async with kernel_for([str(tool_dir)]) as kernel:
        loop_time = anyio.current_time
        started = loop_time()
        result = await kernel.call(ToolRequest(id="1", tool="ticker", arguments={"ms": 80}))
        elapsed = loop_time() - started
    assert (result.is_error, result.structured_content) == (False, {"ticks": 3, "late": "timer"}), result
    assert elapsed >= 0.08


SYNC_HOG = "const keep = []; for (let k = 0; k < i_max; k++) keep.push(new Uint8Array(32 * 1024 * 1024).fill(7));"
ASYNC_HOG = ("const keep = []; for (let k = 0; k < i_max; k++) { keep.push(new Uint8Array(32 * 1024 * 1024).fill(7));"
             " await new Promise((r) => setTimeout(r, 1)) }")
HOGS = [pytest.param(SYNC_HOG, id="synchronous-loop"), pytest.param(ASYNC_HOG, id="yielding-loop")]
STEADY = "export async function execute(i) { await new Promise((r) => setTimeout(r, 150)); return { ok: i.n } }"


def _hog(loop: str) -> str:
    # 1 GiB when unchecked; a small amount (i.chunks) fits the limit.
    body = loop.replace("i_max", "i.chunks")
    return f"export async function execute(i) {{ {body} return {{ held_mib: keep.length * 32 }} }}"


@pytest.mark.parametrize("isolation", ["tool", "profile"])
@pytest.mark.parametrize("hog", HOGS)
async def test_array_buffers_over_memory_mb_fail_only_that_tool(
    hog, isolation, write_tool, tool_dir, toolmesh_settings
) -> None:
    if isolation == "profile" and hog == SYNC_HOG:
        pytest.skip("with processes shared per profile a synchronous overrun takes the shared process down")
    limits = {"memory_mb": 64, "timeout_ms": 8000, "cpu_percent": 100}
    write_tool("hog", _hog(hog), limits=limits)
    write_tool("steady", STEADY, limits=limits)  # same profile: in "profile" isolation it shares the process
    settings = msgspec.structs.replace(toolmesh_settings, plugins={
        "sandbox": {"workers": 1, "max_idle": 1, "isolation": isolation}})
    node = running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False)
    async with node, Mesh(settings=settings) as mesh:
        results: dict[str, ToolResult] = {}

        async def call(key: str, tool: str, arguments: dict[str, Any]) -> None:
            results[key] = await mesh.call(tool, arguments, timeout=20)

        async with anyio.create_task_group() as group:
            for n in range(3):
                group.start_soon(call, f"steady{n}", "steady", {"n": n})
            await anyio.sleep(0.05)
            group.start_soon(call, "hog", "hog", {"chunks": 32})
        small = await mesh.call("hog", {"chunks": 1}, timeout=20)
        steady = await mesh.call("steady", {"n": 9}, timeout=20)
    hogged = results["hog"]
    assert hogged.error is not None and hogged.error.code == "sandbox_violation", hogged
    assert "tool 'hog' exceeded its memory limit (64 MiB)" in hogged.error.message, hogged.error.message
    assert [results[f"steady{n}"].structured_content for n in range(3)] == [{"ok": 0}, {"ok": 1}, {"ok": 2}]
    assert (small.is_error, small.structured_content) == (False, {"held_mib": 32}), small
    assert steady.structured_content == {"ok": 9}


SELF_CALLER = """
export async function execute(i, ctx) {
  await new Promise((r) => setTimeout(r, 150));
  return await ctx.callTool("again", { level: i.level + 1 });
}"""


async def test_a_self_calling_tool_ends_with_its_call(write_tool, tool_dir, kernel_for) -> None:
    write_tool("again", SELF_CALLER, input_schema={"type": "object", "properties": {"level": {"type": "integer"}}},
               limits={"memory_mb": 64, "timeout_ms": 20000, "cpu_percent": 100})
    async with kernel_for([str(tool_dir)]) as kernel:
        pool = sandbox.sandbox_of(kernel).pool
        result = await kernel.call(ToolRequest(id="1", tool="again", arguments={"level": 0}, timeout=0.6))
        workers = [worker for group in pool.workers.values() for worker in group]
        with anyio.fail_after(2):
            while any(worker.inflight for worker in workers):
                await anyio.sleep(0.02)
        # No level of the chain is left to start another one.
        await anyio.sleep(0.5)
        busy = sum(worker.inflight for worker in workers)
        cpu, _ = await _watch_idle(set(pool.pids("again")))
    assert result.error is not None and result.error.code == "timeout", result
    assert busy == 0
    assert cpu < 0.15
