"""``toolmesh mcp serve --http`` (a child process): the SDK client over Streamable HTTP, and HTTP security."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from toolmesh import Settings
from toolmesh.contracts import ToolSpec
from toolmesh.testing import eventually, running_node

from tests.plugins.mcp.mesh_tools import FunctionTools, standard_tools
from tests.plugins.mcp.peers import HttpGateway, gateway_command

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@asynccontextmanager
async def http_client_session(
    url: str, headers: dict[str, str] | None = None, on_message: Any = None
) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(30.0, read=300.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        await session.initialize()
        yield session


async def post(url: str, body: dict[str, Any], **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient() as http:
        return await http.post(url, content=json.dumps(body), headers={**MCP_HEADERS, **headers})


async def test_sdk_client_over_streamable_http_with_pagination(toolmesh_settings: Settings) -> None:
    many = FunctionTools()

    async def echo(arguments: dict[str, Any], context: Any) -> dict[str, Any]:
        return arguments

    for index in range(7):
        many.add(ToolSpec(name=f"echo{index}", input_schema={"type": "object"}), echo)
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools(), many], load_entrypoints=False),
        HttpGateway(toolmesh_settings, "--page-size", "5") as gateway,
        http_client_session(gateway.url) as client,
    ):
        pages = []
        cursor = None
        while True:
            page = await client.list_tools(
                params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            pages.append([tool.name for tool in page.tools])
            cursor = page.next_cursor
            if cursor is None:
                break
        assert [len(page) for page in pages] == [5, 5, 3]
        assert sorted(name for page in pages for name in page) == sorted(
            [f"echo{index}" for index in range(7)]
            + ["add", "confirm", "fail", "slow", "summarise", "weather"]
        )
        result = await client.call_tool("weather", {"city": "Bergen"})
        assert result.structured_content == {"city": "Bergen", "celsius": 21.5}
        echoed = await client.call_tool("echo3", {"x": [1, 2]})
        assert echoed.structured_content == {"x": [1, 2]}


async def test_list_changed_over_http(toolmesh_settings: Settings) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    extra = FunctionTools()

    async def ping(arguments: dict[str, Any], context: Any) -> str:
        return "pong"

    extra.add(ToolSpec(name="ping_tool", input_schema={"type": "object"}), ping)
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        HttpGateway(toolmesh_settings) as gateway,
        http_client_session(gateway.url, on_message=on_message) as client,
    ):
        await client.list_tools()
        async with running_node(toolmesh_settings, plugins=[extra], load_entrypoints=False):
            with anyio.fail_after(10):
                await changed.wait()
            assert (await client.call_tool("ping_tool", {})).content[0].text == "pong"


async def test_sessions_and_origin_validation(toolmesh_settings: Settings) -> None:
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        HttpGateway(toolmesh_settings) as gateway,
    ):
        accepted = await post(gateway.url, INITIALIZE, origin=f"http://localhost:{gateway.port}")
        assert accepted.status_code == 200
        assert accepted.headers.get("mcp-session-id")

        rebinding = await post(gateway.url, INITIALIZE, origin="http://evil.example")
        assert rebinding.status_code == 403
        wrong_host = await post(gateway.url, INITIALIZE, host="evil.example")
        assert wrong_host.status_code == 421


async def test_bearer_token_and_resource_metadata(toolmesh_settings: Settings) -> None:
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        HttpGateway(toolmesh_settings, env={"TOOLMESH_MCP_TOKEN": "s3cret"}) as gateway,
    ):
        missing = await post(gateway.url, INITIALIZE)
        assert missing.status_code == 401
        assert "resource_metadata=" in missing.headers["www-authenticate"]
        wrong = await post(gateway.url, INITIALIZE, authorization="Bearer nope")
        assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]

        async with httpx2.AsyncClient() as http:
            metadata = (
                await http.get(f"http://127.0.0.1:{gateway.port}/.well-known/oauth-protected-resource")
            ).json()
        assert metadata["resource"] == gateway.url

        async with http_client_session(gateway.url, {"authorization": "Bearer s3cret"}) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


def test_a_public_bind_needs_a_token(toolmesh_settings: Settings) -> None:
    refused = subprocess.run(
        gateway_command(toolmesh_settings, "--http", "0.0.0.0:0"),
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert refused.returncode == 2
    assert "--token" in refused.stderr


class RawSession:
    """A JSON-RPC client speaking Streamable HTTP by hand (the SDK client cannot declare tasks)."""

    def __init__(self, http: httpx2.AsyncClient, url: str, version: str = "2025-11-25") -> None:
        self.http, self.url, self.version, self.session_id, self.next_id = http, url, version, "", 1

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            body["params"] = params
        headers = {**MCP_HEADERS, "mcp-protocol-version": self.version}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        response = await self.http.post(self.url, content=json.dumps(body), headers=headers)
        self.session_id = response.headers.get("mcp-session-id", self.session_id)
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if message.get("id") == self.next_id:
                    return message
        return response.json()

    async def notify(self, method: str) -> None:
        headers = {**MCP_HEADERS, "mcp-protocol-version": self.version, "mcp-session-id": self.session_id}
        await self.http.post(
            self.url, content=json.dumps({"jsonrpc": "2.0", "method": method}), headers=headers
        )


async def test_task_augmented_call(toolmesh_settings: Settings) -> None:
    tools = standard_tools()

    async def report(arguments: dict[str, Any], context: Any) -> str:
        return "report ready"

    tools.add(ToolSpec(name="report", input_schema={"type": "object"}, task_support="required"), report)
    async with (
        running_node(toolmesh_settings, plugins=[tools], load_entrypoints=False),
        HttpGateway(toolmesh_settings) as gateway,
        httpx2.AsyncClient(timeout=30) as http,
    ):
        raw = RawSession(http, gateway.url)
        hello = await raw.request(
            "initialize",
            {**INITIALIZE["params"], "capabilities": {"tasks": {"list": {}, "cancel": {}}}},
        )
        assert hello["result"]["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
        await raw.notify("notifications/initialized")

        created = await raw.request(
            "tools/call",
            {"name": "slow", "arguments": {"steps": 3, "pause": 0.05}, "task": {"ttl": 60000}},
        )
        task = created["result"]["task"]
        assert task["status"] == "working" and task["ttl"] == 60000
        status = await raw.request("tasks/get", {"taskId": task["taskId"]})
        assert status["result"]["status"] in ("working", "completed")
        listed = await raw.request("tasks/list")
        assert [entry["taskId"] for entry in listed["result"]["tasks"]] == [task["taskId"]]
        result = await raw.request("tasks/result", {"taskId": task["taskId"]})
        assert result["result"]["content"] == [{"type": "text", "text": "done"}]
        assert result["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {
            "taskId": task["taskId"]
        }
        assert (await raw.request("tasks/get", {"taskId": task["taskId"]}))["result"][
            "status"
        ] == "completed"

        long = await raw.request(
            "tools/call", {"name": "slow", "arguments": {"steps": 40, "pause": 0.02}, "task": {}}
        )
        cancelled = await raw.request("tasks/cancel", {"taskId": long["result"]["task"]["taskId"]})
        assert cancelled["result"]["status"] == "cancelled"
        with anyio.fail_after(5):  # the node serving the task stops the tool
            while "slow cancelled" not in tools.events:
                await anyio.sleep(0.02)

        untasked = await raw.request("tools/call", {"name": "report", "arguments": {}})
        assert untasked["error"]["code"] == types.METHOD_NOT_FOUND
        required = await raw.request("tools/call", {"name": "report", "arguments": {}, "task": {}})
        report_result = await raw.request(
            "tasks/result", {"taskId": required["result"]["task"]["taskId"]}
        )
        assert report_result["result"]["content"] == [{"type": "text", "text": "report ready"}]

        refused = await raw.request(
            "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "task": {}}
        )
        assert refused["error"]["code"] == types.METHOD_NOT_FOUND


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
async def test_older_protocol_revisions_are_negotiated(toolmesh_settings: Settings, version: str) -> None:
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        HttpGateway(toolmesh_settings) as gateway,
        httpx2.AsyncClient(timeout=30) as http,
    ):
        raw = RawSession(http, gateway.url, version)
        hello = await raw.request("initialize", {**INITIALIZE["params"], "protocolVersion": version})
        assert hello["result"]["protocolVersion"] == version
        await raw.notify("notifications/initialized")
        listed = await raw.request("tools/list")
        assert {tool["name"] for tool in listed["result"]["tools"]} >= {"add", "weather"}
        called = await raw.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert called["result"]["structuredContent"] == {"result": 5}


async def _sse_lines(response: httpx2.Response, until: Any, seconds: float = 10.0) -> list[str]:
    """The SSE lines of ``response`` up to the first one ``until`` accepts (or the end of the stream)."""
    lines: list[str] = []
    with anyio.move_on_after(seconds):
        async for line in response.aiter_lines():
            lines.append(line)
            if until(line):
                break
    return lines


async def test_a_broken_stream_resumes_with_last_event_id_for_its_own_session_only(
    toolmesh_settings: Settings,
) -> None:
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False) as node,
        HttpGateway(toolmesh_settings) as gateway,
        httpx2.AsyncClient(timeout=30) as http,
    ):
        owner, other = RawSession(http, gateway.url), RawSession(http, gateway.url)
        for raw in (owner, other):
            await raw.request("initialize", INITIALIZE["params"])
            await raw.notify("notifications/initialized")
        call = {
            "jsonrpc": "2.0",
            "id": 77,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"steps": 3, "pause": 0.2}},
        }
        headers = {
            **MCP_HEADERS,
            "mcp-protocol-version": "2025-11-25",
            "mcp-session-id": owner.session_id,
        }
        async with http.stream(
            "POST", gateway.url, content=json.dumps(call), headers=headers
        ) as response:
            first = await _sse_lines(response, lambda line: line.startswith("id:"))
        last_event_id = (
            first[-1].removeprefix("id:").strip()
        )  # the connection drops after the first event
        await eventually(lambda: node.inflight == 0, timeout=10)  # its result waits in the event store

        def resume(raw: RawSession) -> Any:
            return http.stream(
                "GET",
                gateway.url,
                headers={
                    "accept": "text/event-stream",
                    "mcp-protocol-version": "2025-11-25",
                    "mcp-session-id": raw.session_id,
                    "last-event-id": last_event_id,
                },
            )

        async with resume(other) as response:  # another session cannot read the owner's stream
            stolen = await _sse_lines(response, lambda line: '"id":77' in line, seconds=2)
        assert not any('"id":77' in line for line in stolen), stolen
        async with resume(owner) as response:
            replayed = await _sse_lines(response, lambda line: '"id":77' in line)
        result = json.loads(replayed[-1].removeprefix("data:"))
        assert result["id"] == 77 and result["result"]["content"] == [{"type": "text", "text": "done"}]
