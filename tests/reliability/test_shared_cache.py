"""The shared cache: a result computed on one node is a hit on another; per-tool TTL; off by default."""

from __future__ import annotations

import uuid
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from toolmesh._config import Settings
from toolmesh._transport.mesh import Mesh
from toolmesh._transport.shared_cache import SharedCache
from toolmesh.contracts import ToolResult
from toolmesh.testing import running_node, test_settings

from tests.processes import NodeProcess

pytestmark = pytest.mark.anyio

TOOLS = str(Path(__file__).with_name("recording_tools.py"))


def _python() -> list[object]:
    from toolmesh.plugins import python

    return [python]


async def test_hit_across_two_node_processes(toolmesh_broker, tmp_path):
    """Node process A computes and stores; after A stops, node process B answers from the shared bucket."""
    record = tmp_path / "record.log"
    prefix = f"sc{uuid.uuid4().hex[:8]}"
    env = {"TOOLMESH_TEST_RECORD": str(record), "TOOLMESH_SHARED_CACHE": "1", "TOOLMESH_PLUGINS": "python"}
    args = (TOOLS, "--nats", toolmesh_broker.url, "--prefix", prefix)
    settings = Settings(nats_url=toolmesh_broker.url, prefix=prefix)
    async with Mesh(settings=settings) as mesh:
        with NodeProcess(*args, env=env) as first:
            computed = await mesh.call("stamp", {"key": "s1"})
            await anyio.to_thread.run_sync(first.terminate)
        with NodeProcess(*args, env=env) as second:
            cached = await mesh.call("stamp", {"key": "s1"})
            other = await mesh.call("stamp", {"key": "s2"})
    assert (computed.node, computed.cached) == (first.name, False)
    assert (cached.node, cached.cached) == (second.name, True)
    assert cached.structured_content == computed.structured_content == f"s1@{first.process.pid}"
    assert not other.cached
    assert record.read_text().count("done s1") == 1


async def test_without_the_setting_nodes_do_not_share(toolmesh_broker):
    """The in-process cache stays the default: a second node computes again."""
    settings = test_settings(toolmesh_broker.url)
    async with Mesh(settings=settings) as mesh:
        async with running_node(settings, sources=[TOOLS], load_entrypoints=False, plugins=_python(), name="a"):
            await mesh.call("stamp", {"key": "s1"})
        async with running_node(settings, sources=[TOOLS], load_entrypoints=False, plugins=_python(), name="b"):
            second = await mesh.call("stamp", {"key": "s1"})
    assert not second.cached


async def test_entries_expire_after_the_tool_ttl(toolmesh_broker):
    """An entry is a miss once its own TTL passed, although the bucket keeps it longer."""
    settings = test_settings(toolmesh_broker.url)
    async with Mesh(settings=settings) as mesh:
        cache = await SharedCache.open(mesh.nc.jetstream(), settings)
        result = ToolResult(id="x", tool="t", structured_content=1)
        await cache.put("k-short", result, 0.2)
        await cache.put("k-long", result, None)
        assert (await cache.get("k-short")).structured_content == 1
        await anyio.sleep(0.3)
        assert await cache.get("k-short") is None
        assert (await cache.get("k-long")).structured_content == 1
        assert await cache.get("never-stored") is None
