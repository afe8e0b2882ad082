"""Defaults a crewAI user expects, over a real mesh: caching on, verbose output, a synchronous API,
resetting one tool's usage, and the agent's and task's fingerprints in the tool's context."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import toolmesh
from toolmesh import Mesh
from toolmesh.contracts import CachePolicy, ToolSpec
from toolmesh.plugins import crew
from toolmesh.plugins.crew import (
    AgentInfo,
    SyncToolUsage,
    TaskInfo,
    ToolSelectionError,
    ToolUsage,
    cache_key,
)
from toolmesh.testing import running_node

from .conftest import SOURCE, ToolsPlugin, _schema, standard_tools

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def node_and_mesh(settings: toolmesh.Settings, plugin: ToolsPlugin) -> AsyncIterator[Mesh]:
    async with (
        running_node(settings, plugins=[plugin, crew], load_entrypoints=False),
        Mesh(settings=settings) as mesh,
    ):
        yield mesh


async def test_results_are_cached_by_default_unless_a_tool_opts_out(toolmesh_settings) -> None:
    never = ToolSpec(
        name="roll", source=SOURCE, input_schema=_schema(sides="integer"), cache=CachePolicy(enabled=False)
    )
    rolls = iter(range(100))
    plugin = ToolsPlugin([*standard_tools(), (never, lambda sides: next(rolls) % sides)])
    async with node_and_mesh(toolmesh_settings, plugin) as mesh:
        usage, other_crew = await ToolUsage.connect(mesh), await ToolUsage.connect(mesh)
        built = ToolUsage(mesh, await mesh.list_tools())  # not through connect: an in-process cache
        try:
            add = {"name": "add", "arguments": {"a": 2, "b": 3}}  # a tool without any CachePolicy
            first, second = await usage.use(add, agent="a"), await usage.use(add, agent="b")
            again = await built.use(add, agent="c")
            again_cached = await built.use(add, agent="d")
            roll = {"name": "roll", "arguments": {"sides": 6}}
            rolled = [await usage.use(roll, agent=agent) for agent in ("a", "b")]
            search = {"name": "search_web", "arguments": {"query": "q"}}  # CachePolicy(ttl=60): mesh-wide
            await usage.use(search, agent="a")
            with anyio.fail_after(10):
                while cache_key("search_web", {"query": "q"}) not in other_crew.cache:
                    await anyio.sleep(0.01)
            shared_hit = await other_crew.use(search, agent="z")
            run_scoped = await other_crew.use(add, agent="z")
        finally:
            await usage.close()
            await other_crew.close()
    assert (first.from_cache, second.from_cache, second.text) == (False, True, "5")
    assert (again.from_cache, again_cached.from_cache) == (False, True)
    # results of tools without a policy stay with their crew run, as in crewAI; declared ones are shared
    assert (shared_hit.from_cache, run_scoped.from_cache) == (True, False)
    assert plugin.runs["add"] == 3
    assert [o.from_cache for o in rolled] == [False, False] and plugin.runs["roll"] == 2
    assert ToolUsage(None, cache=False).cache is None


async def test_verbose_prints_each_tool_use(toolmesh_settings, tools_plugin) -> None:
    printed = io.StringIO()
    async with node_and_mesh(toolmesh_settings, tools_plugin) as mesh:
        usage = await ToolUsage.connect(mesh, verbose=True, verbose_stream=printed)
        quiet = await ToolUsage.connect(mesh, verbose_stream=(silent := io.StringIO()))
        try:
            await usage.use('Action: add\nAction Input: {"a": 2, "b": 3}', agent="math")
            await usage.use({"name": "lookup", "arguments": {"word": "mesh"}}, agent="math")
            await usage.use({"name": "nope", "arguments": {}}, agent="math")
            await quiet.use('Action: add\nAction Input: {"a": 5, "b": 3}', agent="math")
        finally:
            await usage.close()
            await quiet.close()
    text = printed.getvalue()
    assert 'Using Tool: add (math)\nTool Input: {"a":2,"b":3}\nTool Output: 5\n' in text
    assert "Tool Output: MESH\nTool 'lookup' usage: 1/2\n" in text
    assert "Tool Error (tool_selection_error) nope (math): Action 'nope' doesn't exist" in text
    assert silent.getvalue() == ""


async def test_the_synchronous_api(toolmesh_settings, tools_plugin) -> None:
    def agent_code() -> tuple[str, str | None, int]:
        with SyncToolUsage(settings=toolmesh_settings, model="gpt-4o") as usage:
            added = usage.use('Action: add\nAction Input: {"a": 20, "b": 22}', agent="sync")
            missing = usage.use({"name": "nope"}, agent="sync")
            usage.refresh()
            usage.reset_usage("add")
            return added.text, missing.code, usage.usage.ledger.usage("add")

    async with node_and_mesh(toolmesh_settings, tools_plugin):
        text, code, count = await anyio.to_thread.run_sync(agent_code)
    assert (text, code, count) == ("42", "unknown_tool", 0)
    assert tools_plugin.callers[0].agent == "sync"
    with pytest.raises(RuntimeError, match="not open"):
        SyncToolUsage(settings=toolmesh_settings).use("Final Answer: x")


async def test_resetting_one_tools_usage_leaves_the_others(toolmesh_settings, tools_plugin) -> None:
    async with node_and_mesh(toolmesh_settings, tools_plugin) as mesh:
        usage = await ToolUsage.connect(mesh)
        try:
            codes = [
                (await usage.use({"name": "lookup", "arguments": {"word": word}}, agent="x")).code
                for word in ("a", "b", "c")
            ]
            await usage.use({"name": "add", "arguments": {"a": 1, "b": 1}}, agent="x")
            usage.reset_usage("lookup")
            after = await usage.use({"name": "lookup", "arguments": {"word": "d"}}, agent="x")
            with pytest.raises(ToolSelectionError, match="no tool named 'lokup'"):
                usage.reset_usage("lokup")
        finally:
            await usage.close()
    assert codes == [None, None, "usage_limit"]
    assert after.code is None and after.text == "D"
    assert (usage.ledger.usage("lookup"), usage.ledger.usage("add")) == (1, 1)


async def test_agent_and_task_fingerprints_reach_the_tools_context(toolmesh_settings, tools_plugin) -> None:
    agent = AgentInfo(role="researcher", id="agent-7", metadata={"team": "blue"})
    task = TaskInfo(id="report-1", name="Report")
    async with node_and_mesh(toolmesh_settings, tools_plugin) as mesh:
        usage = await ToolUsage.connect(mesh)
        try:
            await usage.use({"name": "add", "arguments": {"a": 1, "b": 2}}, agent=agent, task=task)
            await usage.use({"name": "add", "arguments": {"a": 2, "b": 2}})
        finally:
            await usage.close()
    context: dict[str, Any] = tools_plugin.metas[0]["security_context"]
    assert context == {
        "agent_fingerprint": {"uuid_str": agent.fingerprint, "metadata": {"team": "blue"}},
        "task_fingerprint": {"uuid_str": task.fingerprint, "metadata": {}},
    }
    assert tools_plugin.metas[1] is None  # no agent, no task: nothing to fingerprint
