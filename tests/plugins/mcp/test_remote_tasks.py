"""Task-augmented calls from our MCP client to a server that runs tools as tasks.

The server is ``toolmesh mcp serve`` (the SDK's low-level ``Server`` with
2025-11-25 tasks) in a child process, over stdio and over Streamable HTTP, in
front of a node whose tools say whether they ran inside an MCP task (the
gateway passes the task in the request's ``meta``).  A ``-m slow`` test runs
the same against the TypeScript SDK's reference server (server-everything).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import toolmesh
import toolmesh.plugins.mcp as mcp_plugin
from toolmesh import Kernel, Settings
from toolmesh.contracts import ErrorCode, ToolEvent, ToolRequest
from toolmesh.plugins.mcp.remote_tasks import TASK_AFTER
from toolmesh.testing import running_node

from tests.plugins.mcp.peers import ROOT, HttpGateway, gateway_command, stdio_fixture, with_servers
from tests.plugins.mcp.task_tools import task_tools
from tests.plugins.mcp.test_npm_peers import (
    everything,
    node22,
    npm_root,  # noqa: F401 - a fixture, used by parameter name
)

pytestmark = pytest.mark.anyio

class Events:
    """The kernel events of the calling side (progress and logs relayed from the task)."""

    def __init__(self) -> None:
        self.events: list[ToolEvent] = []

    @toolmesh.hookimpl
    def toolmesh_event(self, event: ToolEvent) -> None:
        self.events.append(event)

    def of(self, kind: str, request_id: str) -> list[dict[str, Any]]:
        return [event.attributes for event in self.events if event.kind == kind and event.request_id == request_id]


@asynccontextmanager
async def gateway_server(settings: Settings, transport: str) -> AsyncIterator[dict[str, Any]]:
    """The ``[mcp.servers.gw]`` table of a gateway in front of ``settings``' mesh."""
    if transport == "http":
        async with HttpGateway(settings) as gateway:
            yield {"url": gateway.url}
    else:
        command = gateway_command(settings, "--stdio")
        yield {"command": command[0], "args": command[1:], "cwd": str(ROOT)}


async def call(kernel: Kernel, request_id: str, tool: str, arguments: dict[str, Any], **fields: Any) -> Any:
    return await kernel.call(ToolRequest(id=request_id, tool=tool, arguments=arguments, **fields))


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_required_and_long_optional_calls_run_as_tasks(toolmesh_settings: Settings, transport: str) -> None:
    tools, events = task_tools(), Events()
    async with (
        running_node(toolmesh_settings, plugins=[tools], load_entrypoints=False),
        gateway_server(toolmesh_settings, transport) as server,
        Kernel(
            [mcp_plugin, events],
            settings=with_servers(Settings(), gw={**server, "tool_timeout": TASK_AFTER * 5}),
            load_entrypoints=False,
        ) as kernel,
    ):
        remote = kernel.plugin_state["mcp"].servers["gw"]
        assert remote.runs_tool_tasks
        assert kernel.get_tool("gw_report").task_support == "required"
        assert kernel.get_tool("gw_report").timeout == TASK_AFTER * 5

        report = await call(kernel, "r1", "gw_report", {"topic": "tides"})
        assert not report.is_error, report.error
        assert report.text == "report on tides, in a task"
        # progress of the task (sent after the call that created it was answered) reached the caller
        assert [p["progress"] for p in events.of("progress", "r1")] == [1.0, 2.0, 3.0]

        short = await call(kernel, "r2", "gw_probe", {}, timeout=5)
        assert short.text == "not in a task"
        long = await call(kernel, "r3", "gw_probe", {}, timeout=TASK_AFTER * 2)
        assert long.text == "in a task"

        # the mesh call's deadline cancels the remote task: the tool on the node stops long before
        # the gateway's own deadline for it (60 s)
        held = await call(kernel, "r4", "gw_hold", {}, timeout=1.5)
        assert held.is_error and held.error.code == ErrorCode.TIMEOUT
        with anyio.fail_after(10):
            while "hold cancelled" not in tools.events:
                await anyio.sleep(0.05)

        again = await call(kernel, "r5", "gw_report", {"topic": "waves"})
        assert again.text == "report on waves, in a task"
        assert not remote._task_progress  # no task left registered


async def test_tasks_are_plain_calls_when_the_server_has_no_tasks_capability() -> None:
    """The fixture server (``MCPServer``) announces no tasks: its tools are ``forbidden`` and called plainly."""
    async with Kernel([mcp_plugin], settings=with_servers(Settings(), fx=stdio_fixture()), load_entrypoints=False) as kernel:
        assert not kernel.plugin_state["mcp"].servers["fx"].runs_tool_tasks
        added = await call(kernel, "a", "fx_add", {"a": 1, "b": 2}, timeout=TASK_AFTER * 2)
        assert added.structured_content == {"total": 3}


@pytest.mark.slow
async def test_a_required_task_of_the_typescript_reference_server(npm_root: Path) -> None:  # noqa: F811 - the fixture
    """server-everything's ``simulate-research-query`` (taskSupport required, about 4 s of stages)."""
    server = {"command": node22(npm_root), "args": [everything(npm_root), "stdio"]}
    events = Events()
    settings = with_servers(Settings(), everything=server)
    async with Kernel([mcp_plugin, events], settings=settings, load_entrypoints=False) as kernel:
        spec = kernel.get_tool("everything_simulate-research-query")
        assert spec is not None and spec.task_support == "required"
        result = await call(kernel, "q", "everything_simulate-research-query", {"topic": "tides"}, timeout=60)
        assert not result.is_error, result.error
        assert "Research Report: tides" in result.text
