"""The call pipeline of an in-process Kernel: decisions, validation, execution, caching, events."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest
import toolmesh._pipeline.memory_cache
from toolmesh import Complete, Kernel, Reject, RunNormally, hookimpl
from toolmesh._pipeline.context import CallContext
from toolmesh._pipeline.plugin_manager import await_maybe
from toolmesh._pipeline.validation import ValidationIssue
from toolmesh.contracts import (
    CachePolicy,
    ErrorCode,
    TextContent,
    ToolError,
    ToolEvent,
    ToolRequest,
    ToolResult,
    ToolSpec,
)

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop

ToolBody = Callable[[dict[str, Any], CallContext], Any]

_INTEGERS = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}


def make_spec(name: str, **fields: Any) -> ToolSpec:
    return ToolSpec(name=name, source="test", **fields)


class Tools:
    """Provides tools from (spec, body) pairs; executes only specs whose source is 'test'."""

    def __init__(self, *entries: tuple[ToolSpec, ToolBody], discover: bool = True) -> None:
        self.specs = [spec for spec, _ in entries] if discover else []
        self.bodies = {spec.name: body for spec, body in entries}
        self.runs: list[tuple[str, dict[str, Any], str]] = []

    @hookimpl
    def toolmesh_discover_tools(self) -> list[ToolSpec]:
        return self.specs

    @hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
        if spec.source != "test":
            return None
        return self._run(spec, arguments, context)

    async def _run(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
        self.runs.append((spec.name, arguments, context.request.id))
        return await await_maybe(self.bodies[spec.name](arguments, context))

    def ran(self, name: str) -> int:
        return sum(1 for run in self.runs if run[0] == name)


def add(arguments: dict[str, Any], context: CallContext) -> int:
    return arguments["a"] + arguments["b"]


def echo(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    return arguments


async def sleep_long(arguments: dict[str, Any], context: CallContext) -> str:
    await anyio.sleep(10)
    return "woke"


def boom(arguments: dict[str, Any], context: CallContext) -> Any:
    raise ValueError("kaboom")


ADD = make_spec("add", description="Add.", input_schema=_INTEGERS)
ECHO = make_spec("echo", description="Echo.")


class Events:
    """Records every event the kernel emits."""

    def __init__(self) -> None:
        self.events: list[ToolEvent] = []

    @hookimpl
    def toolmesh_event(self, event: ToolEvent) -> None:
        self.events.append(event)

    @property
    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]


class Touch:
    """A decision hook that edits one argument by appending a marker."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    @hookimpl
    def toolmesh_before_call(self, arguments: dict[str, Any]) -> RunNormally:
        return RunNormally({**arguments, "trail": arguments.get("trail", "") + self.marker})


class Decide:
    """A decision hook that returns a fixed decision and counts its calls."""

    def __init__(self, decision: Any) -> None:
        self.decision = decision
        self.calls = 0

    @hookimpl
    def toolmesh_before_call(self) -> Any:
        self.calls += 1
        return self.decision


async def start(*plugins: object) -> Kernel:
    kernel = Kernel(plugins=plugins, load_entrypoints=False, node="test-node")
    assert await kernel.start() == []
    return kernel


async def call(
    kernel: Kernel, tool: str, arguments: dict[str, Any] | None = None, **fields: Any
) -> ToolResult:
    fields.setdefault("id", "r1")
    return await kernel.call(ToolRequest(tool=tool, arguments=arguments or {}, **fields))


def error_of(result: ToolResult) -> ToolError:
    assert result.is_error, result
    assert result.error is not None
    return result.error


# ---------------------------------------------------------------- plain calls


async def test_successful_call() -> None:
    """A valid call returns the value as structured content plus text, addressed to the request."""
    tools = Tools((ADD, add))
    result = await call(await start(tools), "add", {"a": 2, "b": 3}, id="abc")
    assert not result.is_error
    assert result.structured_content == 5
    assert result.text == "5"
    assert (result.id, result.tool, result.node, result.cached) == ("abc", "add", "test-node", False)
    assert result.duration_ms is not None and result.duration_ms >= 0
    assert tools.runs == [("add", {"a": 2, "b": 3}, "abc")]


# ---------------------------------------------------------------- decisions


@pytest.mark.parametrize(("markers", "trail"), [(("A", "B"), "AB"), (("B", "A"), "BA")])
async def test_run_normally_edits_thread_in_registration_order(markers: tuple[str, str], trail: str) -> None:
    """Each RunNormally sees the previous plugin's edits; plugins run in registration order."""
    tools = Tools((ECHO, echo))
    kernel = await start(tools, *(Touch(marker) for marker in markers))
    result = await call(kernel, "echo", {"x": 1})
    assert result.structured_content == {"x": 1, "trail": trail}


async def test_edited_arguments_are_what_gets_validated() -> None:
    """Decision hooks run before validation: a hook may repair arguments."""

    class FillB:
        @hookimpl
        def toolmesh_before_call(self, arguments: dict[str, Any]) -> RunNormally:
            return RunNormally({"b": 10, **arguments})

    result = await call(await start(Tools((ADD, add)), FillB()), "add", {"a": 1})
    assert result.structured_content == 11


async def test_none_decision_runs_normally() -> None:
    """A decision hook returning None leaves the call and its arguments unchanged."""
    tools = Tools((ADD, add))
    result = await call(await start(tools, Decide(None)), "add", {"a": 1, "b": 1})
    assert result.structured_content == 2
    assert tools.ran("add") == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [(42, 42), ({"answer": "cached elsewhere"}, {"answer": "cached elsewhere"}), ("done", "done")],
)
async def test_complete_answers_without_executing(value: Any, expected: Any) -> None:
    """Complete(result) becomes the call's result and the tool never runs."""
    tools = Tools((ADD, add))
    result = await call(await start(tools, Decide(Complete(value))), "add", {"a": 1, "b": 2})
    assert not result.is_error
    assert result.structured_content == expected
    assert tools.runs == []


async def test_complete_with_tool_result() -> None:
    """A ToolResult given to Complete is passed through, re-addressed to the request."""
    answer = ToolResult(id="other", tool="other", content=[TextContent(text="from policy")])
    result = await call(
        await start(Tools((ADD, add)), Decide(Complete(answer))), "add", {"a": 1, "b": 2}, id="r9"
    )
    assert (result.id, result.tool, result.text) == ("r9", "add", "from policy")


@pytest.mark.parametrize(
    ("decision", "code"),
    [
        (Reject("not on this toolset"), ErrorCode.REJECTED),
        (Reject("3 calls per task", code=ErrorCode.USAGE_LIMIT), ErrorCode.USAGE_LIMIT),
    ],
)
async def test_reject_fails_with_its_code(decision: Reject, code: ErrorCode) -> None:
    """Reject refuses the call with its code (rejected by default) and reason; the tool never runs."""
    tools = Tools((ADD, add))
    result = await call(await start(tools, Decide(decision)), "add", {"a": 1, "b": 2})
    error = error_of(result)
    assert error.code is code
    assert decision.reason in error.message
    assert tools.runs == []


async def test_reject_details_reach_the_caller() -> None:
    """The details of a Reject are carried in the error."""
    result = await call(await start(Tools((ADD, add)), Decide(Reject("no", details={"policy": "p1"}))), "add")
    assert error_of(result).details == {"policy": "p1"}


@pytest.mark.parametrize(("decision", "text"), [(Complete(1), "1"), (Reject("stop"), "rejected: stop")])
async def test_first_final_decision_stops_the_rest(decision: Any, text: str) -> None:
    """After a Complete or Reject no later decision hook is consulted; that decision is the answer."""
    earlier, later = Decide(None), Decide(Reject("later"))
    kernel = await start(Tools((ADD, add)), earlier, Decide(decision), later)
    result = await call(kernel, "add", {"a": 1, "b": 2})
    assert (earlier.calls, later.calls) == (1, 0)
    assert result.text == text


async def test_async_hook_implementations_are_awaited() -> None:
    """Hook implementations may be async: discovery, decisions and validation are awaited."""

    class AsyncPlugin:
        @hookimpl
        async def toolmesh_discover_tools(self) -> list[ToolSpec]:
            await anyio.lowlevel.checkpoint()
            return [make_spec("late", input_schema=_INTEGERS)]

        @hookimpl
        async def toolmesh_before_call(self, arguments: dict[str, Any]) -> RunNormally:
            await anyio.lowlevel.checkpoint()
            return RunNormally({**arguments, "b": arguments["b"] * 100})

        @hookimpl
        async def toolmesh_validate_arguments(self, arguments: dict[str, Any]) -> list[ValidationIssue]:
            await anyio.lowlevel.checkpoint()
            return [ValidationIssue("$.a", "must be odd")] if arguments["a"] % 2 == 0 else []

    tools = Tools((make_spec("late", input_schema=_INTEGERS), add), discover=False)
    kernel = await start(tools, AsyncPlugin())
    assert [spec.name for spec in kernel.tools] == ["late"]
    assert (await call(kernel, "late", {"a": 1, "b": 2})).structured_content == 201
    error = error_of(await call(kernel, "late", {"a": 2, "b": 2}))
    assert error.code is ErrorCode.INVALID_ARGUMENTS
    assert error.details is not None and {"path": "$.a", "message": "must be odd"} in error.details["issues"]


# ---------------------------------------------------------------- validation

_LIST_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "items": {"type": "array", "items": {"type": "integer"}}},
    "required": ["name"],
    "additionalProperties": False,
}


async def test_invalid_arguments_report_every_issue_with_its_path() -> None:
    """All schema violations are reported, each with its JSON path, and the tool does not run."""
    tools = Tools((make_spec("items", input_schema=_LIST_SCHEMA), echo))
    result = await call(await start(tools), "items", {"items": [1, "two", 3, "four"], "extra": True})
    error = error_of(result)
    assert error.code is ErrorCode.INVALID_ARGUMENTS
    assert error.details is not None
    paths = sorted(issue["path"] for issue in error.details["issues"])
    assert paths == ["$", "$", "$.items[1]", "$.items[3]"]
    root = " ".join(issue["message"] for issue in error.details["issues"] if issue["path"] == "$")
    assert "name" in root and "extra" in root
    assert error.details["input_schema"] == _LIST_SCHEMA
    assert "$.items[1]" in error.message and "$.items[3]" in error.message
    assert tools.runs == []


# ---------------------------------------------------------------- resolution


async def test_unknown_tool_suggests_close_names() -> None:
    """A name nobody serves fails with unknown_tool and the closest local names first."""
    sub = make_spec("subtract", input_schema=_INTEGERS)
    result = await call(await start(Tools((ADD, add), (sub, add))), "ad")
    error = error_of(result)
    assert error.code is ErrorCode.UNKNOWN_TOOL
    assert error.suggestions[0] == "add"
    assert "subtract" not in error.suggestions
    assert "'ad'" in error.message and "add" in error.message


async def test_unavailable_tool_reports_its_reason() -> None:
    """A spec marked unavailable fails with unavailable, its reason, and is retryable; nothing runs."""
    spec = make_spec("gh", available=False, unavailable_reason="GITHUB_TOKEN is not set")
    tools = Tools((spec, echo))
    error = error_of(await call(await start(tools), "gh"))
    assert error.code is ErrorCode.UNAVAILABLE
    assert "GITHUB_TOKEN is not set" in error.message
    assert error.retryable
    assert tools.runs == []


async def test_no_plugin_executes_the_source() -> None:
    """A tool whose source no plugin executes fails as unavailable, naming the source."""

    class Orphan:
        @hookimpl
        def toolmesh_discover_tools(self) -> list[ToolSpec]:
            return [ToolSpec(name="orphan", source="nobody")]

    error = error_of(await call(await start(Orphan()), "orphan"))
    assert error.code is ErrorCode.UNAVAILABLE
    assert "'nobody'" in error.message


# ---------------------------------------------------------------- execution failures


async def test_raising_tool_is_execution_failed() -> None:
    """An exception from the tool becomes execution_failed naming the exception type and message."""
    error = error_of(await call(await start(Tools((make_spec("boom"), boom))), "boom"))
    assert error.code is ErrorCode.EXECUTION_FAILED
    assert "ValueError" in error.message and "kaboom" in error.message
    assert not error.retryable


@pytest.mark.parametrize(
    ("spec_timeout", "request_fields", "mentioned"),
    [
        (None, {"timeout": 0.05}, "request timeout 0.05s"),
        (0.05, {}, "tool timeout 0.05s"),
        (0.05, {"timeout": 30.0}, "tool timeout 0.05s"),
        (30.0, {"timeout": 0.05}, "request timeout 0.05s"),
        (None, {"deadline_in": 0.05}, "request deadline"),
        (None, {"deadline_in": 0.05, "timeout": 30.0}, "request deadline"),
    ],
)
async def test_deadline_is_the_earliest_limit(
    spec_timeout: float | None, request_fields: dict[str, Any], mentioned: str
) -> None:
    """A tool still running at the earliest of request timeout, deadline and tool timeout gets timeout."""
    fields = dict(request_fields)
    if "deadline_in" in fields:
        fields["deadline"] = time.time() + fields.pop("deadline_in")
    kernel = await start(Tools((make_spec("slow", timeout=spec_timeout), sleep_long)))
    started = time.monotonic()
    error = error_of(await call(kernel, "slow", **fields))
    assert time.monotonic() - started < 5
    assert error.code is ErrorCode.TIMEOUT
    assert error.retryable
    assert mentioned in error.message


async def test_default_timeout_applies_without_other_limits() -> None:
    """With no request or tool limit, settings.default_timeout bounds the call."""
    from toolmesh import Settings

    kernel = Kernel(
        plugins=[Tools((make_spec("slow"), sleep_long))],
        settings=Settings(default_timeout=0.05),
        load_entrypoints=False,
    )
    await kernel.start()
    error = error_of(await call(kernel, "slow"))
    assert error.code is ErrorCode.TIMEOUT
    assert "default timeout" in error.message


async def test_tool_sees_its_remaining_time() -> None:
    """context.remaining() counts down from the effective deadline."""

    def remaining(arguments: dict[str, Any], context: CallContext) -> float | None:
        return context.remaining()

    result = await call(await start(Tools((make_spec("left", timeout=20.0), remaining))), "left", timeout=5.0)
    assert 0 < result.structured_content <= 5.0


class Opaque:
    pass


@pytest.mark.parametrize("value", [object(), Opaque(), {"key": object()}, [1, Opaque()]])
async def test_unserialisable_return_is_execution_failed(value: Any) -> None:
    """A return value that is not JSON-able fails the call with execution_failed."""
    error = error_of(
        await call(await start(Tools((make_spec("odd"), lambda arguments, context: value))), "odd")
    )
    assert error.code is ErrorCode.EXECUTION_FAILED
    assert "JSON" in error.message


async def test_output_schema_violation_is_execution_failed() -> None:
    """A result that violates output_schema fails with execution_failed and the issue's path."""
    spec = make_spec("count", output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    error = error_of(
        await call(await start(Tools((spec, lambda arguments, context: {"n": "three"}))), "count")
    )
    assert error.code is ErrorCode.EXECUTION_FAILED
    assert "output_schema" in error.message
    assert error.details is not None and [issue["path"] for issue in error.details["issues"]] == ["$.n"]


async def test_output_schema_accepts_conforming_result() -> None:
    """A result matching output_schema passes unchanged."""
    spec = make_spec("count", output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    result = await call(await start(Tools((spec, lambda arguments, context: {"n": 3}))), "count")
    assert result.structured_content == {"n": 3}


# ---------------------------------------------------------------- caching

CACHED_ADD = make_spec("cadd", input_schema=_INTEGERS, cache=CachePolicy(ttl=60.0))


async def test_identical_call_is_served_from_cache() -> None:
    """The second identical call is cached=True, re-addressed to its own id, and the tool ran once."""
    tools = Tools((CACHED_ADD, add))
    kernel = await start(tools)
    first = await call(kernel, "cadd", {"a": 1, "b": 2}, id="one")
    second = await call(kernel, "cadd", {"b": 2, "a": 1}, id="two")
    assert (first.cached, second.cached) == (False, True)
    assert second.id == "two"
    assert second.structured_content == first.structured_content == 3
    assert tools.ran("cadd") == 1


async def test_different_arguments_miss_the_cache() -> None:
    """Calls with different arguments are cached separately."""
    tools = Tools((CACHED_ADD, add))
    kernel = await start(tools)
    await call(kernel, "cadd", {"a": 1, "b": 2})
    result = await call(kernel, "cadd", {"a": 1, "b": 3})
    assert (result.cached, result.structured_content) == (False, 4)
    assert tools.ran("cadd") == 2


async def test_tool_without_cache_policy_always_runs() -> None:
    """Only tools that opt in (enabled CachePolicy) are cached."""
    disabled = make_spec("off", input_schema=_INTEGERS, cache=CachePolicy(enabled=False))
    tools = Tools((ADD, add), (disabled, add))
    kernel = await start(tools)
    for name in ("add", "off"):
        await call(kernel, name, {"a": 1, "b": 2})
        assert not (await call(kernel, name, {"a": 1, "b": 2})).cached
        assert tools.ran(name) == 2


async def test_request_cache_false_bypasses_the_cache() -> None:
    """A request with cache=False runs the tool even when a cached result exists."""
    tools = Tools((CACHED_ADD, add))
    kernel = await start(tools)
    await call(kernel, "cadd", {"a": 1, "b": 2})
    result = await call(kernel, "cadd", {"a": 1, "b": 2}, cache=False)
    assert not result.cached
    assert tools.ran("cadd") == 2


@pytest.mark.parametrize(("verdict", "runs"), [(False, 2), (None, 1), (True, 1)])
async def test_should_cache_can_veto(verdict: bool | None, runs: int) -> None:
    """toolmesh_should_cache returning False keeps a result out of the cache; None or True do not."""

    class Veto:
        @hookimpl
        def toolmesh_should_cache(self) -> bool | None:
            return verdict

    tools = Tools((CACHED_ADD, add))
    kernel = await start(tools, Veto())
    await call(kernel, "cadd", {"a": 1, "b": 2})
    await call(kernel, "cadd", {"a": 1, "b": 2})
    assert tools.ran("cadd") == runs


async def test_cache_key_hook_decides_what_is_identical() -> None:
    """A plugin's toolmesh_cache_key overrides the default key (here: ignoring a nonce argument)."""

    class IgnoreNonce:
        @hookimpl
        def toolmesh_cache_key(self, spec: ToolSpec, arguments: dict[str, Any]) -> str:
            return f"{spec.name}:{arguments['a']}:{arguments['b']}"

    schema = {**_INTEGERS, "properties": {**_INTEGERS["properties"], "nonce": {"type": "string"}}}
    tools = Tools((make_spec("cadd", input_schema=schema, cache=CachePolicy()), add))
    kernel = await start(tools, IgnoreNonce())
    await call(kernel, "cadd", {"a": 1, "b": 2, "nonce": "x"})
    assert (await call(kernel, "cadd", {"a": 1, "b": 2, "nonce": "y"})).cached
    assert tools.ran("cadd") == 1


async def test_async_cache_backend() -> None:
    """A cache plugin with async get/put is awaited, consulted before the memory cache, and given the TTL."""

    class AsyncCache:
        def __init__(self) -> None:
            self.store: dict[str, tuple[ToolResult, float | None]] = {}
            self.hits = 0

        @hookimpl
        async def toolmesh_cache_get(self, key: str) -> ToolResult | None:
            await anyio.lowlevel.checkpoint()
            entry = self.store.get(key)
            self.hits += entry is not None
            return entry[0] if entry else None

        @hookimpl
        async def toolmesh_cache_put(self, key: str, result: ToolResult, ttl: float | None) -> None:
            await anyio.lowlevel.checkpoint()
            self.store[key] = (result, ttl)

    backend = AsyncCache()
    tools = Tools((CACHED_ADD, add))
    kernel = await start(tools, backend)
    await call(kernel, "cadd", {"a": 1, "b": 2})
    assert (await call(kernel, "cadd", {"a": 1, "b": 2})).cached
    assert backend.hits == 1
    assert [ttl for _, ttl in backend.store.values()] == [60.0]
    assert list(backend.store) == ['tool:cadd|input:{"a":1,"b":2}']


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_cached_result_expires_after_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached result is served until its TTL has passed, then the tool runs again."""
    clock = FakeClock()
    monkeypatch.setattr(toolmesh._pipeline.memory_cache, "time", clock)
    tools = Tools((make_spec("ttl", input_schema=_INTEGERS, cache=CachePolicy(ttl=10.0)), add))
    kernel = await start(tools)
    await call(kernel, "ttl", {"a": 1, "b": 2})
    clock.now += 9.0
    assert (await call(kernel, "ttl", {"a": 1, "b": 2})).cached
    clock.now += 1.5
    assert not (await call(kernel, "ttl", {"a": 1, "b": 2})).cached
    assert tools.ran("ttl") == 2


@pytest.mark.parametrize(
    "body",
    [
        boom,
        lambda arguments, context: ToolResult.failure(
            "x", "x", ToolError(code=ErrorCode.SANDBOX_VIOLATION, message="m")
        ),
    ],
    ids=["raises", "returns-error-result"],
)
async def test_errors_are_never_cached(body: ToolBody) -> None:
    """A failed call is not cached: the next identical call runs the tool again."""
    tools = Tools((make_spec("flaky", cache=CachePolicy(ttl=None)), body))
    kernel = await start(tools)
    first = await call(kernel, "flaky")
    second = await call(kernel, "flaky")
    assert first.is_error and second.is_error and not second.cached
    assert tools.ran("flaky") == 2


async def test_invalid_arguments_are_not_cached() -> None:
    """Validation failures happen before the cache and never populate it."""
    tools = Tools((CACHED_ADD, add))
    kernel = await start(tools)
    for _ in range(2):
        assert error_of(await call(kernel, "cadd", {"a": "x", "b": 1})).code is ErrorCode.INVALID_ARGUMENTS
    assert tools.runs == []


# ---------------------------------------------------------------- events


async def test_events_of_a_successful_call() -> None:
    """A call emits started then finished, both naming tool, request and node."""
    events = Events()
    await call(await start(Tools((ADD, add)), events), "add", {"a": 1, "b": 2}, id="e1")
    assert events.kinds == ["started", "finished"]
    assert {(event.tool, event.request_id, event.node) for event in events.events} == {
        ("add", "e1", "test-node")
    }
    assert events.events[-1].duration_ms is not None and events.events[-1].error_code is None


async def test_events_of_a_failing_call() -> None:
    """A failing call emits started then failed carrying the error code."""
    events = Events()
    await call(await start(Tools((make_spec("boom"), boom)), events), "boom")
    assert events.kinds == ["started", "failed"]
    assert events.events[-1].error_code is ErrorCode.EXECUTION_FAILED


async def test_events_of_a_cache_hit() -> None:
    """A cached answer emits started, cache_hit, finished."""
    events = Events()
    kernel = await start(Tools((CACHED_ADD, add)), events)
    await call(kernel, "cadd", {"a": 1, "b": 2})
    events.events.clear()
    await call(kernel, "cadd", {"a": 1, "b": 2})
    assert events.kinds == ["started", "cache_hit", "finished"]


async def test_progress_events_and_sinks() -> None:
    """context.progress emits a progress event in order; event sinks see the same events as the hook."""

    async def work(arguments: dict[str, Any], context: CallContext) -> str:
        await context.progress(1, total=2, message="half")
        return "ok"

    events, sunk = Events(), []
    kernel = await start(Tools((make_spec("work"), work)), events)
    kernel.add_event_sink(sunk.append)
    await call(kernel, "work")
    assert events.kinds == ["started", "progress", "finished"]
    assert events.events[1].attributes == {"progress": 1, "total": 2, "message": "half"}
    assert sunk == events.events


# ---------------------------------------------------------------- tool specs


class Describe:
    def __init__(self, suffix: str | None) -> None:
        self.suffix = suffix

    @hookimpl
    def toolmesh_tool_spec(self, spec: ToolSpec) -> ToolSpec | None:
        if self.suffix is None:
            return None
        return msgspec.structs.replace(spec, description=f"{spec.description}|{self.suffix}")


async def test_tool_spec_hooks_thread_in_order() -> None:
    """Each toolmesh_tool_spec sees the previous output; None keeps the spec; the last override wins."""
    kernel = await start(Tools((ADD, add)), Describe("one"), Describe(None), Describe("two"))
    spec = kernel.get_tool("add")
    assert spec is not None and spec.description == "Add.|one|two"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"name": "not valid!"}, "is not valid"),
        ({"input_schema": {"type": "nonsense"}}, "invalid input_schema"),
        ({"output_schema": {"type": 12}}, "invalid output_schema"),
    ],
)
async def test_invalid_spec_from_plugin_is_a_problem(change: dict[str, Any], problem: str) -> None:
    """A spec a plugin made invalid is reported by discovery and not registered; the others are."""

    class Spoil:
        @hookimpl
        def toolmesh_tool_spec(self, spec: ToolSpec) -> ToolSpec | None:
            return msgspec.structs.replace(spec, **change) if spec.name == "echo" else None

    kernel = Kernel(plugins=[Tools((ADD, add), (ECHO, echo)), Spoil()], load_entrypoints=False)
    problems = await kernel.discover_tools()
    assert len(problems) == 1 and problem in problems[0]
    assert [spec.name for spec in kernel.tools] == ["add"]


async def test_set_tools_reports_duplicates_and_keeps_the_first() -> None:
    """Two specs with one name: the first is kept, the second reported as a problem."""
    kernel = Kernel(load_entrypoints=False)
    problems = kernel.set_tools(
        [make_spec("dup", description="first"), make_spec("dup", description="second")]
    )
    assert len(problems) == 1 and "'dup'" in problems[0] and "twice" in problems[0]
    spec = kernel.get_tool("dup")
    assert spec is not None and spec.description == "first"


async def test_duplicate_from_two_plugins_is_reported() -> None:
    """Discovery reports a tool name provided by two plugins and registers it once."""
    kernel = Kernel(plugins=[Tools((ADD, add)), Tools((ADD, add))], load_entrypoints=False)
    problems = await kernel.discover_tools()
    assert len(problems) == 1 and "'add'" in problems[0]
    assert [spec.name for spec in kernel.tools] == ["add"]


async def test_set_tools_reports_invalid_name() -> None:
    """set_tools refuses an invalid tool name with a problem message."""
    kernel = Kernel(load_entrypoints=False)
    problems = kernel.set_tools([make_spec("bad name"), make_spec("good")])
    assert len(problems) == 1 and "'bad name'" in problems[0]
    assert [spec.name for spec in kernel.tools] == ["good"]


# ---------------------------------------------------------------- after the call


async def test_after_call_sees_each_result() -> None:
    """toolmesh_after_call receives every finished call's final result, failures included."""

    class After:
        def __init__(self) -> None:
            self.seen: list[ToolResult] = []

        @hookimpl
        async def toolmesh_after_call(self, result: ToolResult) -> None:
            self.seen.append(result)

    after = After()
    kernel = await start(Tools((ADD, add)), after)
    ok = await call(kernel, "add", {"a": 1, "b": 2}, id="ok")
    bad = await call(kernel, "add", {"a": "x"}, id="bad")
    assert after.seen == [ok, bad]


@pytest.mark.parametrize(("body", "expected"), [(add, True), (boom, False)])
async def test_result_as_answer_propagates(body: ToolBody, expected: bool) -> None:
    """A result_as_answer tool marks its successful results so; errors never are."""
    spec = make_spec("final", input_schema=_INTEGERS, result_as_answer=True)
    result = await call(await start(Tools((spec, body))), "final", {"a": 1, "b": 2})
    assert result.result_as_answer is expected


async def test_nested_call_reaches_another_local_tool() -> None:
    """context.call_tool runs another tool of the same kernel and returns its result."""

    async def twice(arguments: dict[str, Any], context: CallContext) -> int:
        assert context.call_tool is not None
        inner = await context.call_tool("add", {"a": arguments["n"], "b": arguments["n"]})
        return inner.structured_content

    tools = Tools((ADD, add), (make_spec("twice"), twice))
    result = await call(await start(tools), "twice", {"n": 21}, id="outer")
    assert result.structured_content == 42
    assert [(name, request_id) for name, _, request_id in tools.runs] == [
        ("twice", "outer"),
        ("add", "outer/add"),
    ]


async def test_nested_call_failure_is_a_result() -> None:
    """A nested call of an unknown tool returns an error result instead of raising."""

    async def lost(arguments: dict[str, Any], context: CallContext) -> str:
        assert context.call_tool is not None
        inner = await context.call_tool("missing", {})
        return inner.error.code.value if inner.error else "no error"

    result = await call(await start(Tools((make_spec("lost"), lost))), "lost")
    assert result.structured_content == "unknown_tool"


async def test_tool_raising_timeout_error_is_execution_failed() -> None:
    """A TimeoutError the tool raises itself (say, from an upstream call) is execution_failed."""

    def upstream(arguments: dict[str, Any], context: CallContext) -> Any:
        raise TimeoutError("upstream API timed out")

    error = error_of(await call(await start(Tools((make_spec("up"), upstream))), "up", timeout=30.0))
    assert error.code is ErrorCode.EXECUTION_FAILED
    assert "TimeoutError" in error.message and "upstream API timed out" in error.message


async def test_tool_raising_call_timeout_is_timeout() -> None:
    """A tool may report its own timeout by raising CallTimeout."""
    from toolmesh import CallTimeout

    def gives_up(arguments: dict[str, Any], context: CallContext) -> Any:
        raise CallTimeout("the build did not finish in 10 minutes")

    error = error_of(await call(await start(Tools((make_spec("build"), gives_up))), "build"))
    assert (error.code, error.message) == (ErrorCode.TIMEOUT, "the build did not finish in 10 minutes")


class BrokenObserver:
    """Raises from every notification hook, synchronously or not."""

    @hookimpl
    def toolmesh_event(self, event: ToolEvent) -> None:
        raise RuntimeError(f"observer bug on {event.kind}")

    @hookimpl
    async def toolmesh_after_call(self) -> None:
        raise RuntimeError("audit bug")


async def test_failing_observers_do_not_fail_the_call(caplog: pytest.LogCaptureFixture) -> None:
    """A raising toolmesh_event/toolmesh_after_call/event sink is logged; the call and other observers go on."""

    def broken_sink(event: ToolEvent) -> None:
        raise RuntimeError("sink bug")

    events = Events()
    kernel = await start(Tools((ADD, add)), BrokenObserver(), events)
    kernel.add_event_sink(broken_sink)
    with caplog.at_level(logging.ERROR, logger="toolmesh.kernel"):
        result = await call(kernel, "add", {"a": 1, "b": 2})
    assert (result.is_error, result.structured_content) == (False, 3)
    assert events.kinds == ["started", "finished"]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "toolmesh_event" in logged and "toolmesh_after_call" in logged and "event sink" in logged
