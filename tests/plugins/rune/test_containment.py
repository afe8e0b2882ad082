"""Hostile Rune scripts on a real node and nats-server: memory, CPU, stack and non-JSON numbers stay contained.

Each test attacks the node as a caller would (huge strings, dozens of spinning scripts, deep
recursion, ``inf``/``NaN`` results) and checks that the attack fails with a clear error while
the node keeps answering other tools.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import toolmesh.plugins.python as python_plugin
import toolmesh.plugins.rune as rune_plugin
from toolmesh import Mesh, Settings
from toolmesh.contracts import ToolResult
from toolmesh.testing import eventually, running_node

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop

PLUGINS = [rune_plugin, python_plugin]

PYTHON_TOOLS = '''
import toolmesh


def _down(n: int) -> int:
    return 0 if n == 0 else 1 + _down(n - 1)


@toolmesh.tool
def deep(n: int) -> int:
    """Recurse n levels deep."""
    return _down(n)


@toolmesh.tool
def depth_of(value: list) -> int:
    """How deeply the list nests."""
    depth = 0
    while isinstance(value, list):
        value, depth = value[0] if value else None, depth + 1
    return depth
'''

HOSTILE = """\
fn big() { "x".repeat(9000000) }

#[tool(desc = "format! four big strings", timeout_ms = 20000)]
pub fn fmt() { let s = big(); format!("{}{}{}{}", s, s, s, s).len() }

#[tool(desc = "replace every character by twenty", timeout_ms = 20000)]
pub fn grow() { big().replace("x", "xxxxxxxxxxxxxxxxxxxx").len() }

#[tool(desc = "add a big string to itself", timeout_ms = 20000)]
pub fn twice() { let s = big(); (s + s).len() }

#[tool(desc = "repeat far past the cap", timeout_ms = 20000)]
pub fn many() { "abc".repeat(1000000000).len() }

#[tool(desc = "a template of big strings", timeout_ms = 20000)]
pub fn tmpl() { let s = big(); `${s}${s}`.len() }

#[tool(desc = "keep fresh big strings", timeout_ms = 20000)]
pub fn hoard() { let v = []; loop { v.push(big() + "y"); } }

#[tool(desc = "spin until stopped", timeout_ms = 1000)]
pub fn spin() { let i = 0; loop { i = (i + 1) % 1000; let s = `${i}`; } }

#[param(name = "n", type = "integer", desc = "depth")]
#[tool(desc = "recurse n levels deep")]
pub fn down(n) { if n == 0 { 0 } else { 1 + down(n - 1) } }

#[tool(desc = "infinity")]
pub fn infinite() { 1.0 / 0.0 }

#[tool(desc = "not a number, nested")]
pub fn nan_inside() { #{a: [1.0, 0.0 / 0.0]} }

#[tool(desc = "an error carrying infinity")]
pub fn err_inf() { Err(-1.0 / 0.0) }
"""


def serve(settings: Settings, *sources: Path, rune: dict[str, Any] | None = None) -> Any:
    if rune is not None:
        settings = msgspec.structs.replace(settings, plugins={**settings.plugins, "rune": rune})
    return running_node(settings, sources=[str(s) for s in sources], plugins=PLUGINS, load_entrypoints=False)


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    (tmp_path / "hostile.rn").write_text(HOSTILE)
    (tmp_path / "py_tools.py").write_text(PYTHON_TOOLS)
    return tmp_path


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _failed_at_limit(result: ToolResult) -> str:
    assert result.error is not None, result
    assert result.error.code == "execution_failed", result.error
    assert result.error.details is not None and result.error.details["kind"] == "RuneLimitError", result.error
    return result.error.message


async def test_huge_values_fail_before_they_are_built(toolmesh_settings: Settings, tools: Path) -> None:
    """format!, replace, +, repeat and templates past the per-value cap, and a run hoarding big
    strings past its memory budget, fail with RuneLimitError; the node's memory stays small."""
    async with (
        serve(toolmesh_settings, tools, rune={"max_memory_mb": 64}),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        assert (await mesh.call("deep", {"n": 3})).structured_content == 3
        before = _max_rss_mb()
        for tool, size in [
            ("rune_fmt", 36_000_000),
            ("rune_grow", 180_000_000),
            ("rune_twice", 18_000_000),
            ("rune_many", 3_000_000_000),
            ("rune_tmpl", 18_000_000),
        ]:
            message = _failed_at_limit(await mesh.call(tool, {}, timeout=30))
            assert f"of {size} elements exceeds the limit of 10000000 elements per value" in message, message
        hoarded = _failed_at_limit(await mesh.call("rune_hoard", {}, timeout=30))
        assert "over its budget of 67108864 bytes" in hoarded, hoarded
        grown = _max_rss_mb() - before
        # the attack asked for more than 1.3 GB (36 M + 180 M + 3 G characters...); the budget is 64 MB
        assert grown < 200, f"the node grew by {grown:.0f} MB"
        assert (await mesh.call("deep", {"n": 10})).structured_content == 10  # still answering


async def test_spinning_scripts_stop_at_their_deadline_while_other_tools_answer(
    toolmesh_settings: Settings, tools: Path
) -> None:
    """40 scripts spinning at once each end with `timeout` near their 1 s deadline (queued ones
    included), and a Python tool on the same node answers throughout."""
    spins = 40
    ended: list[tuple[float, ToolResult]] = []
    answers: list[float] = []
    async with serve(toolmesh_settings, tools) as node, Mesh(settings=toolmesh_settings) as mesh:
        assert (await mesh.call("deep", {"n": 3})).structured_content == 3

        async def spin() -> None:
            sent = time.monotonic()
            result = await mesh.call("rune_spin", {}, timeout=30)
            ended.append((time.monotonic() - sent, result))

        async def ask() -> None:
            while len(ended) < spins:
                sent = time.monotonic()
                result = await mesh.call("deep", {"n": 50}, timeout=30)
                answers.append(time.monotonic() - sent)
                assert result.structured_content == 50, result
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as tg:
            for _ in range(spins):
                tg.start_soon(spin)
            # the node took every spin: they run or wait for a slot (or, on a slow machine, ended already)
            await eventually(lambda: node.inflight + len(ended) >= spins, timeout=20)
            tg.start_soon(ask)

        # every script stopped: the process is idle again, and the node still answers
        started = time.process_time()
        await anyio.sleep(0.5)
        assert time.process_time() - started < 0.25
        assert (await mesh.call("deep", {"n": 5})).structured_content == 5

    assert len(ended) == spins
    for seconds, result in ended:
        assert result.error is not None and result.error.code == "timeout", result
        assert seconds < 1.0 + 3.0, f"a spin answered {seconds:.1f} s after it was sent, its budget is 1 s"
    assert len(answers) >= 2
    # Before admission and in-script deadlines, other tools got no answer for 8 s.
    assert max(answers) < 2.0, f"the Python tool took up to {max(answers):.2f} s to answer while scripts spun"


async def test_python_recursion_is_unaffected_by_running_scripts(
    toolmesh_settings: Settings, tools: Path
) -> None:
    """While scripts spin, the process's recursion limit stays where it was: a Python tool
    recurses 800 deep, deeply nested requests get their answer; deep Rune recursion fails clearly."""
    limit = sys.getrecursionlimit()

    def nested(depth: int) -> list[Any]:
        value: list[Any] = []
        for _ in range(depth - 1):
            value = [value]
        return value

    settings = msgspec.structs.replace(toolmesh_settings, max_argument_depth=256)
    async with serve(settings, tools) as node, Mesh(settings=settings) as mesh:
        results: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:

            async def call(key: str, tool: str, args: dict[str, Any]) -> None:
                results[key] = await mesh.call(tool, args, timeout=30)

            for i in range(3):
                tg.start_soon(call, f"spin{i}", "rune_spin", {})
            await eventually(lambda: node.inflight == 3, timeout=10)  # the scripts run now
            assert sys.getrecursionlimit() == limit
            await call("deep", "deep", {"n": 800})
            await call("nested", "depth_of", {"value": nested(250)})
            await call("too_deep", "depth_of", {"value": nested(700)})
            await call("rune_deep", "rune_down", {"n": 5000})
            assert sys.getrecursionlimit() == limit
        assert results["deep"].structured_content == 800, results["deep"]
        assert results["nested"].structured_content == 250, results["nested"]
        assert results["too_deep"].error.code == "bad_request", results["too_deep"]  # answered, not lost
        message = _failed_at_limit(results["rune_deep"])
        assert "recursion limit of 900 calls exceeded" in message, message
        assert (await mesh.call("rune_down", {"n": 300})).structured_content == 300
        for i in range(3):
            assert results[f"spin{i}"].error.code == "timeout", results[f"spin{i}"]
    assert sys.getrecursionlimit() == limit


async def test_inf_and_nan_results_are_errors(toolmesh_settings: Settings, tools: Path) -> None:
    """A result JSON cannot carry fails with a message naming the value and where it is."""
    async with serve(toolmesh_settings, tools), Mesh(settings=toolmesh_settings) as mesh:
        infinite = await mesh.call("rune_infinite", {})
        nan = await mesh.call("rune_nan_inside", {})
        err = await mesh.call("rune_err_inf", {})
        for result in (infinite, nan, err):
            assert result.error is not None and result.error.code == "execution_failed", result
            assert "which JSON cannot carry" in result.error.message, result.error
        assert "the result is the float inf" in infinite.error.message
        assert "the result at a[1] is the float NaN" in nan.error.message
        assert "the error value is the float -inf" in err.error.message


NESTED = """\
#[param(name = "x", type = "integer", desc = "x")]
#[tool(desc = "double x")]
pub fn twice_of(x) { x * 2 }

#[param(name = "x", type = "integer", desc = "x")]
#[tool(desc = "double x on the mesh, plus one")]
pub async fn outer(x) { toolmesh::call("rune_twice_of", #{x: x}).await? + 1 }
"""


async def test_admission_refuses_past_the_waiting_line(toolmesh_settings: Settings, tools: Path) -> None:
    """One script runs, one waits; a third is refused at once, retryable, with a retry hint."""
    async with (
        serve(toolmesh_settings, tools, rune={"max_running": 1, "max_waiting": 1}) as node,
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        results: list[ToolResult] = []

        async def spin() -> None:
            results.append(await mesh.call("rune_spin", {}, timeout=30))

        async with anyio.create_task_group() as tg:
            tg.start_soon(spin)
            await eventually(lambda: node.inflight == 1, timeout=10)  # it runs
            tg.start_soon(spin)
            await eventually(lambda: node.inflight == 2, timeout=10)  # it waits
            refused = await mesh.call("rune_spin", {}, timeout=30)
            assert refused.error is not None and refused.error.code == "unavailable", refused
            assert refused.error.retryable and refused.error.details is not None
            assert refused.error.details["retry_after"] > 0 and "max_waiting" in refused.error.message
        assert sorted(r.error.code for r in results if r.error is not None) == ["timeout", "timeout"]
        assert (await mesh.call("deep", {"n": 5})).structured_content == 5


async def test_a_script_awaiting_the_mesh_frees_its_slot(toolmesh_settings: Settings, tmp_path: Path) -> None:
    """With a single slot, a script calling another Rune tool of its own node still finishes:
    it holds no slot while it waits."""
    (tmp_path / "nested.rn").write_text(NESTED)
    async with (
        serve(toolmesh_settings, tmp_path, rune={"max_running": 1}),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        results = []
        async with anyio.create_task_group() as tg:
            for x in range(3):

                async def one(x: int = x) -> None:
                    results.append((x, await mesh.call("rune_outer", {"x": x}, timeout=10)))

                tg.start_soon(one)
        assert sorted((x, r.structured_content) for x, r in results) == [(0, 1), (1, 3), (2, 5)]
