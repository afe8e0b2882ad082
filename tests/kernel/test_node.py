"""A node on a real nats-server: round trips, the bad-input table, limits, the service protocol."""

from __future__ import annotations

import json

import anyio
import pytest
import toolmesh
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ErrorCode, ToolCallback, ToolRequest, decode_result, encode
from toolmesh.testing import eventually, running_node

from tests.event_subscriptions import follow_events, kinds_of

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop

EXAMPLES = ["examples/math_tools.py", "examples/text_tools.py", "examples/slow_tools.py"]


async def test_round_trip_sync_and_async_tools(toolmesh_settings):
    """A sync tool (worker thread) and an async tool both answer through Mesh, naming the node."""
    async with (
        running_node(toolmesh_settings, sources=EXAMPLES) as node,
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        added = await mesh.call("add", {"a": 2, "b": 40})
        echoed = await mesh.call("echo", {"message": "hi"})
    assert (added.is_error, added.structured_content, added.node) == (False, 42, node.name)
    assert (echoed.is_error, echoed.structured_content, echoed.text) == (False, "hi", "hi")


async def test_list_tools_shows_the_served_tools(toolmesh_settings):
    """The catalog lists every tool of the node with its schema."""
    async with running_node(toolmesh_settings, sources=EXAMPLES), Mesh(settings=toolmesh_settings) as mesh:
        tools = {spec.name: spec for spec in await mesh.list_tools()}
    assert {"add", "echo", "slugify", "sleep"} <= set(tools)
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["add"].source == "python"


RAW_BAD_INPUT = [
    pytest.param(b"not json", ErrorCode.BAD_REQUEST, "not valid JSON", id="non-json-body"),
    pytest.param(b"[1, 2]", ErrorCode.BAD_REQUEST, "not a ToolRequest", id="json-array"),
    pytest.param(b'{"arguments": 5}', ErrorCode.BAD_REQUEST, "$.arguments", id="arguments-not-object"),
    pytest.param(b'{"id": 7, "arguments": {}}', ErrorCode.BAD_REQUEST, "$.id", id="id-not-string"),
    pytest.param(b'{"tool": "echo", "arguments": {}}', ErrorCode.BAD_REQUEST, "subject of 'add'", id="wrong-subject"),
]


@pytest.mark.parametrize(("body", "code", "fragment"), RAW_BAD_INPUT)
async def test_malformed_messages_get_bad_request(toolmesh_settings, body, code, fragment):
    """A message that is not a ToolRequest gets bad_request; the node then serves the next call."""
    async with running_node(toolmesh_settings, sources=EXAMPLES), Mesh(settings=toolmesh_settings) as mesh:
        reply = await mesh.nc.request(toolmesh_settings.subjects.request("add"), body, timeout=5)
        result = decode_result(reply.data)
        after = await mesh.call("add", {"a": 1, "b": 1})
    assert result.is_error and result.error.code == code
    assert fragment in result.error.message
    assert after.structured_content == 2


BAD_CALLS = [
    pytest.param("add", {"a": "one", "b": 2}, ErrorCode.INVALID_ARGUMENTS, "$.a", id="wrong-type"),
    pytest.param("add", {"a": 1}, ErrorCode.INVALID_ARGUMENTS, "required", id="missing-argument"),
    pytest.param("add", {"a": 1, "b": 2, "c": 3}, ErrorCode.INVALID_ARGUMENTS, "c", id="unknown-argument"),
    pytest.param("ad", {}, ErrorCode.UNKNOWN_TOOL, "add", id="unknown-tool"),
    pytest.param("divide", {"a": 1.0, "b": 0.0}, ErrorCode.EXECUTION_FAILED, "ZeroDivisionError", id="tool-raises"),
    pytest.param("sleep", {"seconds": 5.0}, ErrorCode.TIMEOUT, "sleep", id="tool-timeout"),
    pytest.param("bad_return", {}, ErrorCode.EXECUTION_FAILED, "JSON", id="unserialisable-result"),
    pytest.param("wrong_output", {}, ErrorCode.EXECUTION_FAILED, "output_schema", id="output-schema-violation"),
]


@pytest.mark.parametrize(("tool", "arguments", "code", "fragment"), BAD_CALLS)
async def test_bad_calls_get_typed_errors(toolmesh_settings, tool, arguments, code, fragment):
    """Each kind of bad call is answered with its error code and the node keeps serving."""
    async with running_node(toolmesh_settings, sources=EXAMPLES), Mesh(settings=toolmesh_settings) as mesh:
        result = await mesh.call(tool, arguments)
        after = await mesh.call("add", {"a": 1, "b": 1})
    assert result.is_error
    assert result.error.code == code, result.error
    assert fragment in result.error.message
    assert after.structured_content == 2


async def test_oversized_request_is_too_large(toolmesh_settings):
    """A request over the node's payload limit is refused with too_large, by client and by node."""
    async with running_node(toolmesh_settings, sources=EXAMPLES), Mesh(settings=toolmesh_settings) as mesh:
        big = "x" * (toolmesh_settings.max_payload + 10)
        from_client = await mesh.call("echo", {"message": big})
        raw = encode(ToolRequest(id="big", tool="echo", arguments={"message": big}))
        reply = await mesh.nc.request(toolmesh_settings.subjects.request("echo"), raw, timeout=5)
        from_node = decode_result(reply.data)
        after = await mesh.call("echo", {"message": "small"})
    assert from_client.error.code == ErrorCode.TOO_LARGE
    assert from_node.error.code == ErrorCode.TOO_LARGE
    assert after.structured_content == "small"


async def test_concurrency_limit_answers_unavailable(toolmesh_broker):
    """Past max_concurrency the node answers unavailable at once, with a retry hint."""
    from toolmesh.testing import test_settings

    settings = test_settings(toolmesh_broker.url, max_concurrency=2)
    results = []
    async with running_node(settings, sources=EXAMPLES), Mesh(settings=settings) as mesh:

        async def one() -> None:
            results.append(await mesh.call("sleep", {"seconds": 0.5}))

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(one)
    codes = sorted(result.error.code.value if result.is_error else "ok" for result in results)
    assert codes.count("ok") == 2
    assert codes.count("unavailable") == 3
    busy = next(result for result in results if result.is_error)
    assert busy.error.retryable and busy.error.details["retry_after"] > 0


async def test_service_protocol_lists_the_node_and_its_endpoints(toolmesh_settings):
    """$SRV.PING/INFO/STATS answer like any NATS micro service, one endpoint per tool."""
    async with (
        running_node(toolmesh_settings, sources=EXAMPLES) as node,
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        await mesh.call("add", {"a": 1, "b": 2})
        await mesh.call("add", {"a": "x", "b": 2})
        ping = json.loads((await mesh.nc.request(f"$SRV.PING.toolmesh.{node.name}", b"", timeout=2)).data)
        info = json.loads((await mesh.nc.request(f"$SRV.INFO.toolmesh.{node.name}", b"", timeout=2)).data)
        stats = json.loads((await mesh.nc.request(f"$SRV.STATS.toolmesh.{node.name}", b"", timeout=2)).data)
    assert ping["type"] == "io.nats.micro.v1.ping_response" and ping["id"] == node.name
    subjects = {endpoint["name"]: endpoint["subject"] for endpoint in info["endpoints"]}
    assert subjects["add"] == toolmesh_settings.subjects.request("add")
    add_stats = next(endpoint for endpoint in stats["endpoints"] if endpoint["name"] == "add")
    assert (add_stats["num_requests"], add_stats["num_errors"]) == (2, 1)
    assert add_stats["last_error"] == "invalid_arguments"


async def test_events_are_published(toolmesh_settings):
    """started and finished events of a call reach a subscriber."""
    async with (
        running_node(toolmesh_settings, sources=EXAMPLES),
        Mesh(settings=toolmesh_settings) as mesh,
        anyio.create_task_group() as tg,
    ):
        seen = await follow_events(mesh, tg, "add", lambda: mesh.call("add", {"a": 0, "b": 0}))
        result = await mesh.call("add", {"a": 1, "b": 2})
        await eventually(lambda: "finished" in kinds_of(seen, result.id), timeout=5)
        tg.cancel_scope.cancel()
    assert kinds_of(seen, result.id) == ["started", "finished"]


async def test_drain_finishes_in_flight_calls(toolmesh_settings):
    """A graceful stop removes the tools from the catalog at once and still answers accepted calls."""
    async with Mesh(settings=toolmesh_settings) as mesh:
        async with running_node(toolmesh_settings, sources=EXAMPLES) as node:
            results = []

            async def slow() -> None:
                results.append(await mesh.call("sleep", {"seconds": 0.5}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await eventually(lambda: node.inflight == 1, timeout=5)  # the node accepted the call
                node.stop()
                await eventually(lambda: _empty_catalog(mesh), timeout=5, what="the catalog emptying")
        assert len(results) == 1 and results[0].structured_content == 0.5


async def _empty_catalog(mesh: Mesh) -> bool:
    return await mesh.list_tools() == []


async def test_nested_call_goes_through_the_mesh(toolmesh_settings):
    """context.call_tool from a tool reaches another tool over NATS."""
    @toolmesh.tool
    async def add_twice(a: int, context: toolmesh.CallContext) -> int:
        first = await context.call_tool("add", {"a": a, "b": a})
        return first.structured_content * 2

    async with (
        running_node(toolmesh_settings, sources=[*EXAMPLES, add_twice]),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        result = await mesh.call("add_twice", {"a": 3})
    assert result.structured_content == 12


async def test_callbacks_reach_the_caller_and_answers_reach_the_tool(toolmesh_settings):
    """A tool's progress/log notifications reach the caller, and its elicitation gets the caller's answer."""
    @toolmesh.tool
    async def confirm(action: str, context: toolmesh.CallContext) -> str:
        await context.progress(1, 2, "asking")
        await context.log("info", f"about to {action}")
        answer = await context.ask("elicitation", {"message": f"{action}?"})
        return f"{action}: {answer['action']}"

    received: list[ToolCallback] = []

    def on_callback(callback: ToolCallback) -> object:
        received.append(callback)
        if callback.kind == "elicitation":
            return {"action": "accept"}
        return None

    async with running_node(toolmesh_settings, sources=[confirm]), Mesh(settings=toolmesh_settings) as mesh:
        answered = await mesh.call("confirm", {"action": "deploy"}, on_callback=on_callback)
        unanswerable = await mesh.call("confirm", {"action": "deploy"})
    assert answered.structured_content == "deploy: accept"
    assert [callback.kind for callback in received] == ["progress", "log", "elicitation"]
    assert received[0].data == {"progress": 1, "total": 2, "message": "asking"}
    assert {callback.request_id for callback in received} == {answered.id}
    assert unanswerable.error.code == ErrorCode.UNAVAILABLE
    assert "accepts no callbacks" in unanswerable.error.message


async def test_a_caller_that_gives_up_cancels_the_call_on_the_node(toolmesh_settings):
    """When the caller is cancelled, the node cancels the running tool and reports a 'cancelled' event."""
    stopped: list[str] = []

    @toolmesh.tool
    async def linger(seconds: float) -> float:
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            stopped.append("cancelled")
            raise
        return seconds

    async with (
        running_node(toolmesh_settings, sources=[linger]) as node,
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        async with anyio.create_task_group() as tg:
            seen = await follow_events(mesh, tg, "linger", lambda: mesh.call("linger", {"seconds": 0}))
            request = mesh.new_request("linger", {"seconds": 5.0}, timeout=30)

            async def give_up_once_started() -> None:
                await eventually(lambda: "started" in kinds_of(seen, request.id), timeout=5)
                calling.cancel()

            with anyio.CancelScope() as calling:
                tg.start_soon(give_up_once_started)
                await mesh.send(request)
            await eventually(lambda: "cancelled" in kinds_of(seen, request.id), timeout=5)
            tg.cancel_scope.cancel()
        after = await mesh.call("linger", {"seconds": 0.01})
    assert stopped == ["cancelled"]
    assert kinds_of(seen, request.id) == ["started", "cancelled"]
    assert after.structured_content == 0.01 and node.inflight == 0
