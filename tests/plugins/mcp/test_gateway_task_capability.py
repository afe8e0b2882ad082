"""The gateway and a client that sends ``task`` without having declared the ``tasks`` capability.

The client is the official SDK's ``ClientSession`` (it declares no ``tasks``
capability: it has no API for one) over stdio to ``toolmesh mcp serve``.  The
gateway announces ``tasks.requests.tools.call``; MCP 2025-11-25 ties task
augmentation to that capability of the *receiver* — a client's own ``tasks``
capability only lists the requests the client receives as tasks — so the
gateway must answer with a ``CreateTaskResult`` ("Receivers that accept a
task-augmented request MUST return a CreateTaskResult") instead of quietly
running the call, and must refuse a ``required`` tool called without a task
(-32601).  The session's typed ``tools/call`` refuses a ``CreateTaskResult``,
so that one request goes through the session's own JSON-RPC dispatcher.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from toolmesh import Settings
from toolmesh.testing import running_node

from tests.plugins.mcp.peers import ROOT, gateway_command
from tests.plugins.mcp.task_tools import RELATED_TASK, task_tools

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def sdk_client(settings: Settings) -> AsyncIterator[tuple[ClientSession, JSONRPCDispatcher[Any]]]:
    command = gateway_command(settings, "--stdio")
    parameters = StdioServerParameters(command=command[0], args=command[1:], cwd=str(ROOT), env=dict(os.environ))
    async with stdio_client(parameters) as (read, write):
        dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
        async with ClientSession(dispatcher=dispatcher) as session:
            hello = await session.initialize()
            assert hello.capabilities.tasks is not None and hello.capabilities.tasks.requests is not None
            yield session, dispatcher


async def _status(session: ClientSession, task_id: str) -> types.GetTaskResult:
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await session.send_request(request, types.GetTaskResult)


async def test_a_task_asked_for_without_the_capability_is_created(toolmesh_settings: Settings) -> None:
    tools = task_tools()
    async with (
        running_node(toolmesh_settings, plugins=[tools], load_entrypoints=False),
        sdk_client(toolmesh_settings) as (session, dispatcher),
    ):
        created = await dispatcher.send_raw_request(
            "tools/call", {"name": "report", "arguments": {"topic": "tides"}, "task": {"ttl": 30000}}
        )
        assert "content" not in created, created  # not run as a plain call
        task = types.CreateTaskResult.model_validate(created, by_name=False).task
        assert task.status == "working" and task.ttl == 30000
        assert (await _status(session, task.task_id)).status in ("working", "completed")
        listed = await session.send_request(types.ListTasksRequest(), types.ListTasksResult)
        assert [entry.task_id for entry in listed.tasks] == [task.task_id]

        payload = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task.task_id))
        result = await session.send_request(payload, types.CallToolResult)
        assert result.content == [types.TextContent(text="report on tides, in a task")]
        assert (result.meta or {})[RELATED_TASK] == {"taskId": task.task_id}
        assert (await _status(session, task.task_id)).status == "completed"

        # a required tool without a task is refused, as for any client on 2025-11-25
        with pytest.raises(MCPError) as refused:
            await session.call_tool("report", {"topic": "tides"})
        assert refused.value.code == types.METHOD_NOT_FOUND
        assert "must be called as a task" in refused.value.message

        # the task can be cancelled: the tool on the node stops
        held = await dispatcher.send_raw_request("tools/call", {"name": "hold", "arguments": {}, "task": {}})
        held_id = types.CreateTaskResult.model_validate(held, by_name=False).task.task_id
        with anyio.fail_after(10):
            while "hold started" not in tools.events:
                await anyio.sleep(0.02)
        cancel = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=held_id))
        assert (await session.send_request(cancel, types.CancelTaskResult)).status == "cancelled"
        with anyio.fail_after(10):
            while "hold cancelled" not in tools.events:
                await anyio.sleep(0.02)

        plain = await session.call_tool("probe", {})  # optional: a plain call still runs plainly
        assert plain.content == [types.TextContent(text="not in a task")]
