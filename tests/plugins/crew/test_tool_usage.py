"""The lifecycle over a real mesh: guards, cache, answers, errors and the events they emit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import toolmesh
from toolmesh import Mesh
from toolmesh.contracts import ToolEvent, ToolSpec, decode_event
from toolmesh.plugins import crew
from toolmesh.plugins.crew import AgentInfo, TaskInfo, ToolUsage, cache_key, hit_cache_tool
from toolmesh.testing import running_node

from .conftest import SOURCE, ToolsPlugin, _schema, standard_tools

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def crew_mesh(
    settings: toolmesh.Settings, plugin: ToolsPlugin, **options: Any
) -> AsyncIterator[ToolUsage]:
    async with (
        running_node(settings, plugins=[plugin, crew], load_entrypoints=False),
        Mesh(settings=settings) as mesh,
    ):
        usage = await ToolUsage.connect(mesh, **options)
        try:
            yield usage
        finally:
            await usage.close()


async def test_success_returns_result_and_counts(toolmesh_settings, tools_plugin) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        observation = await usage.use('Action: add\nAction Input: {"a": 2, "b": 3}', agent="math")
    assert (observation.ok, observation.text, observation.tool) == (True, "5", "add")
    assert [event.kind for event in observation.events] == ["tool_usage_started", "tool_usage_finished"]
    assert tools_plugin.runs["add"] == 1
    assert tools_plugin.callers[0].agent == "math"
    assert usage.ledger.usage("add") == 1


async def test_usage_limit_per_tool(toolmesh_settings, tools_plugin) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        observations = [
            await usage.use({"name": "lookup", "arguments": {"word": word}}, agent=agent)
            for word, agent in (("a", "x"), ("b", "y"), ("c", "x"))
        ]
    assert [o.code for o in observations] == [None, None, "usage_limit"]
    assert observations[2].text.startswith("Tool 'lookup' has reached its usage limit of 2 times")
    assert tools_plugin.runs["lookup"] == 2
    assert observations[2].events[-1].kind == "tool_usage_finished"


async def test_usage_limit_per_agent(toolmesh_settings) -> None:
    spec = ToolSpec(
        name="ping",
        source=SOURCE,
        input_schema=_schema(n="integer"),
        meta={"crew": {"max_usage_count_per_agent": 1}},
    )
    plugin = ToolsPlugin([(spec, lambda n: n)])
    async with crew_mesh(toolmesh_settings, plugin) as usage:
        first = await usage.use({"name": "ping", "arguments": {"n": 1}}, agent="alice")
        again = await usage.use({"name": "ping", "arguments": {"n": 2}}, agent="alice")
        other = await usage.use({"name": "ping", "arguments": {"n": 3}}, agent="bob")
    assert (first.code, again.code, other.code) == (None, "usage_limit", None)
    assert "for agent 'alice'" in again.text
    assert plugin.runs["ping"] == 2


async def test_repeated_identical_call_is_not_executed(toolmesh_settings, tools_plugin) -> None:
    call = {"name": "add", "arguments": {"a": 1, "b": 1}}
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        first = await usage.use(call, agent="a")
        repeat = await usage.use(call, agent="a")
        other_agent = await usage.use(call, agent="b")
        changed = await usage.use({"name": "add", "arguments": {"a": 1, "b": 2}}, agent="a")
        back = await usage.use(call, agent="a")
    assert first.ok and other_agent.ok and changed.ok and back.ok
    assert repeat.code == "repeated_call"
    assert repeat.text.startswith("I tried reusing the same input, I must stop using this action input.")
    assert repeat.events == []
    # crewAI caches every tool by default: the same call by another agent, or later, is answered from it
    assert (other_agent.from_cache, changed.from_cache, back.from_cache) == (True, False, True)
    assert tools_plugin.runs["add"] == 2


async def test_result_as_answer_ends_the_turn(toolmesh_settings, tools_plugin) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        answer = await usage.use('Action: finish\nAction Input: {"text": "done"}')
        final = await usage.use("Thought: ok\nFinal Answer: all good")
    assert (answer.is_answer, answer.text, answer.final_answer) == (True, "REPORT: done", False)
    assert answer.events[-1].attributes["result_as_answer"] is True
    assert (final.is_answer, final.final_answer, final.text) == (True, True, "all good")


async def test_invalid_arguments_are_explained_and_not_sent(toolmesh_settings, tools_plugin) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        observation = await usage.use('Action: add\nAction Input: {"a": "two", "b": 3}', agent="m")
    assert observation.code == "invalid_arguments"
    assert "$.a" in observation.text and "Tool add accepts these inputs" in observation.text
    assert [event.kind for event in observation.events] == ["tool_validate_input_error"]
    assert tools_plugin.runs["add"] == 0


async def test_extra_arguments_are_dropped_when_the_schema_forbids_them(
    toolmesh_settings, tools_plugin
) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        observation = await usage.use({"name": "add", "arguments": {"a": 1, "b": 2, "why": "because"}})
    assert (observation.ok, observation.arguments) == (True, {"a": 1, "b": 2})


async def test_unknown_tool_emits_selection_error(toolmesh_settings, tools_plugin) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        observation = await usage.use("Action: Translate Text\nAction Input: {}", agent="m", task="t1")
        fuzzy = await usage.use('Action: serch web\nAction Input: {"query": "x"}', agent="m")
    assert observation.code == "unknown_tool"
    assert "Tool Name: search_web" in observation.text
    event = observation.events[0]
    assert (event.kind, event.tool, event.attributes["task_id"]) == (
        "tool_selection_error",
        "Translate Text",
        "t1",
    )
    assert (fuzzy.ok, fuzzy.tool) == (True, "search_web")


async def test_tool_failure_emits_error_and_moves_on(toolmesh_settings, tools_plugin) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        observation = await usage.use({"name": "flaky", "arguments": {"reason": "disk full"}})
    assert observation.code == "execution_failed"
    assert "This was the error:" in observation.text and "disk full" in observation.text
    assert "Moving on then." in observation.text
    assert [event.kind for event in observation.events] == ["tool_usage_started", "tool_usage_error"]


@pytest.mark.parametrize(("model", "attempts"), [("gpt-4o", 2), ("llama-3", 3), (None, 3)])
async def test_parse_failures_move_on_after_max_attempts(
    toolmesh_settings, tools_plugin, model, attempts
) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin, model=model) as usage:
        texts = [(await usage.use("Thought: hmm", agent="a")).text for _ in range(attempts + 1)]
    moved_on = ["Moving on then." in text for text in texts]
    assert moved_on == [False] * (attempts - 1) + [True, False]
    assert all("Action Input: [JSON object]" in text for text in texts)


@pytest.mark.parametrize(("model", "every"), [("o3-mini", 4), ("mistral", 3)])
async def test_format_reminder_is_readded_periodically(toolmesh_settings, tools_plugin, model, every) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin, model=model) as usage:
        texts = [
            (await usage.use({"name": "add", "arguments": {"a": n, "b": 0}}, agent="a", task="t")).text
            for n in range(every * 2)
        ]
    reminded = [index + 1 for index, text in enumerate(texts) if "You ONLY have access" in text]
    assert reminded == [every, every * 2]


@pytest.mark.usefixtures("no_blocking_calls")  # the cache reader runs on the loop: it must not block it
async def test_should_cache_policy_and_cache_reader(toolmesh_settings, tools_plugin) -> None:
    def policy(arguments: dict[str, Any], result: Any) -> bool:
        return arguments["query"] != "news"

    async with crew_mesh(toolmesh_settings, tools_plugin, should_cache={"search_web": policy}) as usage:
        usage.local_tools[crew.HIT_CACHE] = hit_cache_tool(usage.cache)
        usage.set_tools([spec for spec in usage.tools if spec.name != crew.HIT_CACHE])
        for agent in ("a", "b"):
            await usage.use({"name": "search_web", "arguments": {"query": "news"}}, agent=agent)
            await usage.use({"name": "search_web", "arguments": {"query": "cats"}}, agent=agent)
        key = cache_key("search_web", {"query": "cats"})
        read = await usage.use({"name": "hit_cache", "arguments": {"key": key}}, agent="c")
        spelled = await usage.use(
            {"name": "Hit Cache", "arguments": {"key": 'tool:search_web|input:{ "query" : "cats" }'}},
            agent="c",
        )
        missing = await usage.use(
            {"name": "hit_cache", "arguments": {"key": key.replace("cats", "dogs")}}, agent="c"
        )
        bad_key = await usage.use({"name": "hit_cache", "arguments": {"key": "search_web cats"}}, agent="c")
    assert tools_plugin.runs["search_web"] == 3  # news twice (vetoed), cats once
    assert read.text == spelled.text == "results for cats"
    assert missing.text.startswith("No cached result for 'search_web'")
    assert bad_key.code == "execution_failed" and "is not of the form" in bad_key.text


async def test_cache_hits_across_two_nodes_and_two_clients(toolmesh_settings) -> None:
    plugins = [ToolsPlugin(standard_tools()), ToolsPlugin(standard_tools())]
    call = {"name": "search_web", "arguments": {"query": "shared"}}
    async with (
        running_node(toolmesh_settings, plugins=[plugins[0]], load_entrypoints=False, name="n1"),
        running_node(toolmesh_settings, plugins=[plugins[1]], load_entrypoints=False, name="n2"),
        Mesh(settings=toolmesh_settings) as first_mesh,
        Mesh(settings=toolmesh_settings) as second_mesh,
    ):
        first = await ToolUsage.connect(first_mesh)
        second = await ToolUsage.connect(second_mesh)
        try:
            executed = await first.use(call, agent="a")
            key = cache_key("search_web", {"query": "shared"})
            with anyio.fail_after(5):
                while key not in second.cache:
                    await anyio.sleep(0.01)
            hit = await second.use(call, agent="b")
            direct = await second_mesh.call("search_web", {"query": "shared"}, cache=False)
        finally:
            await first.close()
            await second.close()
    assert (executed.from_cache, hit.from_cache, hit.text) == (False, True, "results for shared")
    assert hit.events[-1].attributes["from_cache"] is True
    assert plugins[0].runs["search_web"] + plugins[1].runs["search_web"] == 2  # first use + the direct call
    assert direct.structured_content == "results for shared"


async def test_missing_env_var_makes_tool_unavailable(toolmesh_settings, monkeypatch) -> None:
    monkeypatch.delenv("CREW_TEST_API_KEY", raising=False)
    spec = crew.with_env_vars(
        ToolSpec(name="paid_api", source=SOURCE, input_schema=_schema(q="string")),
        [
            crew.EnvVar("CREW_TEST_API_KEY", "key of the paid API"),
            crew.EnvVar("CREW_TEST_REGION", default="eu", required=False),
        ],
    )
    plugin = ToolsPlugin([(spec, lambda q: q)])
    async with crew_mesh(toolmesh_settings, plugin) as usage:
        observation = await usage.use({"name": "paid_api", "arguments": {"q": "x"}})
    assert observation.code == "unavailable"
    assert "CREW_TEST_API_KEY (key of the paid API)" in observation.text
    assert "CREW_TEST_REGION" not in observation.text
    assert plugin.runs["paid_api"] == 0


@pytest.mark.parametrize(
    ("environ", "reason"),
    [({}, "CREW_X"), ({"CREW_X": "1"}, None), ({"CREW_X": ""}, "CREW_X")],
)
def test_check_env(environ: dict[str, str], reason: str | None) -> None:
    spec = ToolSpec(name="t", required_env=("CREW_X",))
    found = crew.check_env(spec, environ)
    assert (found is None) if reason is None else (reason in found)


async def test_scripted_agent_run_end_to_end_with_event_stream(toolmesh_settings, tools_plugin) -> None:
    script = [
        ('Thought: I need numbers\nAction: add\nAction Input: {"a": 20, "b": 22}', None),
        ({"name": "Search Web", "arguments": '{"query": "answer"}'}, None),
        ({"name": "search_web", "arguments": {"query": "answer"}}, None),
        ("Action: translate\nAction Input: {}", "unknown_tool"),
        ('Action: finish\nAction Input: {"text": "42"}', None),
    ]
    seen: list[ToolEvent] = []
    async with (
        running_node(toolmesh_settings, plugins=[tools_plugin], load_entrypoints=False),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        assert mesh.nc is not None
        subscription = await mesh.nc.subscribe(f"{toolmesh_settings.prefix}.event.>")
        usage = await ToolUsage.connect(mesh)
        agent, task = AgentInfo(role="researcher", id="agent-1"), TaskInfo(id="task-9", name="answer")
        observations = [await usage.use(output, agent=agent, task=task) for output, _ in script]
        await usage.close()
        await mesh.nc.flush()
        with anyio.move_on_after(1):
            async for message in subscription.messages:
                event = decode_event(message.data)
                if event.kind.startswith("tool_"):
                    seen.append(event)
                if event.kind == "tool_usage_finished" and event.tool == "finish":
                    break
    assert [o.code for o in observations] == [None, None, "repeated_call", "unknown_tool", None]
    assert observations[0].text == "42" and observations[-1].is_answer
    assert [(event.kind, event.tool) for event in seen] == [
        ("tool_usage_started", "add"),
        ("tool_usage_finished", "add"),
        ("tool_usage_started", "search_web"),
        ("tool_usage_finished", "search_web"),
        ("tool_selection_error", "translate"),
        ("tool_usage_started", "finish"),
        ("tool_usage_finished", "finish"),
    ]
    finished = seen[1].attributes
    assert finished["agent_role"] == "researcher" and finished["task_id"] == "task-9"
    assert (
        finished["source_fingerprint"] == agent.fingerprint
        and finished["task_fingerprint"] == task.fingerprint
    )
    assert finished["tool_args"] == {"a": 20, "b": 22} and finished["output"] == "42"
    assert finished["started_at"] <= finished["finished_at"] and finished["from_cache"] is False
    assert all(event.attributes["tool_class"] for event in seen)


@pytest.mark.parametrize(
    ("rule", "text", "cached"),
    [
        (None, "x", True),
        ("always", "", True),
        ("never", "x", False),
        ("non_empty", "", False),
        ("non_empty", "x", True),
        ({"skip_if_contains": ["Rate Limit"]}, "rate limit hit", False),
        ({"skip_if_contains": ["Rate Limit"]}, "fine", True),
    ],
)
def test_declared_should_cache(rule: Any, text: str, cached: bool) -> None:
    from toolmesh.contracts import TextContent, ToolResult

    spec = ToolSpec(name="t", meta={"crew": {"should_cache": rule}} if rule is not None else None)
    policy = crew.spec_should_cache(spec)
    result = ToolResult(id="1", tool="t", content=[TextContent(text=text)] if text else [])
    assert (policy is None or policy({}, result)) is cached


def test_unreadable_should_cache_rule_is_named() -> None:
    with pytest.raises(ValueError, match="meta.crew.should_cache='sometimes'"):
        crew.spec_should_cache(ToolSpec(name="t", meta={"crew": {"should_cache": "sometimes"}}))


async def test_concurrent_agents_cannot_overshoot_a_limit(toolmesh_settings) -> None:
    async def slow(word: str) -> str:
        await anyio.sleep(0.05)
        return word

    spec = ToolSpec(name="slow", source=SOURCE, max_usage_count=2, input_schema=_schema(word="string"))
    plugin = ToolsPlugin([(spec, slow)])
    codes: list[str | None] = []
    async with crew_mesh(toolmesh_settings, plugin) as usage:

        async def agent(n: int) -> None:
            codes.append(
                (await usage.use({"name": "slow", "arguments": {"word": str(n)}}, agent=f"a{n}")).code
            )

        async with anyio.create_task_group() as tg:
            for n in range(5):
                tg.start_soon(agent, n)
    assert sorted(codes, key=str) == [None, None, "usage_limit", "usage_limit", "usage_limit"]
    assert plugin.runs["slow"] == 2
    assert usage.ledger.usage("slow") == 2


async def test_failures_and_cache_hits_do_not_count(toolmesh_settings, tools_plugin) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        await usage.use({"name": "flaky", "arguments": {"reason": "x"}}, agent="a")
        await usage.use({"name": "lookup", "arguments": {"word": "w"}}, agent="a")
        hit = await usage.use({"name": "lookup", "arguments": {"word": "w"}}, agent="b")
    assert hit.from_cache
    assert (usage.ledger.usage("flaky"), usage.ledger.usage("lookup")) == (0, 1)


async def test_refresh_sees_new_tools(toolmesh_settings, tools_plugin) -> None:
    async with crew_mesh(toolmesh_settings, tools_plugin) as usage:
        before = {spec.name for spec in usage.tools}
        extra = ToolsPlugin([(ToolSpec(name="late_tool", source=SOURCE), lambda: "late")])
        async with running_node(toolmesh_settings, plugins=[extra], load_entrypoints=False):
            with anyio.fail_after(5):
                while "late_tool" not in {spec.name for spec in usage.tools}:
                    await usage.refresh()
                    await anyio.sleep(0.05)
            late = await usage.use({"name": "late_tool", "arguments": {}})
    assert "late_tool" not in before
    assert late.text == "late"
