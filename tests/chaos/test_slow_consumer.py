"""Chaos (``-m chaos``): a node that stops reading its connection becomes a slow consumer and is cut off.

The node process is frozen (SIGSTOP) while requests keep arriving for it; the
server buffers what it cannot write, and once that passes ``max_pending`` it
closes the connection.  From then on NATS routes every call to the healthy
node, the frozen node's catalog entry expires, and after SIGCONT the node
reconnects and serves again.  The run prints its figures (``-s``).
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest
from toolmesh._config import Settings
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ToolRequest, encode

from tests.nats_servers import NatsServer
from tests.processes import NodeProcess

pytestmark = [pytest.mark.anyio, pytest.mark.chaos, pytest.mark.timeout(300)]

TOOLS = str(Path(__file__).with_name("chaos_tools.py"))
MAX_PENDING = 2 * 1024 * 1024
"""Bytes the server buffers for one connection before it calls it a slow consumer (default 64 MB)."""
FAST_CATALOG = {"TOOLMESH_HEARTBEAT": "0.5", "TOOLMESH_CATALOG_TTL": "2"}


def _node(url: str, name: str) -> NodeProcess:
    return NodeProcess(TOOLS, "--nats", url, "--name", name,
                       env={"TOOLMESH_PLUGINS": "python", "TOOLMESH_NODE_NAME": name, **FAST_CATALOG})


async def _serving(mesh: Mesh, calls: int) -> Counter[str]:
    served: Counter[str] = Counter()
    for _ in range(calls):
        result = await mesh.call("ping", {}, timeout=1.0)
        served[result.node or result.error.code.value] += 1
    return served


async def _catalog_names(mesh: Mesh) -> set[str]:
    with anyio.fail_after(1.0):
        return {entry.node for entry in await mesh.nodes()}


async def test_frozen_node_is_cut_off_as_a_slow_consumer_and_rejoins(tmp_path: Path):
    server = NatsServer(f"max_pending: {MAX_PENDING}\nwrite_deadline: \"2s\"", workdir=tmp_path).start()
    frozen, healthy = _node(server.url, "frozen"), _node(server.url, "healthy")
    figures: dict[str, object] = {}
    stopped = False
    try:
        frozen.wait_ready()
        healthy.wait_ready()
        settings = Settings(nats_url=server.url, default_timeout=1.0, catalog_ttl=2.0, heartbeat=0.5)
        async with Mesh(settings=settings) as mesh:
            figures["before"] = dict(await _serving(mesh, 40))

            frozen.process.send_signal(signal.SIGSTOP)
            stopped = True
            frozen_at = time.monotonic()
            # Heavy one-way traffic for the tool (valid requests without a reply subject, 64 KB each):
            # the healthy node keeps up, the frozen one's share piles up in the server.
            padding = "x" * 64 * 1024
            flood = encode(ToolRequest(id="flood", tool="ping", arguments={}, meta={"padding": padding}))
            subject = settings.subjects.request("ping")
            published = 0
            # Paced (about 1.3 MB per 20 ms) so the healthy node, on a busy machine, keeps well under max_pending.
            while "Slow Consumer Detected" not in server.log() and time.monotonic() - frozen_at < 30:
                for _ in range(20):
                    await mesh.nc.publish(subject, flood)
                published += 20
                await mesh.nc.flush()
                await anyio.sleep(0.02)
            cut_off = time.monotonic() - frozen_at
            figures["flood_mb_until_cut_off"] = round(published * len(flood) / 2**20, 1)
            figures["cut_off_after_s"] = round(cut_off, 2)

            # Everything now goes to the healthy node, with no call lost to the frozen one.
            figures["after_cut_off"] = dict(await _serving(mesh, 200))
            left = None
            while time.monotonic() - frozen_at < 10 and left is None:
                if "frozen" not in await _catalog_names(mesh):
                    left = time.monotonic() - frozen_at
                await anyio.sleep(0.1)
            figures["left_catalog_after_freeze_s"] = round(left, 2) if left is not None else None

            frozen.process.send_signal(signal.SIGCONT)
            stopped = False
            thawed_at = time.monotonic()
            rejoined = None
            while time.monotonic() - thawed_at < 20 and rejoined is None:
                if "frozen" in await _catalog_names(mesh):
                    rejoined = time.monotonic() - thawed_at
                await anyio.sleep(0.1)
            figures["rejoined_catalog_after_thaw_s"] = round(rejoined, 2) if rejoined is not None else None
            figures["after_thaw"] = dict(await _serving(mesh, 40))
    finally:
        if stopped:
            frozen.process.send_signal(signal.SIGCONT)
        for node in (frozen, healthy):
            node.__exit__(None, None, None)
        server_log = server.log()
        server.stop()
    print("\nslow consumer:", json.dumps(figures))
    cut_off_lines = [line for line in server_log.splitlines() if "Slow Consumer Detected" in line]
    assert cut_off_lines, server_log[-2000:]
    # nats-server names the connection it cut off: only the frozen node's (its name is "toolmesh-node <name>")
    assert all('toolmesh-node frozen"' in line for line in cut_off_lines), cut_off_lines
    assert figures["before"].keys() == {"frozen", "healthy"}, figures
    assert figures["after_cut_off"] == {"healthy": 200}, figures
    assert figures["left_catalog_after_freeze_s"] is not None, figures
    assert figures["rejoined_catalog_after_thaw_s"] is not None, figures
    assert figures["after_thaw"].keys() == {"frozen", "healthy"}, figures
