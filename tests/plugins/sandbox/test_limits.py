"""Permissions and limits: network allow-lists, separate processes per profile, timeout, CPU share."""

from __future__ import annotations

import asyncio

import pytest
from toolmesh.contracts import ToolRequest
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.limits import process_cpu_seconds
from toolmesh.plugins.sandbox.permissions import Profile
from toolmesh.plugins.sandbox.pool import WorkerGroup

pytestmark = pytest.mark.anyio

FETCH = "export async function execute(i) { const r = await fetch(i.url); return { status: r.status, body: await r.text() } }"


NETWORK = [
    pytest.param(lambda port: [f"127.0.0.1:{port}"], True, id="listed-host"),
    pytest.param(lambda port: True, True, id="any-host"),
    pytest.param(lambda port: ["127.0.0.1:1"], False, id="other-port-listed"),
    pytest.param(lambda port: False, False, id="no-network"),
]


@pytest.mark.parametrize(("network", "allowed"), NETWORK)
async def test_network_only_where_declared(network, allowed, http_port, write_tool, tool_dir, kernel_for) -> None:
    write_tool("fetcher", FETCH, permissions={"network": network(http_port)})
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(ToolRequest(id="1", tool="fetcher", arguments={"url": f"http://127.0.0.1:{http_port}/"}))
    if allowed:
        assert (result.is_error, result.structured_content) == (False, {"status": 200, "body": "pong"})
    else:
        assert result.error is not None and result.error.code == "sandbox_violation"
        assert "net access" in result.error.message


ISOLATIONS = [pytest.param("tool", id="process-per-tool"), pytest.param("profile", id="process-per-profile")]


@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_tools_with_different_profiles_never_share_a_process(isolation, write_tool, tool_dir, kernel_for) -> None:
    pid = "export function execute() { return Deno.pid }"
    write_tool("plain_a", pid)
    write_tool("plain_b", pid)
    write_tool("networked", pid, permissions={"network": ["example.com"]})
    write_tool("bigger", pid, limits={"memory_mb": 96, "timeout_ms": 3000, "cpu_percent": 100})
    async with kernel_for([str(tool_dir)], isolation=isolation) as kernel:
        pids = {}
        for name in ("plain_a", "plain_b", "networked", "bigger"):
            pids[name] = (await kernel.call(ToolRequest(id=name, tool=name))).structured_content
        groups = {group: [w.pid for w in workers] for group, workers in sandbox.sandbox_of(kernel).pool.workers.items()}
    assert (pids["plain_a"] == pids["plain_b"]) is (isolation == "profile")
    assert len({pids["plain_a"], pids["networked"], pids["bigger"]}) == 3
    networked = WorkerGroup(Profile(network=("example.com",), memory_mb=64), "networked" if isolation == "tool" else None)
    assert groups[networked] == [pids["networked"]]


def test_profile_flags_deny_everything_but_declared_network() -> None:
    flags = Profile(network=("api.example.com",), memory_mb=80).deno_arguments(4000)
    assert "--allow-net=127.0.0.1:4000,api.example.com" in flags
    assert "--v8-flags=--max-old-space-size=80" in flags
    assert {f"--deny-{name}" for name in ("read", "write", "env", "run", "ffi", "sys", "import")} <= set(flags)
    assert not [flag for flag in flags if flag.startswith("--allow-") and not flag.startswith("--allow-net")]
    assert Profile().isolate_permissions() == {
        "read": False, "write": False, "env": False, "run": False, "ffi": False, "sys": False, "import": False,
        "net": False,
    }


async def test_timeout_ms_ends_the_call_and_replaces_the_isolate(write_tool, tool_dir, kernel_for) -> None:
    write_tool("spin", "export function execute(i) { if (i.spin) for (;;) {} return 'ok' }",
               limits={"memory_mb": 64, "timeout_ms": 300, "cpu_percent": 100})
    async with kernel_for([str(tool_dir)]) as kernel:
        started = asyncio.get_running_loop().time()
        spun = await kernel.call(ToolRequest(id="1", tool="spin", arguments={"spin": True}))
        elapsed = asyncio.get_running_loop().time() - started
        fine = await kernel.call(ToolRequest(id="2", tool="spin", arguments={"spin": False}))
    assert spun.error is not None and spun.error.code == "timeout"
    assert "300 ms" in spun.error.message and spun.error.retryable
    assert 0.25 < elapsed < 1.5
    assert fine.structured_content == "ok"


async def test_a_shorter_request_timeout_wins(write_tool, tool_dir, kernel_for) -> None:
    write_tool("spin", "export function execute() { for (;;) {} }")
    async with kernel_for([str(tool_dir)]) as kernel:
        spun = await kernel.call(ToolRequest(id="1", tool="spin", timeout=0.3))
        after = await kernel.call(ToolRequest(id="2", tool="spin", timeout=0.3))
    assert spun.error is not None and spun.error.code == "timeout"
    assert after.error is not None and after.error.code == "timeout"


async def test_cpu_percent_throttles_the_worker(write_tool, tool_dir, kernel_for) -> None:
    busy = "export function execute(i) { const end = Date.now() + i.ms; let n = 0; while (Date.now() < end) n++; return n }"
    write_tool("busy", busy, limits={"memory_mb": 64, "timeout_ms": 5000, "cpu_percent": 25})
    async with kernel_for([str(tool_dir)]) as kernel:
        [pid] = sandbox.sandbox_of(kernel).pool.pids()
        before = process_cpu_seconds(pid)
        loop = asyncio.get_running_loop()
        started = loop.time()
        result = await kernel.call(ToolRequest(id="1", tool="busy", arguments={"ms": 1200}))
        wall = loop.time() - started
        used = process_cpu_seconds(pid) - before
    assert result.is_error is False
    # 1.2 s of wall clock at 25 % of a core: about 0.3 s of CPU, measured with a generous margin.
    assert used / wall < 0.45, (used, wall)
