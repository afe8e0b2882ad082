"""Our MCP client against real MCP servers (the SDK's ``MCPServer`` in child processes)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import toolmesh
import toolmesh.plugins.mcp as mcp_plugin
from toolmesh import Kernel, Mesh, Settings
from toolmesh.contracts import ErrorCode, ImageContent, TextContent, ToolEvent, ToolRequest, ToolSpec
from toolmesh.testing import eventually, running_node

from tests.plugins.mcp.mesh_tools import standard_tools
from tests.plugins.mcp.peers import HttpFixtureServer, stdio_fixture, with_servers

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop


class ToolSetRecorder:
    """Records every tool set the kernel publishes (to see transient unavailability)."""

    def __init__(self) -> None:
        self.sets: list[dict[str, ToolSpec]] = []
        self.events: list[ToolEvent] = []

    @toolmesh.hookimpl
    def toolmesh_tools_changed(self, kernel: Kernel, tools: list[ToolSpec]) -> None:
        self.sets.append({spec.name: spec for spec in tools})

    @toolmesh.hookimpl
    def toolmesh_event(self, event: ToolEvent) -> None:
        self.events.append(event)

    def reasons(self, name: str) -> list[str]:
        return [
            tools[name].unavailable_reason or ""
            for tools in self.sets
            if name in tools and not tools[name].available
        ]


def kernel_for(settings: Settings, *plugins: object) -> Kernel:
    return Kernel([mcp_plugin, *plugins], settings=settings, load_entrypoints=False)


async def call(kernel: Kernel, tool: str, arguments: dict[str, Any] | None = None, **fields: Any) -> Any:
    return await kernel.call(
        ToolRequest(id=f"r{time.monotonic_ns()}", tool=tool, arguments=arguments or {}, **fields)
    )


async def test_stdio_server_tools_keep_their_metadata_and_results() -> None:
    kernel = kernel_for(with_servers(Settings(), fx=stdio_fixture()))
    async with kernel:
        add = kernel.get_tool("fx_add")
        assert add is not None and add.available and add.source == "mcp"
        assert add.title == "Add numbers"
        assert add.description == "Add two integers."
        assert (
            add.annotations is not None and add.annotations.read_only_hint and add.annotations.idempotent_hint
        )
        assert add.output_schema is not None and add.output_schema["properties"]["total"]["type"] == "integer"
        assert add.meta == {"toolmesh/mcp": {"server": "fx", "tool": "add"}}
        assert kernel.get_tool("fx_echo").input_schema["properties"]["text"]["description"] == "what to say"

        result = await call(kernel, "fx_add", {"a": 2, "b": 3})
        assert not result.is_error and result.structured_content == {"total": 5}

        picture = await call(kernel, "fx_picture")
        assert picture.content == [
            TextContent(text="a dot"),
            ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
        ]

        failed = await call(kernel, "fx_fail", {"reason": "no disk"})
        assert failed.is_error and failed.error.code == ErrorCode.EXECUTION_FAILED
        assert "no disk" in failed.text

        invalid = await call(kernel, "fx_add", {"a": "two"})
        assert invalid.is_error and invalid.error.code == ErrorCode.INVALID_ARGUMENTS


async def test_progress_becomes_events_and_the_deadline_cancels_the_remote_call(tmp_path: Path) -> None:
    marker = tmp_path / "slow.log"
    recorder = ToolSetRecorder()
    kernel = kernel_for(with_servers(Settings(), fx=stdio_fixture("--marker", str(marker))), recorder)
    async with kernel:
        done = await call(kernel, "fx_slow", {"seconds": 0.3})
        assert done.text == "done"
        progress = [event.attributes for event in recorder.events if event.kind == "progress"]
        assert progress[:2] == [
            {"progress": 1.0, "total": 3.0, "message": "step 1"},
            {"progress": 2.0, "total": 3.0, "message": "step 2"},
        ]

        started = time.monotonic()
        timed_out = await call(kernel, "fx_slow", {"seconds": 5}, timeout=0.4)
        assert timed_out.is_error and timed_out.error.code == ErrorCode.TIMEOUT
        assert time.monotonic() - started < 2
        # notifications/cancelled reached the server: its handler was cancelled, not left running.
        await eventually(lambda: marker.exists() and "cancelled" in marker.read_text())
        assert marker.read_text().splitlines() == ["finished", "cancelled"]


async def test_http_server_in_native_and_on_demand_modes(http_fixture_server: HttpFixtureServer) -> None:
    settings = with_servers(
        Settings(),
        live={"url": http_fixture_server.url},
        cold={"url": http_fixture_server.url, "mode": "on-demand"},
    )
    async with kernel_for(settings) as kernel:
        for name in ("live_add", "cold_add"):
            result = await call(kernel, name, {"a": 20, "b": 22})
            assert result.structured_content == {"total": 42}, name
        catalog = remote_catalog(kernel)
        assert catalog.servers["live"].session is not None
        assert catalog.servers["cold"].session is None  # on-demand keeps no session open


def remote_catalog(kernel: Kernel) -> Any:
    catalog = kernel.plugin_state.get("mcp")
    assert catalog is not None
    return catalog


async def test_list_changed_refreshes_the_catalog() -> None:
    async with kernel_for(with_servers(Settings(), fx=stdio_fixture())) as kernel:
        assert kernel.get_tool("fx_extra") is None
        assert (await call(kernel, "fx_grow")).text == "grown"
        await eventually(lambda: kernel.get_tool("fx_extra") is not None)
        assert (await call(kernel, "fx_extra")).text == "extra"


async def test_a_server_killed_mid_call_marks_its_tools_unavailable_then_recovers() -> None:
    recorder = ToolSetRecorder()
    async with kernel_for(with_servers(Settings(), fx=stdio_fixture()), recorder) as kernel:
        crashed = await call(kernel, "fx_crash")
        assert crashed.is_error and crashed.error.code == ErrorCode.UNAVAILABLE
        assert "went away" in crashed.error.message
        await eventually(lambda: recorder.reasons("fx_add"))
        assert "is down" in recorder.reasons("fx_add")[0]
        # the supervisor restarts the stdio server with backoff
        await eventually(lambda: (kernel.get_tool("fx_add") or ToolSpec(name="x", available=False)).available)
        assert (await call(kernel, "fx_add", {"a": 1, "b": 1})).structured_content == {"total": 2}


async def test_a_server_writing_garbage_is_marked_unavailable() -> None:
    recorder = ToolSetRecorder()
    garbage = {"command": sys.executable, "args": [str(Path(__file__).with_name("garbage_server.py"))]}
    async with kernel_for(with_servers(Settings(), bad=garbage), recorder) as kernel:
        started = time.monotonic()
        result = await call(kernel, "bad_echo", {"text": "hi"}, timeout=10)
        assert result.is_error and result.error.code == ErrorCode.UNAVAILABLE
        assert "malformed JSON-RPC" in result.error.message
        assert time.monotonic() - started < 5  # failed at once, not at the deadline
        await eventually(lambda: recorder.reasons("bad_echo"))
        assert "malformed JSON-RPC" in recorder.reasons("bad_echo")[0]


async def test_a_dead_or_hanging_server_leaves_the_node_serving(
    toolmesh_settings: Settings, http_fixture_server: HttpFixtureServer
) -> None:
    settings = with_servers(
        toolmesh_settings,
        remote={
            "url": http_fixture_server.url,
            "ping_interval": 0.3,
            "connect_timeout": 1.0,
            "max_backoff": 0.5,
        },
        missing={
            "command": sys.executable,
            "args": ["-c", "import sys; sys.exit(1)"],
            "connect_timeout": 2.0,
        },
    )
    async with (
        running_node(settings, plugins=[mcp_plugin, standard_tools()], load_entrypoints=False) as node,
        Mesh(settings=settings) as mesh,
    ):
        assert (await mesh.call("remote_add", {"a": 1, "b": 2})).structured_content == {"total": 3}

        assert http_fixture_server.process is not None
        os.kill(http_fixture_server.process.pid, signal.SIGSTOP)  # hangs: pings go unanswered
        try:
            await eventually(lambda: not node.kernel.get_tool("remote_add").available)
            unavailable = await mesh.call("remote_add", {"a": 1, "b": 2})
            assert unavailable.error.code == ErrorCode.UNAVAILABLE
            assert "is down" in unavailable.error.message
            assert (await mesh.call("add", {"a": 1, "b": 2})).structured_content == 3
        finally:
            os.kill(http_fixture_server.process.pid, signal.SIGCONT)
        await eventually(lambda: node.kernel.get_tool("remote_add").available)

        http_fixture_server.kill()  # dies
        await eventually(lambda: not node.kernel.get_tool("remote_add").available)
        assert (await mesh.call("add", {"a": 2, "b": 2})).structured_content == 4
