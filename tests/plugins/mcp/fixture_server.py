"""A small MCP server (the SDK's ``MCPServer``) that tests connect toolmesh to.

``python fixture_server.py`` serves stdio; ``--http PORT`` serves Streamable
HTTP on loopback; ``--garbage`` writes a line of non-JSON on stdout when
``echo`` is called; ``--marker FILE`` appends a line to FILE when ``slow`` is
cancelled or finishes.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

parser = argparse.ArgumentParser()
parser.add_argument("--http", type=int, default=None)
parser.add_argument("--garbage", action="store_true")
parser.add_argument("--marker", default=None)
options = parser.parse_args()

server = MCPServer("fixture")


class Sum(BaseModel):
    total: int


def _mark(text: str) -> None:
    if options.marker:
        with open(options.marker, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")


@server.tool(title="Add numbers", annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(total=a + b)


@server.tool()
def echo(text: Annotated[str, Field(description="what to say")]) -> str:
    """Say it back."""
    if options.garbage:
        sys.stdout.write("this is not JSON-RPC\n")
        sys.stdout.flush()
    return text


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and an image."""
    return [TextContent(text="a dot"), ImageContent(data="iVBORw0KGgo=", mime_type="image/png")]


@server.tool()
def fail(reason: str) -> str:
    """Always fails with ``reason``."""
    raise ToolError(reason)


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress every 0.1 s."""
    steps = max(1, int(seconds * 10))
    try:
        for step in range(steps):
            await ctx.report_progress(step + 1, steps, f"step {step + 1}")
            await anyio.sleep(0.1)
    except anyio.get_cancelled_exc_class():
        _mark("cancelled")
        raise
    _mark("finished")
    return "done"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named ``extra`` and tell the client its tool list changed."""

    def extra() -> str:
        """Added at run time."""
        return "extra"

    server.add_tool(extra)
    await ctx.session.send_tool_list_changed()
    return "grown"


if options.http is not None:
    server.run("streamable-http", host="127.0.0.1", port=options.http)
else:
    server.run()
