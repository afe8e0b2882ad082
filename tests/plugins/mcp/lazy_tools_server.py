"""An MCP server (the SDK's low-level ``Server``) over stdio that registers its tools lazily.

Like servers that load their tools on first use, the first ``tools/list`` of a
process finds none: it loads them, sends ``notifications/tools/list_changed``
and answers with what it had (nothing); later listings show the tools.  A call
loads them too.  ``--starts FILE`` appends a line to FILE each time the
process starts, so tests can count the starts.
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

parser = argparse.ArgumentParser()
parser.add_argument("--starts", default=None)
options = parser.parse_args()

LOOKUP = types.Tool(
    name="lookup",
    description="Look a word up.",
    input_schema={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
)
loaded: list[types.Tool] = []


async def _load(ctx: ServerRequestContext[Any, Any]) -> None:
    if not loaded:
        loaded.append(LOOKUP)
        await ctx.session.send_tool_list_changed()


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    listed = list(loaded)
    await _load(ctx)
    return types.ListToolsResult(tools=listed)


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    await _load(ctx)
    word = (params.arguments or {}).get("word", "")
    return types.CallToolResult(content=[types.TextContent(text=f"{word}: found")])


async def main() -> None:
    server: Server[Any] = Server("lazy", on_list_tools=list_tools, on_call_tool=call_tool)
    initialization = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, initialization)


if options.starts:
    with open(options.starts, "a", encoding="utf-8") as handle:
        handle.write("start\n")
anyio.run(main)
