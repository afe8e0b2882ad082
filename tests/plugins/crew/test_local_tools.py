"""In-process tools: sync functions run in a worker thread, async ones on the event loop, same results."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from toolmesh.contracts import ToolSpec
from toolmesh.plugins.crew import LocalTool, PathOutsideRoot, ToolUsage, read_file_tool

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop


def _spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, description=name, source="crew", input_schema={"type": "object"})


class AsyncCallable:
    """A callable object whose ``__call__`` is a coroutine function."""

    def __init__(self, threads: list[int]) -> None:
        self.threads = threads

    async def __call__(self, arguments: dict[str, Any]) -> str:
        self.threads.append(threading.get_ident())
        return f"object {arguments['x']}"


async def test_sync_tools_run_in_a_thread_and_async_ones_on_the_loop() -> None:
    loop_thread = threading.get_ident()
    threads: dict[str, list[int]] = {"sync": [], "async": [], "object": [], "wrapper": []}

    def sync(arguments: dict[str, Any]) -> str:
        threads["sync"].append(threading.get_ident())
        return f"sync {arguments['x']}"

    async def coroutine(arguments: dict[str, Any]) -> str:
        threads["async"].append(threading.get_ident())
        await anyio.lowlevel.checkpoint()
        return f"async {arguments['x']}"

    def wrapper(arguments: dict[str, Any]) -> Any:  # sync, but hands back a coroutine to await
        threads["wrapper"].append(threading.get_ident())
        return coroutine(arguments)

    tools = {
        "sync": LocalTool(_spec("sync"), sync),
        "async": LocalTool(_spec("async"), coroutine),
        "object": LocalTool(_spec("object"), AsyncCallable(threads["object"])),
        "wrapper": LocalTool(_spec("wrapper"), wrapper),
    }
    results = {name: await tool.run({"x": 1}) for name, tool in tools.items()}

    assert results == {"sync": "sync 1", "async": "async 1", "object": "object 1", "wrapper": "async 1"}
    assert [tool.is_async for tool in tools.values()] == [False, True, True, False]
    assert threads["sync"][0] != loop_thread and threads["wrapper"][0] != loop_thread
    assert threads["async"] == [loop_thread, loop_thread] and threads["object"] == [loop_thread]


async def test_sync_tool_errors_reach_the_caller_unchanged(tmp_path: Path) -> None:
    tool = read_file_tool(tmp_path)
    with pytest.raises(PathOutsideRoot, match="is outside the readable folder"):
        await tool.run({"file_path": "../elsewhere.txt"})


async def test_loop_keeps_answering_while_a_sync_tool_runs() -> None:
    started, release = threading.Event(), threading.Event()

    def slow(arguments: dict[str, Any]) -> str:
        started.set()
        release.wait(30)  # in a worker thread: the loop keeps going meanwhile
        return "done"

    usage = ToolUsage(None, local_tools=[LocalTool(_spec("slow"), slow)])
    async with anyio.create_task_group() as group:
        observations: list[Any] = []

        async def use() -> None:
            observations.append(await usage.use({"name": "slow", "arguments": {}}))

        group.start_soon(use)
        with anyio.fail_after(10):  # the loop runs this wait while the tool is blocked in its thread
            while not started.is_set():
                await anyio.sleep(0.01)
        assert not observations
        release.set()
    assert observations[0].ok and observations[0].text == "done"
