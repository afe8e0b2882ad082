"""Catalog page server time of ``toolmesh console``, 5,000 tools (target: at most 200 ms) beside 50 tools.

Real parts: an embedded nats-server, nodes serving generated Python tools (the
catalog in JetStream as in production), the console served by uvicorn, and
HTTP requests over loopback. Reports the server's own time (``Server-Timing``)
and the time a client waits for the whole page, for the first page, a search,
a filter and a tool page, with 5,000 and with 50 tools in the same run.

    python bench/console_catalog.py [--tools 5000] [--nodes 5] [--requests 40] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import toolmesh
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh.plugins.console.server import serve_console
from toolmesh.testing import eventually, running_node, test_settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.processes import free_port

TAGS = ("search", "files", "math", "text", "web", "data", "admin", "mail")


def generated_tools(count: int, offset: int) -> list[toolmesh.ToolFunction]:
    """``count`` distinct tools with typed parameters, descriptions and tags, like a large real catalog."""
    made = []
    for index in range(offset, offset + count):

        def body(query: str, limit: int = 10, exact: bool = False) -> list[str]:
            return [query][:limit]

        body.__doc__ = (
            f"Look things up in collection {index}: returns matching items, ranked. Variant {index % 97}."
        )
        made.append(
            toolmesh.tool(name=f"lookup_{index:05d}", tags=(TAGS[index % len(TAGS)], f"team{index % 13}"))(
                body
            )
        )
    return made


def timed_get(url: str) -> tuple[float, float, int]:
    """(client ms, server ms from Server-Timing, bytes) of one GET."""
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as answer:
        body = answer.read()
        timing = answer.headers.get("server-timing", "")
    client = (time.perf_counter() - started) * 1000
    server = float(timing.split("dur=")[1]) if "dur=" in timing else float("nan")
    return client, server, len(body)


async def measure(tools: int, nodes: int, requests: int) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    with EmbeddedBroker(0) as broker:
        settings = test_settings(broker.url, heartbeat=2.0, catalog_ttl=6.0)
        per_node = tools // nodes
        async with anyio.create_task_group() as tg:
            for number in range(nodes):
                node_tools = generated_tools(per_node, number * per_node)
                await tg.start(_serve_node, settings, f"bench-node-{number}", node_tools)
            port = free_port()
            ready = anyio.Event()
            tg.start_soon(lambda: serve_console(settings, port=port, on_ready=lambda url: ready.set()))
            await ready.wait()
            base = f"http://127.0.0.1:{port}/"

            async def listed() -> bool:
                page = await anyio.to_thread.run_sync(lambda: urllib.request.urlopen(base, timeout=30).read())
                return f"<strong>{per_node * nodes}</strong>".encode() in page

            await eventually(listed, timeout=60, interval=0.5, what="the console listing every tool")
            pages = {
                "catalog, first page": base,
                "catalog, search": base + "?q=collection+4242",
                "catalog, tag filter": base + "?tag=math",
                "catalog, node + query": base + "?node=bench-node-1&q=variant",
                "tool page": base + "tools/lookup_00042",
            }
            for name, url in pages.items():
                for _ in range(3):  # warm-up
                    await anyio.to_thread.run_sync(timed_get, url)
                samples = [await anyio.to_thread.run_sync(timed_get, url) for _ in range(requests)]
                clients = sorted(sample[0] for sample in samples)
                servers = sorted(sample[1] for sample in samples)
                rows[name] = {
                    "server_p50_ms": statistics.median(servers),
                    "server_p95_ms": servers[int(0.95 * (len(servers) - 1))],
                    "client_p50_ms": statistics.median(clients),
                    "client_p95_ms": clients[int(0.95 * (len(clients) - 1))],
                    "kib": samples[-1][2] / 1024,
                }
            tg.cancel_scope.cancel()
    return rows


async def _serve_node(
    settings: Any, name: str, tools: list[Any], *, task_status: Any = anyio.TASK_STATUS_IGNORED
) -> None:
    async with running_node(settings, name=name, sources=tools):
        task_status.started()
        await anyio.sleep_forever()


def _ms(value: float, width: int) -> str:
    # pages without a Server-Timing header (the tool page) have no server figure
    return f"{'-':>{width}}" if math.isnan(value) else f"{value:{width}.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=5000)
    parser.add_argument("--nodes", type=int, default=5)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    large = anyio.run(measure, options.tools, options.nodes, options.requests)
    small = anyio.run(measure, 50, 1, options.requests)
    if options.json:
        print(json.dumps({"tools": options.tools, "large": large, "small": small}, indent=2))
        return
    print(
        f"{'page':24} {'server p50 ms':>14} {'p95':>7} {'client p50 ms':>14} {'p95':>7} {'KiB':>6}"
        f"   {'50 tools: server p50':>20} {'ratio':>6}"
    )
    for name, row in large.items():
        base = small[name]
        ratio = row["server_p50_ms"] / base["server_p50_ms"] if base["server_p50_ms"] else float("nan")
        print(
            f"{name:24} {_ms(row['server_p50_ms'], 14)} {_ms(row['server_p95_ms'], 7)}"
            f" {_ms(row['client_p50_ms'], 14)} {_ms(row['client_p95_ms'], 7)} {row['kib']:6.0f}"
            f"   {_ms(base['server_p50_ms'], 20)}"
            f" {_ms(ratio, 6)}{'' if math.isnan(ratio) else 'x'}"
        )
    print(f"target: the catalog page with {options.tools} tools in at most 200 ms of server time")


if __name__ == "__main__":
    main()
