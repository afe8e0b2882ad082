"""``[mcp.servers]`` validation, tool naming, content mapping, and ``toolmesh mcp add``."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import mcp_types as types
import pytest
import toolmesh.plugins.mcp as mcp_plugin
from toolmesh import ConfigError, load_settings
from toolmesh.contracts import AudioContent, EmbeddedResource, ResourceLink, TextContent, ToolResult, ToolSpec
from toolmesh.plugins.mcp import ServerConfig
from toolmesh.plugins.mcp.content_mapping import (
    call_result_from_tool_result,
    mcp_tool_from_spec,
    spec_from_mcp_tool,
    tool_result_from_call_result,
)
from toolmesh.plugins.mcp.event_store import MemoryEventStore
from toolmesh.plugins.mcp.remote_tools import RemoteServer

from tests.plugins.mcp.peers import ROOT


def test_server_tables_are_validated() -> None:
    configs = mcp_plugin.load_server_configs(
        {
            "servers": {
                "files": {"command": "npx", "args": ["-y", "srv"]},
                "web": {"url": "http://x/mcp", "mode": "on-demand"},
            }
        }
    )
    assert [(config.name, config.transport, config.mode) for config in configs] == [
        ("files", "stdio", "native"),
        ("web", "http", "on-demand"),
    ]
    with pytest.raises(ConfigError, match="exactly one of 'command'"):
        mcp_plugin.load_server_configs({"servers": {"both": {"command": "x", "url": "http://x"}}})
    with pytest.raises(ConfigError, match=r"\[mcp.servers.bad\]"):
        mcp_plugin.load_server_configs({"servers": {"bad": {"command": "x", "mode": "sometimes"}}})
    with pytest.raises(ConfigError, match="server name"):
        mcp_plugin.load_server_configs({"servers": {"a.b": {"command": "x"}}})


def test_tool_names_follow_mcp_rules() -> None:
    assert mcp_plugin.mesh_tool_name("files", "read_file") == "files_read_file"
    assert mcp_plugin.mesh_tool_name("my server", "do/it") == "my_server_do_it"
    long = mcp_plugin.mesh_tool_name("s", "x" * 300)
    assert len(long) == 128 and long != mcp_plugin.mesh_tool_name("s", "x" * 299)


def test_colliding_remote_names_are_reported_and_the_first_kept(caplog: pytest.LogCaptureFixture) -> None:
    server = RemoteServer(ServerConfig(name="srv", command="unused"), lambda: None)
    server.tools = {
        name: types.Tool(name=name, input_schema={"type": "object"}) for name in ("a/b", "a_b", "a b", "c")
    }
    server.unavailable_reason = None
    with caplog.at_level(logging.WARNING, logger="toolmesh.mcp"):
        specs = server.specs()
    assert [spec.name for spec in specs] == ["srv_a_b", "srv_c"]
    assert specs[0].meta["toolmesh/mcp"]["tool"] == "a b"  # sorted remote names: the first one wins
    assert len(server.problems) == 2 and all("both map to 'srv_a_b'" in p for p in server.problems)
    assert sum("both map to" in record.getMessage() for record in caplog.records) == 2
    server.specs()  # the same collisions are not logged again on every refresh
    assert sum("both map to" in record.getMessage() for record in caplog.records) == 2


def test_content_blocks_round_trip_without_loss() -> None:
    remote = types.CallToolResult.model_validate(
        {
            "content": [
                {"type": "text", "text": "hi", "annotations": {"audience": ["user"]}, "_meta": {"k": 1}},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
                {
                    "type": "resource",
                    "resource": {"uri": "file:///b", "blob": "AAE=", "mimeType": "application/x"},
                },
            ],
            "structuredContent": {"n": 1},
            "isError": False,
        },
        by_name=False,
    )
    result = tool_result_from_call_result("r1", "srv_tool", remote)
    assert result.content == [
        TextContent(text="hi", annotations={"audience": ["user"]}, meta={"k": 1}),
        AudioContent(data="UklGRg==", mime_type="audio/wav"),
        ResourceLink(uri="file:///a.txt", name="a", mime_type="text/plain"),
        EmbeddedResource(resource={"uri": "file:///b", "blob": "AAE=", "mimeType": "application/x"}),
    ]
    assert result.structured_content == {"n": 1}
    back = call_result_from_tool_result(result, None)
    assert (
        back.model_dump(by_alias=True, mode="json", exclude_none=True)["content"]
        == remote.model_dump(by_alias=True, mode="json", exclude_none=True)["content"]
    )

    failed = tool_result_from_call_result(
        "r2", "t", types.CallToolResult(content=[types.TextContent(text="nope")], is_error=True)
    )
    assert failed.is_error and failed.error is not None and failed.error.message == "nope"


def test_specs_map_both_ways() -> None:
    tool = types.Tool.model_validate(
        {
            "name": "get",
            "title": "Get",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "outputSchema": {"type": "object", "properties": {"v": {"type": "integer"}}},
            "annotations": {"readOnlyHint": True, "openWorldHint": False},
            "execution": {"taskSupport": "optional"},
            "_meta": {"vendor/x": 1},
        },
        by_name=False,
    )
    spec = spec_from_mcp_tool(tool, name="srv_get", source="mcp", server="srv")
    assert spec.title == "Get" and spec.task_support == "optional"
    assert (
        spec.annotations is not None
        and spec.annotations.read_only_hint
        and spec.annotations.open_world_hint is False
    )
    assert spec.meta == {"vendor/x": 1, "toolmesh/mcp": {"server": "srv", "tool": "get"}}
    listed = mcp_tool_from_spec(spec)
    assert listed.output_schema == tool.output_schema and listed.meta == {"vendor/x": 1}
    assert listed.execution is not None and listed.execution.task_support == "optional"

    scalar = ToolSpec(name="n", output_schema={"type": "integer"})
    assert mcp_tool_from_spec(scalar).output_schema["properties"]["result"] == {"type": "integer"}
    wrapped = call_result_from_tool_result(ToolResult(id="1", tool="n", structured_content=3), scalar)
    assert wrapped.structured_content == {"result": 3}


def _mcp(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolmesh.plugins.mcp", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=30,
        env={"PATH": "", "PYTHONPATH": str(ROOT)},
    )


def test_mcp_add_writes_toolmesh_toml(tmp_path: Path) -> None:
    (tmp_path / "toolmesh.toml").write_text('prefix = "demo"\n', encoding="utf-8")
    stdio = _mcp(
        "add", "files", "--env", "LEVEL=warn", "--", "npx", "-y", "@scope/server", "/data", cwd=tmp_path
    )
    assert stdio.returncode == 0, stdio.stderr
    web = _mcp(
        "add",
        "web",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization=Bearer t",
        "--mode",
        "on-demand",
        cwd=tmp_path,
    )
    assert web.returncode == 0, web.stderr
    settings = load_settings(env={}, config_file=tmp_path / "toolmesh.toml")
    assert settings.prefix == "demo"
    assert settings.plugins["mcp"]["servers"] == {
        "files": {"command": "npx", "args": ["-y", "@scope/server", "/data"], "env": {"LEVEL": "warn"}},
        "web": {
            "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer t"},
            "mode": "on-demand",
        },
    }
    again = _mcp("add", "files", "--", "other", cwd=tmp_path)
    assert again.returncode == 2 and "already has [mcp.servers.files]" in again.stderr
    neither = _mcp("add", "nothing", cwd=tmp_path)
    assert neither.returncode == 2


def test_the_cli_hook_adds_the_mcp_commands() -> None:
    import typer
    from typer.testing import CliRunner

    app = typer.Typer()

    @app.command()
    def other() -> None:
        """Another command, so typer keeps sub-commands."""

    mcp_plugin.toolmesh_cli(app)
    shown = CliRunner().invoke(app, ["mcp", "--help"])
    assert shown.exit_code == 0
    assert "serve" in shown.output and "add" in shown.output


def test_loading_the_plugin_does_not_import_the_sdk() -> None:
    """Every ``toolmesh`` command loads the plugin: the SDK is imported only when MCP is used."""
    code = (
        "import sys, toolmesh.plugins.mcp, toolmesh.plugins.mcp.cli;"
        " sys.exit(1 if 'mcp' in sys.modules or 'mcp_types' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False, timeout=30).returncode == 0


@pytest.mark.anyio
async def test_the_event_store_is_bounded_by_bytes() -> None:
    store = MemoryEventStore(max_bytes=1000)
    big = types.JSONRPCResponse(jsonrpc="2.0", id=1, result={"text": "x" * 400})
    ids = [await store.store_event("1", big) for _ in range(5)]
    assert 800 <= store.size <= 1000  # two of the ~450-byte events fit
    replayed: list[object] = []

    async def collect(event: object) -> None:
        replayed.append(event)

    assert await store.replay_events_after(ids[0], collect) is None  # dropped: too old to resume from
    assert await store.replay_events_after(ids[3], collect) == "1"
    assert [event.event_id for event in replayed] == [ids[4]]  # type: ignore[attr-defined]
    assert replayed[0].message == big  # type: ignore[attr-defined]
