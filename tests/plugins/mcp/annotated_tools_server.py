"""An MCP server (the SDK's low-level ``Server``) over stdio whose tools carry annotation keys of their own.

Anubis tools list keys such as ``confidence``, ``category`` and ``tags``
beside MCP's hints; MCP's ``ToolAnnotations`` is an open object, so any
server may.  The SDK sieves a ``tools/list`` result through its models,
which drop keys they do not name, so this server answers ``tools/list``
from a middleware with its listing as written (as toolmesh's gateway does).
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

OWN_KEYS: dict[str, Any] = {
    "confidence": 0.95,
    "category": "text-processing",
    "tags": ["nlp", "text"],
    "x-owner": {"team": "language", "oncall": None},
}
"""The ``summarise`` tool's own annotation keys (the tests import them)."""

TOOLS: list[dict[str, Any]] = [
    {
        "name": "summarise",
        "title": "Summarise",
        "description": "The first words of a text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "outputSchema": {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]},
        "annotations": {"readOnlyHint": True, "idempotentHint": True, **OWN_KEYS},
    },
    {
        "name": "plain",
        "description": "Say it back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "annotations": {"openWorldHint": False},
    },
]


async def listing_as_written(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.method != "tools/list":
        return await call_next(ctx)
    return {"tools": TOOLS}


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult.model_validate({"tools": TOOLS}, by_name=False)


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    if params.name == "summarise":
        summary = " ".join(text.split()[:3])
        return types.CallToolResult(content=[types.TextContent(text=summary)], structured_content={"summary": summary})
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main() -> None:
    server: Server[Any] = Server("rated", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.append(listing_as_written)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
