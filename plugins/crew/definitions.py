"""Tool definitions in the formats agent stacks consume: OpenAI, Anthropic and MCP."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from toolmesh.contracts import ToolSpec

__all__ = ["DefinitionFormat", "anthropic_tool", "definitions", "mcp_tool", "openai_tool"]

DefinitionFormat = Literal["openai", "anthropic", "mcp"]


def openai_tool(spec: ToolSpec) -> dict[str, Any]:
    """An OpenAI Chat Completions ``tools`` item."""
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": spec.input_schema},
    }


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    """An Anthropic Messages ``tools`` item."""
    return {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}


def mcp_tool(spec: ToolSpec) -> dict[str, Any]:
    """An MCP ``tools/list`` item (camelCase fields)."""
    tool: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": spec.input_schema,
    }
    if spec.title:
        tool["title"] = spec.title
    if spec.output_schema is not None:
        tool["outputSchema"] = spec.output_schema
    if spec.annotations is not None:
        tool["annotations"] = spec.annotations.as_mcp()
    return tool


_FORMATS = {"openai": openai_tool, "anthropic": anthropic_tool, "mcp": mcp_tool}


def definitions(specs: Iterable[ToolSpec], format: DefinitionFormat = "openai") -> list[dict[str, Any]]:
    """Every spec as a definition of ``format``; raises ``ValueError`` for an unknown format."""
    try:
        convert = _FORMATS[format]
    except KeyError:
        raise ValueError(f"unknown definition format {format!r}; use one of {', '.join(_FORMATS)}") from None
    return [convert(spec) for spec in specs]
