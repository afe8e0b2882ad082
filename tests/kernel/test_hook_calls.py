"""Every hook goes through ``Kernel.hooks``: one order, one duplicate rule, one call per pipeline step."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import pytest
from toolmesh import ConfigError, Kernel, RunNormally, hookimpl
from toolmesh._pipeline.plugin_manager import TRACE_ENV
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import CachePolicy, ToolRequest, ToolResult, ToolSpec
from toolmesh.testing import running_node

pytestmark = pytest.mark.anyio

OPEN = {"type": "object"}


def _recording(label: str, calls: list[str], *, asynchronous: bool, **marks: bool) -> object:
    """A plugin whose hooks append ``label`` to ``calls``; sync or ``async def`` implementations."""

    if asynchronous:

        class AsyncPlugin:
            @hookimpl(**marks)
            async def toolmesh_before_call(self, arguments: dict[str, Any]) -> RunNormally:
                calls.append(f"before:{label}")
                return RunNormally({**arguments, "seen": [*arguments.get("seen", []), label]})

            @hookimpl(**marks)
            async def toolmesh_validate_arguments(self) -> list[Any]:
                calls.append(f"validate:{label}")
                return []

            @hookimpl(**marks)
            async def toolmesh_after_call(self) -> None:
                calls.append(f"after:{label}")

            @hookimpl(**marks)
            async def toolmesh_startup(self) -> None:
                calls.append(f"startup:{label}")

        return AsyncPlugin()

    class SyncPlugin:
        @hookimpl(**marks)
        def toolmesh_before_call(self, arguments: dict[str, Any]) -> RunNormally:
            calls.append(f"before:{label}")
            return RunNormally({**arguments, "seen": [*arguments.get("seen", []), label]})

        @hookimpl(**marks)
        def toolmesh_validate_arguments(self) -> list[Any]:
            calls.append(f"validate:{label}")
            return []

        @hookimpl(**marks)
        def toolmesh_after_call(self) -> None:
            calls.append(f"after:{label}")

        @hookimpl(**marks)
        def toolmesh_startup(self) -> None:
            calls.append(f"startup:{label}")

    return SyncPlugin()


class Echo:
    """Serves ``echo``, which answers with its arguments."""

    @hookimpl
    def toolmesh_discover_tools(self) -> list[ToolSpec]:
        return [ToolSpec(name="echo", input_schema=OPEN, source="echo")]

    @hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return arguments if spec.source == "echo" else None


async def test_every_hook_runs_tryfirst_then_registration_order_then_trylast() -> None:
    """Sync and async implementations alike: tryfirst, registration order, trylast, for every hook."""
    calls: list[str] = []
    plugins = [
        _recording("late-sync", calls, asynchronous=False, trylast=True),
        _recording("plain-async", calls, asynchronous=True),
        _recording("first-async", calls, asynchronous=True, tryfirst=True),
        _recording("plain-sync", calls, asynchronous=False),
        _recording("first-sync", calls, asynchronous=False, tryfirst=True),
        _recording("late-async", calls, asynchronous=True, trylast=True),
    ]
    expected = ["first-async", "first-sync", "plain-async", "plain-sync", "late-sync", "late-async"]
    kernel = Kernel([Echo(), *plugins], load_entrypoints=False)
    async with kernel:
        result = await kernel.call(ToolRequest(id="1", tool="echo"))
    assert result.structured_content == {"seen": expected}  # the pipeline threads in this order
    for step in ("startup", "before", "validate", "after"):
        assert [call.split(":")[1] for call in calls if call.startswith(f"{step}:")] == expected, step


async def test_a_plugin_registered_later_runs_after_the_earlier_ones() -> None:
    """register_plugin appends to the order (pluggy's own relay would put it first)."""
    calls: list[str] = []
    kernel = Kernel([Echo(), _recording("early", calls, asynchronous=False)], load_entrypoints=False)
    kernel.register_plugin(_recording("later", calls, asynchronous=True), name="later")
    async with kernel:
        result = await kernel.call(ToolRequest(id="1", tool="echo"))
    assert result.structured_content == {"seen": ["early", "later"]}


class Offers:
    """Offers one tool ``name`` (source ``shared``) paired with an implementation labelled ``label``.

    Its ``toolmesh_execute_tool`` runs whatever the kernel chose, whichever instance is asked.
    """

    def __init__(self, name: str, label: str) -> None:
        self.name = name
        self.label = label

    @hookimpl
    def toolmesh_discover_tools(self) -> list[tuple[ToolSpec, str]]:
        return [
            (ToolSpec(name=self.name, description=self.label, input_schema=OPEN, source="shared"), self.label)
        ]

    @hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, context: Any) -> Any:
        if spec.source != "shared":
            return None
        return {"ran": context.kernel.implementation_of(spec.name), "spec": spec.description}


class OffersLast(Offers):
    """Same, with a ``trylast`` discovery: its tool comes after every other plugin's."""

    @hookimpl(trylast=True)
    def toolmesh_discover_tools(self) -> list[tuple[ToolSpec, str]]:
        return [
            (ToolSpec(name=self.name, description=self.label, input_schema=OPEN, source="shared"), self.label)
        ]


async def test_the_kernels_choice_of_two_same_named_tools_executes_and_the_other_is_reported() -> None:
    """Two plugins offer ``dup``: the first in hook order wins, even though the other plugin executes it."""
    loser, winner = OffersLast("dup", "loser"), Offers("dup", "winner")
    kernel = Kernel(load_entrypoints=False)
    kernel.register_plugin(loser, name="offers-last")  # registered first: its execute hook is asked first
    kernel.register_plugin(winner, name="offers")
    problems = await kernel.start()
    assert len(problems) == 1
    assert "'dup' is provided twice" in problems[0]
    assert "plugin 'offers'" in problems[0] and "plugin 'offers-last'" in problems[0]
    assert problems[0].index("keeping the one from plugin 'offers',") > 0
    result = await kernel.call(ToolRequest(id="1", tool="dup"))
    assert result.structured_content == {"ran": "winner", "spec": "winner"}


async def test_a_duplicate_tool_on_a_node_is_reported_and_the_node_keeps_answering(toolmesh_settings) -> None:
    """On a real node, the losing duplicate is not served and every other tool still answers."""
    plugins = [Offers("dup", "first"), Offers("dup", "second"), Offers("single", "only")]
    async with (
        running_node(toolmesh_settings, plugins=plugins, load_entrypoints=False) as node,
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        duplicate = await mesh.call("dup", {})
        single = await mesh.call("single", {})
        listed = [spec for spec in await mesh.list_tools() if spec.name == "dup"]
    assert (duplicate.is_error, duplicate.structured_content) == (False, {"ran": "first", "spec": "first"})
    assert (single.is_error, single.structured_content) == (False, {"ran": "only", "spec": "only"})
    assert [spec.description for spec in listed] == ["first"]
    assert node.kernel.implementation_of("dup") == "first"


async def test_an_async_firstresult_implementation_wins_by_its_returned_object() -> None:
    """firstresult: the first non-None returned object decides; an async one wins even resolving to None."""
    asked: list[str] = []
    stored = ToolResult(id="1", tool="t")

    class AsyncGet:
        @hookimpl(tryfirst=True)
        async def toolmesh_cache_get(self) -> None:
            asked.append("async")

    class SyncGet:
        @hookimpl
        def toolmesh_cache_get(self) -> ToolResult:
            asked.append("sync")
            return stored

    spec = ToolSpec(name="t", input_schema=OPEN)
    assert (
        await Kernel([SyncGet(), AsyncGet()], load_entrypoints=False).hooks.cache_get(spec=spec, key="k")
        is None
    )
    assert asked == ["async"]
    assert await Kernel([SyncGet()], load_entrypoints=False).hooks.cache_get(spec=spec, key="k") == stored


class Counting:
    """Implements every hook of a call and counts the calls per hook."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    @hookimpl
    def toolmesh_discover_tools(self) -> list[ToolSpec]:
        self.calls["discover_tools"] += 1
        cache = CachePolicy(enabled=True)
        return [ToolSpec(name="counted", input_schema=OPEN, source="counting", cache=cache)]

    @hookimpl
    def toolmesh_claim_sources(self, sources: list[str]) -> list[str]:
        self.calls["claim_sources"] += 1
        return []

    @hookimpl
    def toolmesh_tools_changed(self) -> None:
        self.calls["tools_changed"] += 1

    @hookimpl
    def toolmesh_tool_spec(self) -> None:
        self.calls["tool_spec"] += 1

    @hookimpl
    def toolmesh_startup(self) -> None:
        self.calls["startup"] += 1

    @hookimpl
    def toolmesh_shutdown(self) -> None:
        self.calls["shutdown"] += 1

    @hookimpl
    def toolmesh_authorize(self) -> None:
        self.calls["authorize"] += 1

    @hookimpl
    async def toolmesh_before_call(self) -> None:
        self.calls["before_call"] += 1

    @hookimpl
    def toolmesh_validate_arguments(self) -> None:
        self.calls["validate_arguments"] += 1

    @hookimpl
    def toolmesh_cache_key(self) -> None:
        self.calls["cache_key"] += 1

    @hookimpl
    def toolmesh_cache_get(self) -> None:
        self.calls["cache_get"] += 1

    @hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec) -> Any:
        self.calls["execute_tool"] += 1
        return {"ok": True} if spec.source == "counting" else None

    @hookimpl
    def toolmesh_validate_result(self) -> None:
        self.calls["validate_result"] += 1

    @hookimpl
    def toolmesh_should_cache(self) -> None:
        self.calls["should_cache"] += 1

    @hookimpl
    async def toolmesh_cache_put(self) -> None:
        self.calls["cache_put"] += 1

    @hookimpl
    def toolmesh_after_call(self) -> None:
        self.calls["after_call"] += 1

    @hookimpl
    def toolmesh_event(self, event: Any) -> None:
        self.calls[f"event:{event.kind}"] += 1


async def test_each_pipeline_step_calls_its_hook_exactly_once() -> None:
    """A plugin counting its hook calls sees one call per step: nothing twice, nothing around the facade."""
    counting = Counting()
    kernel = Kernel([counting], load_entrypoints=False)
    async with kernel:
        assert counting.calls == {"startup": 1, "discover_tools": 1, "tool_spec": 1}
        counting.calls.clear()
        result = await kernel.call(ToolRequest(id="1", tool="counted"))
        assert result.structured_content == {"ok": True}
        assert counting.calls == {
            "authorize": 1,
            "before_call": 1,
            "validate_arguments": 1,
            "cache_key": 1,
            "cache_get": 1,
            "execute_tool": 1,
            "validate_result": 1,
            "should_cache": 1,
            "cache_put": 1,
            "after_call": 1,
            "event:started": 1,
            "event:finished": 1,
        }
        counting.calls.clear()
        cached = await kernel.call(ToolRequest(id="2", tool="counted"))
        assert cached.cached and counting.calls["execute_tool"] == 0 and counting.calls["cache_get"] == 1
        counting.calls.clear()
        assert kernel.unclaimed_sources(["somewhere.x"]) == ["somewhere.x"]
        await kernel.refresh_tools()
        assert counting.calls == {"claim_sources": 1, "discover_tools": 1, "tool_spec": 1, "tools_changed": 1}
        counting.calls.clear()
    assert counting.calls == {"shutdown": 1}


async def test_a_failing_notification_is_contained_and_the_others_still_run(caplog) -> None:
    """An after_call or event implementation that raises is logged; later ones run and the call succeeds."""
    seen: list[str] = []

    class Broken:
        @hookimpl
        def toolmesh_after_call(self) -> None:
            raise RuntimeError("after_call broke")

        @hookimpl
        async def toolmesh_event(self) -> None:
            raise RuntimeError("event broke")

    class Watching:
        @hookimpl
        def toolmesh_after_call(self) -> None:
            seen.append("after_call")

        @hookimpl
        def toolmesh_event(self, event: Any) -> None:
            seen.append(event.kind)

    kernel = Kernel([Echo(), Broken(), Watching()], load_entrypoints=False)
    async with kernel:
        with caplog.at_level(logging.ERROR, logger="toolmesh.kernel"):
            result = await kernel.call(ToolRequest(id="1", tool="echo", arguments={"a": 1}))
    assert result.structured_content == {"a": 1}
    assert seen == ["started", "after_call", "finished"]
    assert sum("failed in toolmesh_after_call" in record.getMessage() for record in caplog.records) == 1
    assert sum("failed in toolmesh_event" in record.getMessage() for record in caplog.records) == 2


def test_a_pluggy_wrapper_is_refused_at_registration() -> None:
    """Wrappers would see awaitables, not results, and break the one order: registering one fails clearly."""

    class Wrapping:
        @hookimpl(wrapper=True)
        def toolmesh_before_call(self) -> Any:
            return (yield)

    with pytest.raises(ConfigError, match=r"implements toolmesh_before_call as a pluggy wrapper"):
        Kernel([Wrapping()], load_entrypoints=False)
    kernel = Kernel(load_entrypoints=False)
    with pytest.raises(ConfigError, match="wrapper"):
        kernel.register_plugin(Wrapping(), name="wrapping")


async def test_trace_env_logs_the_kernels_hook_calls(monkeypatch, caplog) -> None:
    """TOOLMESH_TRACE_HOOKS=1 logs every hook call the facade makes, with the implementing plugin."""
    monkeypatch.setenv(TRACE_ENV, "1")
    kernel = Kernel([Echo()], load_entrypoints=False)
    with caplog.at_level(logging.DEBUG, logger="toolmesh.hooks"):
        async with kernel:
            await kernel.call(ToolRequest(id="1", tool="echo"))
    messages = [record.getMessage() for record in caplog.records if record.name == "toolmesh.hooks"]
    assert any(m.startswith("call toolmesh_execute_tool impl=") for m in messages)
    assert any(m.startswith("done toolmesh_discover_tools impl=") for m in messages)


async def test_cached_results_survive_through_the_facade() -> None:
    """cache_get through the facade returns what cache_put stored (the built-in in-process cache)."""
    kernel = Kernel(load_entrypoints=False)
    spec = ToolSpec(name="t", input_schema=OPEN)
    stored = ToolResult(id="1", tool="t")
    await kernel.hooks.cache_put(spec=spec, key="k", result=stored, ttl=None)
    assert await kernel.hooks.cache_get(spec=spec, key="k") == stored
