"""Calling Python tools through a real kernel: threads, typed arguments, failures, context, cache."""

from __future__ import annotations

import datetime
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest
import toolmesh
from toolmesh.contracts import ErrorCode, ToolEvent, ToolRequest, ToolResult

from .conftest import KernelFor

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).parents[3] / "examples"
seen: dict[str, Any] = {}


class Box(msgspec.Struct):
    width: float
    height: float


@toolmesh.tool
def where_sync() -> str:
    """Record the thread a sync tool runs in."""
    seen["sync_thread"] = threading.current_thread()
    return "sync"


@toolmesh.tool
async def where_async() -> str:
    """Record the thread an async tool runs in."""
    seen["async_thread"] = threading.current_thread()
    return "async"


@toolmesh.tool
def area(box: Box, boxes: list[Box] = []) -> float:  # noqa: B006 - the plugin copies defaults per call
    """Area of a box (and some more)."""
    seen["box"] = box
    return box.width * box.height + sum(other.width * other.height for other in boxes)


@toolmesh.tool
def typed(when: datetime.datetime, pair: tuple[int, int], labels: set[str]) -> str:
    """Receive values JSON has no type for."""
    seen["typed"] = (when, pair, labels)
    return "ok"


@toolmesh.tool
def appended(item: str, items: list[str] = ["first"]) -> list[str]:  # noqa: B006 - copied per call
    """Append to a default list."""
    items.append(item)
    return items


@toolmesh.tool
def power(base: float, /, exponent: int = 2) -> float:
    """Positional-only base."""
    return base**exponent


@toolmesh.tool
async def whoami(note: str, ctx: toolmesh.CallContext) -> dict[str, Any]:
    """Answer with what the context says."""
    return {
        "id": ctx.request.id,
        "tool": ctx.request.tool,
        "note": note,
        "deadline": ctx.deadline is not None,
    }


@toolmesh.tool
def whoami_sync(context: toolmesh.CallContext) -> str:
    """A sync tool gets the context too."""
    return context.request.id


@toolmesh.tool
def reports_progress(ctx: toolmesh.CallContext) -> str:
    """A sync tool reaching the async context from its worker thread."""
    anyio.from_thread.run(ctx.progress, 1, 2)
    return "done"


release = threading.Event()


@toolmesh.tool(timeout=0.2)
def blocking() -> str:
    """Block its worker thread until released."""
    release.wait(10)
    return "released"


calls: list[int] = []


@toolmesh.tool(cache=True)
def counted(n: int) -> int:
    """Count executions."""
    calls.append(n)
    return n * 10


class AsyncCallable:
    """A callable object whose ``__call__`` is a coroutine function."""

    async def __call__(self, word: str) -> str:
        await anyio.lowlevel.checkpoint()
        return word[::-1]


reverse = toolmesh.tool(name="reverse")(AsyncCallable())

LOCAL = [
    where_sync,
    where_async,
    area,
    typed,
    appended,
    power,
    whoami,
    whoami_sync,
    reports_progress,
    blocking,
    counted,
    reverse,
]


async def _call(
    kernel: toolmesh.Kernel, tool: str, arguments: dict[str, Any] | None = None, **request: Any
) -> ToolResult:
    return await kernel.call(ToolRequest(id=f"req-{tool}", tool=tool, arguments=arguments or {}, **request))


async def test_sync_tools_run_in_worker_threads_and_async_tools_on_the_loop(kernel_for: KernelFor) -> None:
    async with kernel_for([LOCAL]) as kernel:
        sync_result = await _call(kernel, "where_sync")
        async_result = await _call(kernel, "where_async")
    assert (sync_result.structured_content, async_result.structured_content) == ("sync", "async")
    assert seen["sync_thread"] is not threading.main_thread()
    assert seen["async_thread"] is threading.current_thread()


async def test_a_blocking_sync_tool_does_not_block_the_loop(kernel_for: KernelFor) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.01)

    release.clear()
    async with kernel_for([LOCAL]) as kernel, anyio.create_task_group() as group:
        group.start_soon(tick)
        started = time.monotonic()
        result = await _call(kernel, "blocking")
        group.cancel_scope.cancel()
    release.set()
    assert result.error is not None and result.error.code is ErrorCode.TIMEOUT
    assert time.monotonic() - started < 2  # the deadline answered while the thread still waited
    assert ticks >= 5


async def test_struct_arguments_arrive_as_structs(kernel_for: KernelFor) -> None:
    async with kernel_for([LOCAL]) as kernel:
        result = await _call(
            kernel, "area", {"box": {"width": 2, "height": 3}, "boxes": [{"width": 1, "height": 1}]}
        )
    assert result.structured_content == 7.0
    assert seen["box"] == Box(width=2.0, height=3.0)


async def test_arguments_are_converted_to_their_python_types(kernel_for: KernelFor) -> None:
    arguments = {"when": "2026-01-02T03:04:05+00:00", "pair": [1, 2], "labels": ["b", "a"]}
    async with kernel_for([LOCAL]) as kernel:
        result = await _call(kernel, "typed", arguments)
    assert result.structured_content == "ok"
    assert seen["typed"] == (datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC), (1, 2), {"a", "b"})


async def test_mutable_defaults_are_fresh_on_every_call(kernel_for: KernelFor) -> None:
    async with kernel_for([LOCAL]) as kernel:
        first = await _call(kernel, "appended", {"item": "x"})
        second = await _call(kernel, "appended", {"item": "y"})
    assert (first.structured_content, second.structured_content) == (["first", "x"], ["first", "y"])


async def test_positional_only_parameters(kernel_for: KernelFor) -> None:
    async with kernel_for([LOCAL]) as kernel:
        result = await _call(kernel, "power", {"base": 3, "exponent": 3})
    assert result.structured_content == 27.0


async def test_async_callable_object_runs_natively(kernel_for: KernelFor) -> None:
    async with kernel_for([LOCAL]) as kernel:
        result = await _call(kernel, "reverse", {"word": "mesh"})
    assert (result.is_error, result.structured_content) == (False, "hsem")


@pytest.mark.parametrize("tool", ["whoami", "whoami_sync"])
async def test_call_context_is_injected(kernel_for: KernelFor, tool: str) -> None:
    async with kernel_for([LOCAL]) as kernel:
        assert "ctx" not in kernel.get_tool("whoami").input_schema["properties"]  # type: ignore[union-attr]
        result = await _call(kernel, tool, {"note": "n"} if tool == "whoami" else {})
    expected: Any = {"id": "req-whoami", "tool": "whoami", "note": "n", "deadline": True}
    assert result.structured_content == (expected if tool == "whoami" else "req-whoami_sync")


async def test_cached_tool_runs_once_for_identical_calls(kernel_for: KernelFor) -> None:
    calls.clear()
    async with kernel_for([LOCAL]) as kernel:
        first = await _call(kernel, "counted", {"n": 4})
        second = await _call(kernel, "counted", {"n": 4})
        other = await _call(kernel, "counted", {"n": 5})
    assert (first.cached, second.cached, other.cached) == (False, True, False)
    assert second.structured_content == first.structured_content == 40
    assert calls == [4, 5]


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "words"),
    [
        pytest.param(
            "divide", {"a": 1, "b": 0}, ErrorCode.EXECUTION_FAILED, ["ZeroDivisionError"], id="raises"
        ),
        pytest.param(
            "bad_return", {}, ErrorCode.EXECUTION_FAILED, ["cannot be sent as JSON"], id="unserialisable"
        ),
        pytest.param("wrong_output", {}, ErrorCode.EXECUTION_FAILED, ["output_schema"], id="output-mismatch"),
        pytest.param("sleep", {"seconds": 5}, ErrorCode.TIMEOUT, ["deadline"], id="timeout"),
        pytest.param(
            "shout", {"text": "a", "times": 11}, ErrorCode.INVALID_ARGUMENTS, ["$.times"], id="constraint"
        ),
    ],
)
async def test_failures_map_to_error_codes(
    kernel_for: KernelFor, tool: str, arguments: dict[str, Any], code: ErrorCode, words: list[str]
) -> None:
    async with kernel_for([str(EXAMPLES)]) as kernel:
        result = await _call(kernel, tool, arguments, timeout=0.3)
    assert result.is_error and result.error is not None
    assert result.error.code is code
    for word in words:
        assert word in result.error.message


async def test_invalid_arguments_report_json_paths(kernel_for: KernelFor) -> None:
    async with kernel_for([str(EXAMPLES)]) as kernel:
        result = await _call(kernel, "statistics", {"values": [1, "two", 3], "extra": True})
        empty = await _call(kernel, "statistics", {"values": []})
    assert result.error is not None and result.error.code is ErrorCode.INVALID_ARGUMENTS
    assert result.error.details is not None
    paths = {issue["path"] for issue in result.error.details["issues"]}
    assert {"$.values[1]", "$"} <= paths
    assert empty.error is not None and empty.error.details is not None
    assert [issue["path"] for issue in empty.error.details["issues"]] == ["$.values"]


async def test_examples_answer(kernel_for: KernelFor) -> None:
    async with kernel_for([str(EXAMPLES)]) as kernel:
        results = {
            tool: (await _call(kernel, tool, arguments)).structured_content
            for tool, arguments in [
                ("add", {"a": 2, "b": 3}),
                ("divide", {"a": 1, "b": 4}),
                ("statistics", {"values": [1, 2, 3, 4]}),
                ("word_count", {"text": "one two  three"}),
                ("slugify", {"text": "Héllo, World!"}),
                ("slugify", {"text": "a b", "separator": "_"}),
                ("echo", {"message": "hi"}),
                ("shout", {"text": "hey", "times": 2}),
                ("sleep", {"seconds": 0.01}),
                ("total", {"values": [1, 2, 3]}),
            ]
        }
        now = await _call(kernel, "now", {"timezone": "Asia/Tokyo"})
        unknown_zone = await _call(kernel, "now", {"timezone": "Mars/Olympus"})
    assert results == {
        "add": 5,
        "divide": 0.25,
        "statistics": {"mean": 2.5, "median": 2.5, "stdev": pytest.approx(1.2909944), "min": 1.0, "max": 4.0},
        "word_count": 3,
        "slugify": "a_b",
        "echo": "hi",
        "shout": "HEY HEY",
        "sleep": 0.01,
        "total": 6,
    }
    assert str(now.structured_content).endswith("+09:00")
    assert unknown_zone.error is not None and "Mars/Olympus" in unknown_zone.error.message


async def test_sync_tool_reaches_the_context_from_its_thread(kernel_for: KernelFor) -> None:
    events: list[ToolEvent] = []
    async with kernel_for([LOCAL]) as kernel:
        kernel.add_event_sink(events.append)
        result = await _call(kernel, "reports_progress")
    assert result.structured_content == "done"
    progress = [event for event in events if event.kind == "progress"]
    assert [event.attributes for event in progress] == [{"progress": 1, "total": 2}]
