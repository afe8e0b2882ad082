"""Soak: many calls mixing good and hostile code leave the pool healthy (run with -m slow)."""

from __future__ import annotations

import anyio
import pytest
from toolmesh.contracts import ToolRequest
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.limits import process_rss_bytes

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

LIMITS = {"memory_mb": 64, "timeout_ms": 400, "cpu_percent": 100}


async def test_mixed_load_keeps_serving_without_leaks(write_tool, tool_dir, kernel_for) -> None:
    write_tool("good", "export function execute(i) { return i.n * 2 }", limits=LIMITS)
    write_tool("loop", "export function execute() { for (;;) {} }", limits=LIMITS)
    write_tool("nosy", "export function execute() { return Deno.env.get('HOME') }", limits=LIMITS)
    write_tool("bomb", "export function execute() { const a = []; for (;;) a.push(new Array(1e5).fill(1.5)) }",
               limits={**LIMITS, "timeout_ms": 5000})
    codes: dict[str, set[str]] = {"loop": set(), "nosy": set(), "bomb": set()}
    wrong = []
    async with kernel_for([str(tool_dir)], max_idle=2) as kernel:
        pool = sandbox.sandbox_of(kernel).pool

        async def client(k: int) -> None:
            for i in range(150):
                n = k * 1000 + i
                if i % 50 == 49:
                    tool = ("loop", "nosy", "bomb")[(i // 50) % 3]
                    result = await kernel.call(ToolRequest(id=str(n), tool=tool))
                    codes[tool].add(result.error.code.value if result.error else "ok")
                else:
                    result = await kernel.call(ToolRequest(id=str(n), tool="good", arguments={"n": n}))
                    if result.structured_content != n * 2:
                        wrong.append(result)

        async with anyio.create_task_group() as tg:
            for k in range(4):
                tg.start_soon(client, k)
        with anyio.fail_after(10):
            while not pool.pids():
                await anyio.sleep(0.05)
        rss = [process_rss_bytes(pid) or 0 for pid in pool.pids()]
    assert codes == {"loop": {"timeout"}, "nosy": {"sandbox_violation"}, "bomb": {"sandbox_violation"}}
    # Every tool has its own process: a bomb takes no good call down with it.
    assert wrong == []
    assert len(pool.pids()) <= 4 and max(rss) < 256 * 1024 * 1024
