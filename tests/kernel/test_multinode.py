"""Two node processes on one broker: shared load, kill -9, graceful stop, discovery."""

from __future__ import annotations

import uuid
from functools import partial

import anyio
import anyio.to_thread
import pytest
from toolmesh._config import Settings
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ToolEvent, ToolRequest
from toolmesh.testing import eventually

from tests.event_subscriptions import follow_events, kinds_of
from tests.processes import NodeProcess

pytestmark = pytest.mark.anyio


def _env(ttl: float) -> dict[str, str]:
    return {"TOOLMESH_HEARTBEAT": str(ttl / 5), "TOOLMESH_CATALOG_TTL": str(ttl)}


async def _node_names(mesh: Mesh) -> set[str]:
    return {entry.node for entry in await mesh.nodes()}


async def _served_by(mesh: Mesh, node: str) -> bool:
    """A few quick calls, all answered by ``node`` (one routed to a dead node times out instead)."""
    results = [await mesh.call("add", {"a": 1, "b": 1}, timeout=0.25) for _ in range(5)]
    return all(not result.is_error and result.node == node for result in results)


async def test_two_nodes_share_load_and_survive_kill_9(toolmesh_broker):
    """Both nodes serve calls; after kill -9 of one the other serves them all; the dead one leaves after the TTL."""
    prefix = f"m{uuid.uuid4().hex[:8]}"
    settings = Settings(nats_url=toolmesh_broker.url, prefix=prefix, heartbeat=0.2, catalog_ttl=1.0)
    args = ("examples/", "--nats", toolmesh_broker.url, "--prefix", prefix)
    with NodeProcess(*args, env=_env(1.0)) as first, NodeProcess(*args, env=_env(1.0)) as second:
        async with Mesh(settings=settings) as mesh:
            served = [await mesh.call("add", {"a": i, "b": 1}) for i in range(40)]
            assert all(not result.is_error for result in served)
            assert {result.node for result in served} == {first.name, second.name}

            first.kill()
            # the broker drops the dead node's subscription once it sees the connection close
            await eventually(lambda: _served_by(mesh, second.name), timeout=15)
            after = [await mesh.call("add", {"a": i, "b": 1}) for i in range(20)]
            assert [result.structured_content for result in after] == [i + 1 for i in range(20)]
            assert {result.node for result in after} == {second.name}

            await eventually(lambda: _only_node(mesh, second.name), timeout=5, what="the dead node expiring")


async def _only_node(mesh: Mesh, node: str) -> bool:
    return await _node_names(mesh) == {node}


async def test_graceful_stop_leaves_the_catalog_at_once(toolmesh_broker):
    """SIGTERM removes the node's tools immediately (long TTL, so only the drain can explain it)."""
    prefix = f"g{uuid.uuid4().hex[:8]}"
    settings = Settings(nats_url=toolmesh_broker.url, prefix=prefix, heartbeat=5, catalog_ttl=60)
    args = ("examples/math_tools.py", "--nats", toolmesh_broker.url, "--prefix", prefix)
    with NodeProcess(*args, env=_env(60)) as stopping, NodeProcess(*args, env=_env(60)) as staying:
        async with Mesh(settings=settings) as mesh:
            assert await _node_names(mesh) == {stopping.name, staying.name}
            stopping.terminate()
            assert await _node_names(mesh) == {staying.name}
            result = await mesh.call("add", {"a": 1, "b": 2})
    assert result.node == staying.name


async def test_new_node_is_callable_within_a_second(toolmesh_broker):
    """A node's tools are callable by an existing client as soon as it reports ready."""
    prefix = f"d{uuid.uuid4().hex[:8]}"
    settings = Settings(nats_url=toolmesh_broker.url, prefix=prefix)
    async with Mesh(settings=settings) as mesh:
        before = await mesh.call("word_count", {"text": "a b"})
        assert before.error.code.value == "unknown_tool"
        with NodeProcess("examples/text_tools.py", "--nats", toolmesh_broker.url, "--prefix", prefix) as node:
            result = await mesh.call("word_count", {"text": "a b"})
            tools = {spec.name for spec in await mesh.list_tools()}
    assert (result.structured_content, result.node) == (2, node.name)
    assert "word_count" in tools


def _all_started(events: list[ToolEvent], requests: list[ToolRequest]) -> bool:
    return all("started" in kinds_of(events, request.id) for request in requests)


async def test_sigterm_drains_accepted_calls(toolmesh_broker):
    """Calls in flight when a node gets SIGTERM all finish with their results; none is dropped."""
    prefix = f"s{uuid.uuid4().hex[:8]}"
    settings = Settings(nats_url=toolmesh_broker.url, prefix=prefix)
    with NodeProcess("examples/slow_tools.py", "--nats", toolmesh_broker.url, "--prefix", prefix) as node:
        async with Mesh(settings=settings) as mesh:
            results = []
            requests = [mesh.new_request("sleep", {"seconds": 0.5 + i / 100}) for i in range(20)]

            async def one(request: ToolRequest) -> None:
                results.append(await mesh.send(request))

            async with anyio.create_task_group() as following:
                probe = partial(mesh.call, "sleep", {"seconds": 0})
                seen = await follow_events(mesh, following, "sleep", probe)
                async with anyio.create_task_group() as tg:
                    for request in requests:
                        tg.start_soon(one, request)
                    # SIGTERM only once the node has started every call
                    await eventually(partial(_all_started, seen, requests), timeout=10)
                    await anyio.to_thread.run_sync(node.process.terminate)
                following.cancel_scope.cancel()
            output = await anyio.to_thread.run_sync(node.process.communicate)
    assert [result.is_error for result in results] == [False] * 20
    assert sorted(result.structured_content for result in results) == [0.5 + i / 100 for i in range(20)]
    assert node.process.returncode == 0
    assert '"event": "stopped"' in output[0]
