"""MCP tool definitions for agents list a tool's own annotation keys beside MCP's hints, as MCP does."""

from __future__ import annotations

from toolmesh.contracts import ToolAnnotations, ToolSpec
from toolmesh.plugins.crew.definitions import definitions


def test_mcp_definitions_list_annotations_flat() -> None:
    own = {"confidence": 0.95, "category": "text-processing", "tags": ["nlp"]}
    rated = ToolSpec(name="rated", annotations=ToolAnnotations(read_only_hint=True, extra=own))
    plain = ToolSpec(name="plain", annotations=ToolAnnotations(open_world_hint=False))
    listed = {tool["name"]: tool for tool in definitions([rated, plain, ToolSpec(name="bare")], "mcp")}
    assert listed["rated"]["annotations"] == {"readOnlyHint": True, **own}
    assert listed["plain"]["annotations"] == {"openWorldHint": False}
    assert "annotations" not in listed["bare"]
