"""Bootstrap at start: priority order, wait_for, once and continuous, load errors, once per mesh."""

from __future__ import annotations

import anyio
import msgspec
import pytest
from toolmesh.plugins import sandbox
from toolmesh.testing import running_node

pytestmark = pytest.mark.anyio

ONCE = "export function execute(i, ctx) { return { trigger: ctx.request.trigger_event.schema_name, input: i } }"
FOREVER = "export async function execute() { await new Promise(r => setTimeout(r, 60000)) }"


def _boot(mode: str, priority: int = 50, wait_for: tuple[str, ...] = (), **extra: object) -> dict:
    return {"bootstrap": {"enabled": mode != "off", "mode": "disabled" if mode == "off" else mode,
                          "priority": priority, "wait_for": list(wait_for), **extra}}


async def _bootstrapper(kernel, count: int):
    state = sandbox.sandbox_of(kernel)
    with anyio.fail_after(10):
        while state.bootstrapper is None or len(state.bootstrapper.started) < count:
            await anyio.sleep(0.02)
    return state.bootstrapper


async def test_priority_then_wait_for_order_and_modes(write_tool, tool_dir, kernel_for) -> None:
    write_tool("low", ONCE, **_boot("once", 10))
    write_tool("high", ONCE, **_boot("once", 90, input={"force_refresh": False}))
    write_tool("after_low", ONCE, **_boot("once", 60, ("low",)))
    write_tool("service", FOREVER, limits={"memory_mb": 64, "timeout_ms": 120000, "cpu_percent": 100},
               **_boot("continuous", 70))
    write_tool("never", ONCE, **_boot("off", 100))
    write_tool("plain", ONCE)
    async with kernel_for([str(tool_dir)]) as kernel:
        booted = await _bootstrapper(kernel, 4)
        await anyio.sleep(0.2)
        started = list(booted.started)
        results = dict(booted.results)
    assert started == ["high", "service", "low", "after_low"]
    assert results["high"].structured_content == {"trigger": "system.startup.v1", "input": {"force_refresh": False}}
    assert "never" not in booted.runs and "plain" not in booted.runs


async def test_cycles_and_unknown_names_are_load_errors(write_tool, tool_dir, kernel_for) -> None:
    write_tool("ping", ONCE, **_boot("once", wait_for=("pong",)))
    write_tool("pong", ONCE, **_boot("once", wait_for=("ping",)))
    write_tool("lost", ONCE, **_boot("once", wait_for=("ghost",)))
    write_tool("fine", ONCE, **_boot("once"))
    async with kernel_for([str(tool_dir)]) as kernel:
        booted = await _bootstrapper(kernel, 1)
        specs = {name: kernel.get_tool(name) for name in ("ping", "pong", "lost", "fine")}
    assert "cycle among: ping, pong" in specs["ping"].unavailable_reason
    assert "cycle" in specs["pong"].unavailable_reason
    assert "unknown tool(s): ghost" in specs["lost"].unavailable_reason
    assert specs["fine"].available and booted.started == ["fine"]


async def test_a_crashing_continuous_tool_is_restarted(write_tool, tool_dir, kernel_for) -> None:
    write_tool("flaky", "export function execute() { throw new Error('down') }", **_boot("continuous"))
    async with kernel_for([str(tool_dir)]) as kernel:
        booted = await _bootstrapper(kernel, 2)
    assert booted.runs["flaky"] >= 2


async def test_two_nodes_run_each_bootstrap_once(write_tool, tool_dir, toolmesh_settings) -> None:
    write_tool("init_once", ONCE, **_boot("once", 80))
    write_tool("service", FOREVER, limits={"memory_mb": 64, "timeout_ms": 120000, "cpu_percent": 100},
               **_boot("continuous", 50))
    settings = msgspec.structs.replace(toolmesh_settings, plugins={"sandbox": {"workers": 1, "max_idle": 1}})
    runs: dict[str, int] = {}
    async with (
        running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False) as one,
        running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False) as two,
    ):
        booted = [sandbox.sandbox_of(node.kernel).bootstrapper for node in (one, two)]
        with anyio.fail_after(10):  # both nodes have decided about the once tool
            while not all("init_once" in b.results for b in booted):
                await anyio.sleep(0.05)
        await anyio.sleep(1.0)  # long enough for a second continuous run to show up
        outcomes = sorted(b.results["init_once"] is None for b in booted)
        for node in (one, two):
            booted = sandbox.sandbox_of(node.kernel).bootstrapper
            for name, count in booted.runs.items():
                runs[name] = runs.get(name, 0) + count
    assert runs == {"init_once": 1, "service": 1}
    assert outcomes == [False, True]  # one node ran it, the other found it taken
