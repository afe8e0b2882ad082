"""The official MCP SDK client against ``toolmesh mcp serve --stdio`` (a child process) in front of real nodes."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import toolmesh
from mcp.client.session import ClientRequestContext, ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from toolmesh import Settings
from toolmesh.contracts import CachePolicy, ToolEvent, ToolSpec
from toolmesh.testing import running_node

from tests.plugins.mcp.mesh_tools import FunctionTools, standard_tools
from tests.plugins.mcp.peers import ROOT, gateway_command

pytestmark = pytest.mark.anyio


class ClientLog:
    """What the MCP client received besides results."""

    def __init__(self) -> None:
        self.notifications: list[Any] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.list_changed = anyio.Event()

    async def on_message(self, message: IncomingMessage) -> None:
        self.notifications.append(message)
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed.set()

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))


async def _sampling(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    text = params.messages[0].content.text  # type: ignore[union-attr]
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=f"short: {text}"), model="test"
    )


async def _elicitation(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams) and "Really delete" in params.message
    return types.ElicitResult(action="accept", content={"ok": True})


@asynccontextmanager
async def stdio_gateway(
    settings: Settings, log: ClientLog | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    log = log or ClientLog()
    command = gateway_command(settings, "--stdio")
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with (
        stdio_client(parameters) as (read, write),
        ClientSession(
            read,
            write,
            message_handler=log.on_message,
            logging_callback=log.on_log,
            sampling_callback=_sampling,
            elicitation_callback=_elicitation,
        ) as session,
    ):
        await session.initialize()
        yield session


async def test_list_and_call_through_the_gateway(toolmesh_settings: Settings) -> None:
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        stdio_gateway(toolmesh_settings) as client,
    ):
        assert client.initialize_result is not None
        assert client.initialize_result.protocol_version == "2025-11-25"
        assert client.initialize_result.capabilities.tools.list_changed

        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"add", "confirm", "fail", "slow", "summarise", "weather"}
        assert tools["add"].title == "Add" and tools["add"].annotations.read_only_hint
        assert tools["weather"].output_schema["properties"]["celsius"] == {"type": "number"}
        assert tools["add"].output_schema["properties"]["result"] == {"type": "integer"}
        assert tools["slow"].execution.task_support == "optional"

        added = await client.call_tool("add", {"a": 2, "b": 40})
        assert not added.is_error and added.structured_content == {"result": 42}
        weather = await client.call_tool("weather", {"city": "Oslo"})
        assert weather.structured_content == {"city": "Oslo", "celsius": 21.5}

        failed = await client.call_tool("fail", {})
        assert failed.is_error and "failed on purpose" in failed.content[0].text

        invalid = await client.call_tool("add", {"a": "two"})
        assert invalid.is_error and "invalid_arguments" in invalid.content[0].text

        with pytest.raises(MCPError) as unknown:
            await client.call_tool("ad", {})
        assert unknown.value.code == types.INVALID_PARAMS

        await client.send_ping()


async def test_progress_log_sampling_and_elicitation_reach_the_client(toolmesh_settings: Settings) -> None:
    log = ClientLog()
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        stdio_gateway(toolmesh_settings, log) as client,
    ):
        done = await client.call_tool(
            "slow", {"steps": 3, "pause": 0.01}, progress_callback=log.on_progress
        )
        assert done.content[0].text == "done"
        assert log.progress == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
        assert [entry.data for entry in log.logs] == [f"working on step {n}" for n in (1, 2, 3)]
        assert {entry.logger for entry in log.logs} == {"slow"}

        summary = await client.call_tool("summarise", {"text": "a long story"})
        assert summary.content[0].text == "short: a long story"

        confirmed = await client.call_tool("confirm", {"path": "/tmp/x"})
        assert confirmed.structured_content == {"action": "accept", "content": {"ok": True}}

        with warnings.catch_warnings():  # the SDK deprecates logging for the 2026 revision only
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.set_logging_level("warning")  # the tool logs at "info": filtered out now
        await client.call_tool("slow", {"steps": 2, "pause": 0.01})
        assert len(log.logs) == 3


async def test_a_question_waiting_for_a_person_does_not_hold_up_other_calls(
    toolmesh_settings: Settings,
) -> None:
    release, asked = anyio.Event(), anyio.Event()

    async def slow_person(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        asked.set()
        await release.wait()
        return types.ElicitResult(action="accept", content={"ok": True})

    log = ClientLog()
    command = gateway_command(toolmesh_settings, "--stdio")
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        stdio_client(StdioServerParameters(command=command[0], args=command[1:])) as (read, write),
        ClientSession(read, write, logging_callback=log.on_log, elicitation_callback=slow_person) as client,
    ):
        await client.initialize()
        answers: list[Any] = []

        async def confirm() -> None:
            answers.append(await client.call_tool("confirm", {"path": "/tmp/x"}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(confirm)
            with anyio.fail_after(10):
                await asked.wait()  # the confirm call now waits for the person
            with anyio.fail_after(10):
                done = await client.call_tool(
                    "slow", {"steps": 2, "pause": 0.01}, progress_callback=log.on_progress
                )
            assert done.content[0].text == "done" and log.progress == [
                (1.0, 2.0, "step 1"),
                (2.0, 2.0, "step 2"),
            ]
            assert not answers
            release.set()
        assert answers[0].structured_content == {"action": "accept", "content": {"ok": True}}


async def test_list_changed_when_a_node_joins_and_leaves(toolmesh_settings: Settings) -> None:
    log = ClientLog()
    extra = FunctionTools()

    async def shout(arguments: dict[str, Any], context: Any) -> str:
        return arguments["text"].upper()

    extra.add(
        ToolSpec(name="shout", input_schema={"type": "object", "properties": {"text": {"type": "string"}}}),
        shout,
    )
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        stdio_gateway(toolmesh_settings, log) as client,
    ):
        assert "shout" not in {tool.name for tool in (await client.list_tools()).tools}
        async with running_node(toolmesh_settings, plugins=[extra], load_entrypoints=False):
            with anyio.fail_after(10):
                await log.list_changed.wait()
            assert "shout" in {tool.name for tool in (await client.list_tools()).tools}
            assert (await client.call_tool("shout", {"text": "hi"})).content[0].text == "HI"
            log.list_changed = anyio.Event()
        with anyio.fail_after(10):
            await log.list_changed.wait()
        assert "shout" not in {tool.name for tool in (await client.list_tools()).tools}


async def test_list_changed_when_a_node_appears_or_vanishes_without_announcing(toolmesh_settings: Settings) -> None:
    """A node that dies leaves no announcement, only an expired catalog entry: the gateway's poll notices."""
    from toolmesh import Mesh
    from toolmesh._transport.catalog import CatalogBucket
    from toolmesh.contracts import NodeEntry

    log = ClientLog()
    ghost = NodeEntry(node="ghost", tools=(ToolSpec(name="haunt", input_schema={"type": "object"}),))
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        stdio_gateway(toolmesh_settings, log) as client,
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        assert "haunt" not in {tool.name for tool in (await client.list_tools()).tools}
        assert mesh.nc is not None
        bucket = await CatalogBucket.open(
            mesh.nc.jetstream(), mesh.subjects.catalog_bucket, toolmesh_settings.catalog_ttl, create=False
        )
        assert bucket is not None
        await bucket.put(ghost)  # written, never announced
        with anyio.fail_after(10):
            await log.list_changed.wait()
        assert "haunt" in {tool.name for tool in (await client.list_tools()).tools}
        log.list_changed = anyio.Event()
        await bucket.remove("ghost")  # as if its entry had expired
        with anyio.fail_after(10):
            await log.list_changed.wait()
        assert "haunt" not in {tool.name for tool in (await client.list_tools()).tools}


async def test_a_cancelled_call_stops_the_tool_on_its_node(toolmesh_settings: Settings) -> None:
    tools = standard_tools()
    async with (
        running_node(toolmesh_settings, plugins=[tools], load_entrypoints=False),
        stdio_gateway(toolmesh_settings) as client,
    ):
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("slow", {"steps": 30, "pause": 0.05})
        assert scope.cancelled_caught  # the SDK sent notifications/cancelled
        # The gateway gave up the mesh call, which tells the node to cancel the tool.
        with anyio.fail_after(5):
            while "slow cancelled" not in tools.events:
                await anyio.sleep(0.02)
        assert "slow finished" not in tools.events
        assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}


class Gatekeeper:
    """Decision hooks and event capture on the node: what MCP callers must meet like NATS callers."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    @toolmesh.hookimpl
    def toolmesh_before_call(self, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        if spec.name == "add" and arguments.get("a", 0) > 100:
            return toolmesh.Reject("numbers above 100 are not for this mesh")
        if spec.name == "weather" and arguments.get("city") == "Atlantis":
            return toolmesh.Complete({"city": "Atlantis", "celsius": 4.0})
        return None

    @toolmesh.hookimpl
    def toolmesh_event(self, event: ToolEvent) -> None:
        self.events.append((event.kind, event.tool))


async def test_mcp_calls_go_through_the_node_pipeline(toolmesh_settings: Settings) -> None:
    gatekeeper = Gatekeeper()
    tools = standard_tools()
    runs: list[str] = []

    async def lookup(arguments: dict[str, Any], context: Any) -> str:
        runs.append(arguments["key"])
        return f"value of {arguments['key']}"

    tools.add(
        ToolSpec(
            name="lookup",
            input_schema={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
            cache=CachePolicy(ttl=60),
        ),
        lookup,
    )
    async with (
        running_node(toolmesh_settings, plugins=[tools, gatekeeper], load_entrypoints=False),
        stdio_gateway(toolmesh_settings) as client,
    ):
        rejected = await client.call_tool("add", {"a": 101, "b": 1})
        assert rejected.is_error and "rejected: numbers above 100" in rejected.content[0].text
        completed = await client.call_tool("weather", {"city": "Atlantis"})
        assert completed.structured_content == {"city": "Atlantis", "celsius": 4.0}

        first = await client.call_tool("lookup", {"key": "k1"})
        second = await client.call_tool("lookup", {"key": "k1"})
        assert first.content[0].text == second.content[0].text == "value of k1"
        assert runs == ["k1"]  # the second call was answered from the node's cache

    kinds = {kind for kind, tool in gatekeeper.events if tool == "lookup"}
    assert {"started", "cache_hit"} <= kinds, kinds


async def test_resources_prompts_and_completions_of_configured_servers(
    toolmesh_settings: Settings, tmp_path: Path
) -> None:
    fixtures = ROOT / "examples" / "mcp_conformance" / "fixture_server.py"
    config = tmp_path / "toolmesh.toml"
    config.write_text(
        f"[mcp.servers.fixtures]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(fixtures))}]\n"
    )
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        stdio_gateway(toolmesh_settings, env={"TOOLMESH_CONFIG": str(config)}) as client,
    ):
        capabilities = client.initialize_result.capabilities
        assert capabilities.resources is not None and capabilities.prompts is not None
        uris = [str(resource.uri) for resource in (await client.list_resources()).resources]
        assert "test://static-text" in uris
        text = await client.read_resource("test://static-text")
        assert text.contents[0].text == "This is the content of the static text resource."
        await client.list_resource_templates()
        templated = await client.read_resource("test://template/7/data")
        assert json.loads(templated.contents[0].text)["id"] == "7"
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        assert "test_prompt_with_arguments" in prompts
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"
        completion = await client.complete(
            types.PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "par"}
        )
        assert completion.completion.values == ["paris", "park", "party"]
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


async def test_a_task_reports_progress_and_logs_tagged_with_the_task(toolmesh_settings: Settings) -> None:
    """A raw JSON-RPC client over stdio (the SDK client cannot declare the tasks capability)."""
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        await anyio.open_process(gateway_command(toolmesh_settings, "--stdio")) as process,
    ):
        assert process.stdin is not None and process.stdout is not None
        buffered = b""

        async def send(message: dict[str, Any]) -> None:
            await process.stdin.send(json.dumps(message).encode() + b"\n")

        async def receive() -> dict[str, Any]:
            nonlocal buffered
            while b"\n" not in buffered:
                buffered += await process.stdout.receive()
            line, buffered = buffered.split(b"\n", 1)
            return json.loads(line)

        async def until_id(message_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
            seen = []
            while True:
                message = await receive()
                if message.get("id") == message_id:
                    return message, seen
                seen.append(message)

        with anyio.fail_after(20):
            await send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tasks": {}},
                        "clientInfo": {"name": "raw", "version": "1"},
                    },
                }
            )
            await until_id(1)
            await send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await send(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {
                        "name": "slow",
                        "arguments": {"steps": 2, "pause": 0.05},
                        "task": {"ttl": 30000},
                        "_meta": {"progressToken": "p1"},
                    },
                }
            )
            created, _ = await until_id(2)
            task_id = created["result"]["task"]["taskId"]
            await send(
                {"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": task_id}}
            )
            result, seen = await until_id(3)
    assert result["result"]["content"] == [{"type": "text", "text": "done"}]
    related = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
    progress = [message["params"] for message in seen if message.get("method") == "notifications/progress"]
    assert [(entry["progress"], entry["progressToken"], entry["_meta"]) for entry in progress] == [
        (1, "p1", related),
        (2, "p1", related),
    ]
    logs = [message["params"] for message in seen if message.get("method") == "notifications/message"]
    assert [entry["data"] for entry in logs] == ["working on step 1", "working on step 2"]
    assert all(entry["_meta"] == related for entry in logs)
