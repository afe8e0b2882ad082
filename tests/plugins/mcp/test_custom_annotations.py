"""Annotation keys of a tool's own survive MCP both ways: a real server → the mesh catalog → the gateway's listing."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
import toolmesh.plugins.mcp as mcp_plugin
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import TypeAdapter
from toolmesh import Mesh, Settings
from toolmesh.contracts import ToolAnnotations, ToolSpec
from toolmesh.plugins.mcp.open_annotations import AnnotatedClientSession
from toolmesh.testing import eventually, running_node

from tests.plugins.mcp.annotated_tools_server import OWN_KEYS
from tests.plugins.mcp.mesh_tools import FunctionTools
from tests.plugins.mcp.peers import HERE, gateway_command, with_servers

pytestmark = pytest.mark.anyio

SERVER = {"command": sys.executable, "args": [str(HERE / "annotated_tools_server.py")]}
MESH_OWN_KEYS = {"cost": "low", "review": None}
RAW_RESULT = TypeAdapter(dict[str, Any])
"""Reads a result as the JSON that came over the wire, before any SDK model sees it."""


async def _echo(arguments: dict[str, Any], context: Any) -> str:
    return str(arguments.get("text", ""))


def _mesh_tools() -> FunctionTools:
    tools = FunctionTools()
    tools.add(
        ToolSpec(
            name="echo",
            description="Say it back.",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
            annotations=ToolAnnotations(read_only_hint=True, extra=MESH_OWN_KEYS),
        ),
        _echo,
    )
    return tools


@asynccontextmanager
async def _gateway_client(settings: Settings, session_class: type[ClientSession]) -> AsyncIterator[ClientSession]:
    command = gateway_command(settings, "--stdio")
    async with (
        stdio_client(StdioServerParameters(command=command[0], args=command[1:])) as (read, write),
        session_class(read, write) as client,
    ):
        await client.initialize()
        yield client


async def _available(mesh: Mesh, *names: str) -> dict[str, ToolSpec]:
    async def listed() -> dict[str, ToolSpec] | None:
        specs = {spec.name: spec for spec in await mesh.list_tools()}
        return specs if all(name in specs and specs[name].available for name in names) else None

    found = await eventually(listed, timeout=30, what=f"{names} available in the catalog")
    assert found is not None
    return found


async def test_own_annotation_keys_survive_the_catalog_and_the_gateway(toolmesh_settings: Settings) -> None:
    settings = with_servers(toolmesh_settings, rated=SERVER)
    async with (
        running_node(settings, plugins=[mcp_plugin, _mesh_tools()], load_entrypoints=False),
        Mesh(settings=settings) as mesh,
    ):
        catalog = await _available(mesh, "rated_summarise", "rated_plain", "echo")
        summarised = await mesh.call("rated_summarise", {"text": "one two three four"}, timeout=20)

        async with _gateway_client(settings, ClientSession) as client:
            raw = await client.send_request(types.ListToolsRequest(), RAW_RESULT)
            called = await client.call_tool("rated_summarise", {"text": "a b c d e"})
        async with _gateway_client(settings, AnnotatedClientSession) as client:
            typed = {tool.name: tool for tool in (await client.list_tools()).tools}
            echoed = await client.call_tool("echo", {"text": "still answering"})

    assert catalog["rated_summarise"].annotations == ToolAnnotations(
        read_only_hint=True, idempotent_hint=True, extra=OWN_KEYS
    )
    assert catalog["rated_plain"].annotations == ToolAnnotations(open_world_hint=False)
    assert summarised.structured_content == {"summary": "one two three"}

    listed = {tool["name"]: tool for tool in raw["tools"]}
    assert listed["rated_summarise"]["annotations"] == {"readOnlyHint": True, "idempotentHint": True, **OWN_KEYS}
    assert listed["rated_plain"]["annotations"] == {"openWorldHint": False}
    assert listed["echo"]["annotations"] == {"readOnlyHint": True, **MESH_OWN_KEYS}
    assert not called.is_error and called.structured_content == {"summary": "a b c"}

    summarise = typed["rated_summarise"].annotations
    assert summarise is not None and summarise.read_only_hint is True
    assert summarise.model_extra == OWN_KEYS
    assert echoed.content[0].text == "still answering"  # type: ignore[union-attr]
