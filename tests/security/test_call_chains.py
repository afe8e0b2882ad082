"""Tools that call themselves end: nested calls carry their chain and the time left, and end with their parent.

Each attack runs on a real node over a real nats-server: a tool that calls
itself in Python (in the call's own task), in Rune (``toolmesh::call``, a worker
thread's bridge to the event loop) and in the sandbox (``callTool`` from real
Deno).  Every chain must end with the depth error naming it, or at its first
caller's deadline; afterwards nothing of it runs, and the node's worker threads
answer other calls.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import msgspec
import pytest
import toolmesh
import toolmesh.plugins.python as python_plugin
import toolmesh.plugins.rune as rune_plugin
from toolmesh import CallContext, ConfigError, Kernel, Mesh, Settings, load_settings
from toolmesh._transport.node import Node
from toolmesh.contracts import ToolRequest, ToolResult
from toolmesh.plugins import sandbox as sandbox_plugin
from toolmesh.testing import running_node

pytestmark = pytest.mark.anyio

LIMIT = 8
"""The default ``max_call_depth``."""


@dataclass
class Probe:
    """What the tools below saw; fresh for every test."""

    runs: int = 0
    hang_started: asyncio.Event = field(default_factory=asyncio.Event)
    hang_cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    late: list[ToolResult] = field(default_factory=list)


PROBE = Probe()


@pytest.fixture(autouse=True)
def _fresh_probe() -> None:
    global PROBE
    PROBE = Probe()


def _outcome(result: ToolResult) -> Any:
    """A nested call's value, or its failure as ``{"code", "message"}`` (passed up a chain as a value)."""
    if result.error is None:
        return result.structured_content
    return {"code": result.error.code.value, "message": result.error.message}


@toolmesh.tool
async def count() -> int:
    """Count one level of a chain."""
    PROBE.runs += 1
    return PROBE.runs


@toolmesh.tool
async def nap(seconds: float) -> None:
    """Wait a while."""
    await anyio.sleep(seconds)


@toolmesh.tool
def ping() -> str:
    """Answer at once from a worker thread (a sync tool)."""
    return "pong"


@toolmesh.tool
async def py_again(n: int, pause: float, context: CallContext) -> Any:
    """Count, nap, then call itself; the innermost failure comes back as the value."""
    PROBE.runs += 1
    await anyio.sleep(pause)
    return _outcome(await context.call_tool("py_again", {"n": n + 1, "pause": pause}))


@toolmesh.tool
async def hang() -> str:
    """Wait for a minute unless cancelled."""
    PROBE.hang_started.set()
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        PROBE.hang_cancelled.set()
        raise
    return "woke"


@toolmesh.tool
async def py_parent(context: CallContext) -> Any:
    """Wait on ``hang`` through a nested call in the call's own task."""
    return _outcome(await context.call_tool("hang", {}))


@toolmesh.tool
def late_caller(context: CallContext) -> str:
    """Outlive the own deadline in a worker thread, then try a nested call."""
    time.sleep((context.remaining() or 0.0) + 0.3)
    PROBE.late.append(anyio.from_thread.run(context.call_tool, "count", {}))
    return "done"


PYTHON_TOOLS = [count, nap, ping, py_again, hang, py_parent, late_caller]

RUNE_TOOLS = """\
#[param(name = "n", type = "integer", desc = "how deep this call is")]
#[param(name = "pause", type = "number", desc = "seconds to nap before going deeper")]
#[tool(desc = "counts, naps, then calls itself; the innermost failure comes back as the value")]
pub async fn again(n, pause) {
    match toolmesh::call("count", #{}).await {
        Err(error) => error,
        Ok(_) => match toolmesh::call("nap", #{seconds: pause}).await {
            Err(error) => error,
            Ok(_) => match toolmesh::call("rune_again", #{n: n + 1, pause: pause}).await {
                Ok(value) => value,
                Err(error) => error,
            },
        },
    }
}

#[tool(desc = "waits on hang from a worker thread")]
pub async fn parent() { toolmesh::call("hang", #{}).await }
"""

SANDBOX_AGAIN = (
    "export async function execute(i, ctx) {\n"
    "  try {\n"
    "    await ctx.callTool('count', {});\n"
    "    await ctx.callTool('nap', { seconds: i.pause });\n"
    "    return await ctx.callTool('again', { n: i.n + 1, pause: i.pause });\n"
    "  } catch (e) { return { code: e.name, message: e.message }; }\n"
    "}\n"
)
SANDBOX_PARENT = "export async function execute(i, ctx) { return await ctx.callTool('hang', {}) }\n"


def _sandbox_document(name: str, source: str) -> dict[str, Any]:
    return {
        "schema_name": "tool.code.v1",
        "title": f"{name} tool",
        "tags": ["tool", f"tool:{name}", "workspace:tools", "self-contained"],
        "context": {
            "name": name,
            "description": f"{name}, calling tools through the mesh",
            "version": "1.0.0",
            "code": {"language": "javascript", "source": source},
            "input_schema": {"type": "object"},
            "limits": {"memory_mb": 64, "timeout_ms": 20000, "cpu_percent": 100},
        },
    }


@dataclass
class Chain:
    """How one kind of tool calls itself, and how it reports the refusal."""

    plugin: str
    tool: str
    parent: str
    refused_chain: list[str]
    runs: int


CHAINS = {
    "python": Chain("python", "py_again", "py_parent", ["py_again"] * (LIMIT + 1), LIMIT),
    # Rune and sandbox levels call `count` first: the eighth level's `count` is the call refused.
    "rune": Chain("rune", "rune_again", "rune_parent", ["rune_again"] * LIMIT + ["count"], LIMIT - 1),
    "sandbox": Chain("sandbox", "again", "parent", ["again"] * LIMIT + ["count"], LIMIT - 1),
}


def _serve(settings: Settings, tmp_path: Path, plugin: str) -> Any:
    sources: list[Any] = list(PYTHON_TOOLS)
    plugins: list[Any] = [python_plugin]
    if plugin == "rune":
        (tmp_path / "chains.rn").write_text(RUNE_TOOLS, encoding="utf-8")
        sources.append(str(tmp_path / "chains.rn"))
        plugins.append(rune_plugin)
    elif plugin == "sandbox":
        folder = tmp_path / "sandbox"
        folder.mkdir()
        for name, source in (("again", SANDBOX_AGAIN), ("parent", SANDBOX_PARENT)):
            (folder / f"{name}.tool.json").write_text(json.dumps(_sandbox_document(name, source)), encoding="utf-8")
        sources.append(str(folder))
        plugins.append(sandbox_plugin)
        settings = msgspec.structs.replace(settings, plugins={"sandbox": {"workers": 1, "max_idle": 1}})
    return running_node(settings, sources=sources, plugins=plugins, load_entrypoints=False)


async def _settle(node: Node) -> None:
    """Wait until the node runs no call at all (bounded: a chain that keeps running fails here)."""
    with anyio.move_on_after(15):
        while node.inflight:
            await anyio.sleep(0.05)
    assert node.inflight == 0, f"{node.inflight} calls still running long after the chain's caller was answered"


async def _answers_in_parallel(mesh: Mesh, calls: int = 50) -> None:
    """Many sync calls at once: each needs a worker thread, so all must be free again."""
    answers: list[ToolResult] = []

    async def one() -> None:
        answers.append(await mesh.call("ping", {}, timeout=20))

    async with anyio.create_task_group() as group:
        for _ in range(calls):
            group.start_soon(one)
    assert [answer.structured_content for answer in answers] == ["pong"] * calls, answers[:3]


@pytest.mark.parametrize("kind", sorted(CHAINS))
async def test_a_tool_calling_itself_ends_with_the_chain_named(
    kind: str, toolmesh_settings: Settings, tmp_path: Path
) -> None:
    """The chain stops at max_call_depth with `rejected` naming every tool in it; no level beyond runs."""
    chain = CHAINS[kind]
    async with _serve(toolmesh_settings, tmp_path, kind) as node, Mesh(settings=toolmesh_settings) as mesh:
        result = await mesh.call(chain.tool, {"n": 0, "pause": 0.0}, timeout=60)
        assert result.error is None, result.error
        refusal = result.structured_content
        assert refusal["code"] == "rejected"
        assert f"call chain too deep: {' → '.join(chain.refused_chain)} (limit {LIMIT} tools)" in refusal["message"]
        assert "max_call_depth" in refusal["message"]
        assert PROBE.runs == chain.runs
        await _settle(node)
        assert PROBE.runs == chain.runs
        await _answers_in_parallel(mesh)


@pytest.mark.parametrize("kind", sorted(CHAINS))
async def test_a_chain_ends_at_its_first_callers_deadline(
    kind: str, toolmesh_settings: Settings, tmp_path: Path
) -> None:
    """Levels that nap never reach the depth limit: the first caller's deadline ends them all."""
    chain = CHAINS[kind]
    async with _serve(toolmesh_settings, tmp_path, kind) as node, Mesh(settings=toolmesh_settings) as mesh:
        result = await mesh.call(chain.tool, {"n": 0, "pause": 0.4}, timeout=2)
        assert result.error is not None and result.error.code == "timeout", result
        at_answer = PROBE.runs
        assert at_answer < LIMIT  # ended by the deadline, not by the depth limit
        await _settle(node)
        await anyio.sleep(0.5)
        # one level may have started its count just as the deadline passed; none after that
        assert PROBE.runs <= at_answer + 1
        await _answers_in_parallel(mesh)
        assert (await mesh.call("ping", {})).structured_content == "pong"


@pytest.mark.parametrize("kind", sorted(CHAINS))
async def test_cancelling_a_call_cancels_its_nested_call(
    kind: str, toolmesh_settings: Settings, tmp_path: Path
) -> None:
    """The caller gives up on the parent: the child it waits on (from any task or thread) is cancelled too."""
    chain = CHAINS[kind]
    # The child's own deadline (20 s and more) must not be what ends it.
    settings = msgspec.structs.replace(toolmesh_settings, default_timeout=60.0)
    async with _serve(settings, tmp_path, kind) as node, Mesh(settings=settings) as mesh:
        async with anyio.create_task_group() as group:
            group.start_soon(functools.partial(mesh.call, chain.parent, {}, timeout=60))
            with anyio.fail_after(20):
                await PROBE.hang_started.wait()
            group.cancel_scope.cancel()
        with anyio.move_on_after(10):
            await PROBE.hang_cancelled.wait()
        assert PROBE.hang_cancelled.is_set(), "the nested call kept running after its parent was cancelled"
        await _settle(node)
        assert (await mesh.call("ping", {})).structured_content == "pong"


async def test_a_nested_call_after_the_deadline_never_runs(toolmesh_settings: Settings, tmp_path: Path) -> None:
    """A worker thread that outlives its call's deadline gets an error for its nested call, which never runs."""
    async with _serve(toolmesh_settings, tmp_path, "python"), Mesh(settings=toolmesh_settings) as mesh:
        result = await mesh.call("late_caller", {}, timeout=0.5)
        assert result.error is not None and result.error.code == "timeout"
        with anyio.move_on_after(10):
            while not PROBE.late:
                await anyio.sleep(0.05)
        assert [late.error.code.value for late in PROBE.late if late.error] in (["cancelled"], ["timeout"])
        assert PROBE.runs == 0
        assert (await mesh.call("ping", {})).structured_content == "pong"


async def test_a_caller_lengthens_only_its_own_call(toolmesh_settings: Settings, tmp_path: Path) -> None:
    """A request that arrives with a full chain is refused before it runs; one below the limit runs."""
    async with _serve(toolmesh_settings, tmp_path, "python"), Mesh(settings=toolmesh_settings) as mesh:
        full = msgspec.structs.replace(mesh.new_request("count", {}), chain=("outer",) * LIMIT)
        refused = await mesh.send(full)
        assert refused.error is not None and refused.error.code == "rejected"
        assert f"call chain too deep: {'outer → ' * LIMIT}count (limit {LIMIT} tools)" in refused.error.message
        endless = msgspec.structs.replace(mesh.new_request("count", {}), chain=tuple(f"t{i}" for i in range(5000)))
        refused = await mesh.send(endless)
        assert refused.error is not None and refused.error.code == "rejected"
        assert "call chain too deep: t0 → t1 → … → t4994 → " in refused.error.message  # shortened, not 5,000 names
        assert len(refused.error.message) < 1000
        assert PROBE.runs == 0
        below = msgspec.structs.replace(mesh.new_request("count", {}), chain=("outer",) * (LIMIT - 1))
        assert (await mesh.send(below)).structured_content == 1


async def test_a_kernel_without_a_node_ends_the_chain_too() -> None:
    """The local path (``Kernel.call``, nested calls run in-process) enforces the same limit."""
    settings = Settings(max_call_depth=3)
    async with Kernel([python_plugin], settings=settings, load_entrypoints=False) as kernel:
        await kernel.discover_tools(PYTHON_TOOLS)
        result = await kernel.call(ToolRequest(id="r", tool="py_again", arguments={"n": 0, "pause": 0.0}))
    assert result.structured_content["code"] == "rejected"
    assert "call chain too deep: py_again → py_again → py_again → py_again (limit 3 tools)" in (
        result.structured_content["message"]
    )
    assert PROBE.runs == 3


async def test_nested_calls_carry_the_chain_and_the_time_left() -> None:
    """What ``call_tool`` sends: the parent's chain plus the parent, and no more time than it has."""
    sent: list[ToolRequest] = []

    async def send(request: ToolRequest) -> ToolResult:
        sent.append(request)
        return ToolResult(id="x", tool=request.tool, structured_content="ok")

    kernel = Kernel([], load_entrypoints=False)
    parent = ToolRequest(id="p", tool="b", chain=("a",))
    context = CallContext(request=parent, kernel=kernel, deadline=time.monotonic() + 5)
    call_tool = context.nested_call(send)
    assert (await call_tool("c", {"x": 1})).structured_content == "ok"
    assert sent[0].chain == ("a", "b") and sent[0].arguments == {"x": 1}
    assert sent[0].timeout is not None and 0 < sent[0].timeout <= 5

    context.deadline = time.monotonic() - 0.1
    expired = await call_tool("c", {})
    context.end()
    ended = await call_tool("c", {})
    assert (expired.error.code.value, ended.error.code.value) == ("timeout", "cancelled")  # type: ignore[union-attr]
    assert len(sent) == 1


def test_the_limit_is_a_setting(tmp_path: Path) -> None:
    """``max_call_depth`` comes from the environment or toolmesh.toml, and must allow the caller's own call."""
    assert Settings().max_call_depth == LIMIT
    assert load_settings(env={"TOOLMESH_MAX_CALL_DEPTH": "3"}, config_file=tmp_path / "none.toml").max_call_depth == 3
    (tmp_path / "toolmesh.toml").write_text("max_call_depth = 12\n", encoding="utf-8")
    assert load_settings(env={}, config_file=tmp_path / "toolmesh.toml").max_call_depth == 12
    with pytest.raises(ConfigError, match="max_call_depth must be at least 1, got 0"):
        Settings(max_call_depth=0)
