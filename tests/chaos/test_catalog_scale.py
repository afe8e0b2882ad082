"""Catalog at scale (``-m chaos`` or ``-m slow``): 50 nodes with 10,000 tools on one broker; a client's view converges within 1 s."""

from __future__ import annotations

import time
from typing import Any

import anyio
import msgspec
import pytest
from toolmesh import hookimpl
from toolmesh._transport.mesh import Mesh
from toolmesh._transport.node import Node
from toolmesh.contracts import ToolSpec
from toolmesh.testing import test_settings

# chaos as well as slow: "pytest -m chaos tests/chaos" then checks every scale-out target in one run
pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.chaos, pytest.mark.timeout(600)]

NODES, TOOLS_PER_NODE = 50, 200
CONVERGENCE = 1.0


class ScalePlugin:
    """Provides ``TOOLS_PER_NODE`` tools named ``n<node>_t<i>``; each returns its own name."""

    def __init__(self, node: int) -> None:
        self.node = node

    @hookimpl
    def toolmesh_discover_tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name=f"n{self.node:02d}_t{i:03d}",
                description=f"tool {i} of node {self.node}",
                input_schema={"type": "object", "properties": {"x": {"type": "integer"}}},
                source="scale",
            )
            for i in range(TOOLS_PER_NODE)
        ]

    @hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return spec.name if spec.source == "scale" else None


async def _wait_for(mesh: Mesh, predicate: Any, limit: float) -> tuple[float, int]:
    """Seconds until ``predicate(tool count)`` holds (or ``limit`` passed), and the last count."""
    started = time.monotonic()
    while True:
        count = len(await mesh.list_tools())
        elapsed = time.monotonic() - started
        if predicate(count) or elapsed > limit:
            return elapsed, count


async def test_fifty_nodes_ten_thousand_tools(toolmesh_broker):
    """All tools listed within 1 s of the last node being ready; a leaving and a joining node show within 1 s."""
    settings = test_settings(toolmesh_broker.url, heartbeat=1.0, catalog_ttl=5.0)
    nodes = [
        Node(settings=msgspec.structs.replace(settings, node_name=f"scale-{i:02d}"), plugins=[ScalePlugin(i)],
             load_entrypoints=False)
        for i in range(NODES)
    ]
    total = NODES * TOOLS_PER_NODE
    async with anyio.create_task_group() as tg, Mesh(settings=settings) as mesh:
        started = time.monotonic()
        for node in nodes:
            await tg.start(node.serve)
        startup = time.monotonic() - started
        converged, count = await _wait_for(mesh, lambda n: n == total, 10)
        listing_started = time.monotonic()
        await mesh.list_tools()
        one_listing = time.monotonic() - listing_started

        # stays correct over several heartbeats (no entry expires between heartbeats)
        counts = []
        for _ in range(6):
            await anyio.sleep(1.0)
            counts.append(len(await mesh.list_tools()))

        sample = await mesh.call("n49_t199", {"x": 1})

        nodes[0].stop()
        left, after_leave = await _wait_for(mesh, lambda n: n == total - TOOLS_PER_NODE, 10)

        joining = Node(settings=msgspec.structs.replace(settings, node_name="scale-new"), plugins=[ScalePlugin(50)],
                       load_entrypoints=False)
        await tg.start(joining.serve)
        joined, after_join = await _wait_for(mesh, lambda n: n == total, 10)
        for node in [*nodes[1:], joining]:
            node.stop()
    print(
        f"\ncatalog scale: {NODES} nodes x {TOOLS_PER_NODE} tools started in {startup:.1f}s;"
        f" client saw all {count} tools {converged:.3f}s after the last node was ready;"
        f" one list_tools of {total} tools takes {one_listing:.3f}s; counts over 6 s {counts};"
        f" a stopped node left the view in {left:.3f}s, a new node joined it in {joined:.3f}s"
    )
    assert count == total and converged <= CONVERGENCE
    assert counts == [total] * 6
    assert sample.structured_content == "n49_t199"
    assert after_leave == total - TOOLS_PER_NODE and left <= CONVERGENCE
    assert after_join == total and joined <= CONVERGENCE
