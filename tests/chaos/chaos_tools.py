"""Tools for the cluster chaos runs: ``work`` answers at once, or hangs on a node started with TOOLMESH_TEST_HANG=1."""

from __future__ import annotations

import os

import anyio
import toolmesh

_HANG = os.environ.get("TOOLMESH_TEST_HANG") == "1"


@toolmesh.tool(timeout=2, max_concurrency=4)
async def work(seconds: float = 0.0) -> str:
    """Sleep ``seconds`` (or forever on a hanging node; the tool's 2 s timeout ends it)."""
    await anyio.sleep(3600 if _HANG else seconds)
    return os.environ.get("TOOLMESH_NODE_NAME", "node")


@toolmesh.tool
def ping() -> str:
    """Answer at once (shows that a node with a hung tool still serves its other tools)."""
    return "pong"
