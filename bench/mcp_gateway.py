"""Tool-call latency and throughput over Streamable HTTP on loopback, side by side.

(a) the SDK's ``MCPServer`` serving an ``add`` tool directly;
(b) ``toolmesh mcp serve --http`` serving the same tool from a node behind NATS.
Plus ``tools/list`` time (all pages) for a 5,000-tool catalog through the gateway.

Run: ``.venv/bin/python bench/mcp_gateway.py [--calls 2000] [--concurrency 16] [--rounds 5]``.
(a) and (b) run side by side: both servers stay up and are measured in
alternating rounds; the reported ratios are the medians of each round's ratio.
Targets: (b) >= 80 % of (a)'s throughput, p50 within 1.3x; tools/list <= 100 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import anyio
import httpx2
import mcp_types as types
import toolmesh
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from toolmesh import CallContext
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh.contracts import ToolSpec
from toolmesh.testing import test_settings

ROOT = Path(__file__).resolve().parent.parent

DIRECT_SERVER = """
import sys
from mcp.server.mcpserver import MCPServer
server = MCPServer("bench")

@server.tool()
def add(a: int, b: int) -> int:
    "Add two integers."
    return a + b

server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
"""


class BenchTools:
    """``add`` plus ``extra`` filler tools, without depending on another plugin."""

    def __init__(self, extra: int = 0) -> None:
        schema = {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }
        self.specs = [
            ToolSpec(
                name="add",
                description="Add two integers.",
                input_schema=schema,
                output_schema={"type": "integer"},
                source="bench",
            )
        ]
        self.specs += [
            ToolSpec(
                name=f"tool_{index:05d}",
                description=f"Filler tool {index}.",
                input_schema=schema,
                source="bench",
            )
            for index in range(extra)
        ]

    @toolmesh.hookimpl
    def toolmesh_discover_tools(self, kernel: toolmesh.Kernel, sources: list[str]) -> list[ToolSpec]:
        return self.specs

    @toolmesh.hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
        if spec.source != "bench":
            return None
        return arguments["a"] + arguments["b"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection in this (client) process while a listing is timed.

    Each listing leaves thousands of dicts behind, so every third one or so
    triggered a full collection of the client's own heap, about 90 ms, which
    was then counted as the gateway's time (``timeit`` pauses it for the same reason).
    """
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(port)


async def measure(url: str, calls: int, concurrency: int) -> dict[str, float]:
    """p50/p99 of sequential calls, then throughput with ``concurrency`` callers on one session."""
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=300.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for _ in range(50):
            await session.call_tool("add", {"a": 1, "b": 2})
        latencies = []
        for index in range(calls // 2):
            started = time.perf_counter()
            result = await session.call_tool("add", {"a": index, "b": 1})
            latencies.append(time.perf_counter() - started)
            assert not result.is_error
        latencies.sort()
        remaining = calls

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await session.call_tool("add", {"a": 1, "b": 2})

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(worker)
        elapsed = time.perf_counter() - started
    return {
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000,
        "calls_per_s": calls / elapsed,
    }


async def list_all(url: str) -> tuple[int, float]:
    async with (
        httpx2.AsyncClient(timeout=30.0) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        with gc_paused():
            started = time.perf_counter()
            count, cursor = 0, None
            while True:
                page = await session.list_tools(
                    params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                count += len(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return count, (time.perf_counter() - started) * 1000


NODE_SCRIPT = """
import sys, anyio
sys.path.insert(0, sys.argv[1])
from mcp_gateway import BenchTools
from toolmesh.testing import running_node, test_settings

async def serve():
    settings = test_settings(sys.argv[2], prefix=sys.argv[3], heartbeat=1.0, catalog_ttl=5.0, max_payload=8 << 20)
    async with running_node(settings, plugins=[BenchTools(int(sys.argv[4]))], load_entrypoints=False):
        print("ready", flush=True)
        await anyio.sleep_forever()

anyio.run(serve, backend_options={"use_uvloop": True})
"""


class NodeProcess:
    """A node serving ``BenchTools`` in its own process, as in a real deployment."""

    def __init__(self, settings: Any, extra: int = 0) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                NODE_SCRIPT,
                str(Path(__file__).parent),
                settings.nats_url,
                settings.prefix,
                str(extra),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def __enter__(self) -> Self:
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.process.terminate()
        self.process.wait()


async def raw_list_all(url: str) -> tuple[int, float]:
    """The same listing with a plain JSON-RPC client: the gateway's own cost, without SDK client validation."""
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
    }
    async with httpx2.AsyncClient(timeout=30.0) as http:

        async def rpc(message: dict[str, Any]) -> dict[str, Any]:
            response = await http.post(url, content=json.dumps(message), headers=headers)
            headers.setdefault("mcp-session-id", response.headers.get("mcp-session-id", ""))
            for line in response.text.splitlines():
                if line.startswith("data:") and line[5:].strip():
                    return json.loads(line[5:])
            return response.json() if response.content else {}

        await rpc(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"},
                },
            }
        )
        await http.post(
            url,
            content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            headers=headers,
        )
        await rpc({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        with gc_paused():
            started = time.perf_counter()
            count, cursor = 0, None
            while True:
                page = (
                    await rpc(
                        {
                            "jsonrpc": "2.0",
                            "id": 2,
                            "method": "tools/list",
                            "params": {"cursor": cursor} if cursor else {},
                        }
                    )
                )["result"]
                count += len(page["tools"])
                cursor = page.get("nextCursor")
                if not cursor:
                    return count, (time.perf_counter() - started) * 1000


def gateway(settings: Any, port: int, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolmesh.plugins.mcp",
            "serve",
            "--http",
            f"127.0.0.1:{port}",
            "--nats",
            settings.nats_url,
            "--prefix",
            settings.prefix,
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


async def compare_calls(
    direct_url: str, gateway_url: str, calls: int, concurrency: int, rounds: int
) -> dict[str, Any]:
    """Measure (a) and (b) in alternating order, ``rounds`` times, and take the median of each round's ratio.

    On a shared machine the load of other processes drifts within seconds; a
    ratio of two runs taken back to back cancels most of that drift.
    """
    per_round = []
    for index in range(rounds):
        order = [("direct", direct_url), ("gateway", gateway_url)]
        if index % 2:
            order.reverse()  # neither side always runs first
        measured = {label: await measure(url, calls, concurrency) for label, url in order}
        per_round.append(
            {
                **{
                    f"{label}_{key}": round(value, 2)
                    for label, row in measured.items()
                    for key, value in row.items()
                },
                "throughput_ratio": round(
                    measured["gateway"]["calls_per_s"] / measured["direct"]["calls_per_s"], 3
                ),
                "p50_ratio": round(measured["gateway"]["p50_ms"] / measured["direct"]["p50_ms"], 3),
            }
        )
    return {
        "rounds": per_round,
        "throughput_ratio": _median([row["throughput_ratio"] for row in per_round]),
        "p50_ratio": _median([row["p50_ratio"] for row in per_round]),
        "direct_p50_ms": _median([row["direct_p50_ms"] for row in per_round]),
        "gateway_p50_ms": _median([row["gateway_p50_ms"] for row in per_round]),
        "direct_calls_per_s": _median([row["direct_calls_per_s"] for row in per_round]),
        "gateway_calls_per_s": _median([row["gateway_calls_per_s"] for row in per_round]),
    }


async def main(calls: int, concurrency: int, page_size: int, rounds: int) -> dict[str, Any]:
    report: dict[str, Any] = {"calls": calls, "concurrency": concurrency, "page_size": page_size}
    direct_port = free_port()
    direct = await anyio.open_process(
        [sys.executable, "-c", DIRECT_SERVER, str(direct_port)],
        stdin=None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with EmbeddedBroker(0) as broker:
            settings = test_settings(broker.url, heartbeat=1.0, catalog_ttl=5.0)
            with NodeProcess(settings):
                port = free_port()
                process = gateway(settings, port)
                try:
                    wait_for(direct_port)
                    wait_for(port)
                    report.update(
                        await compare_calls(
                            f"http://127.0.0.1:{direct_port}/mcp",
                            f"http://127.0.0.1:{port}/mcp",
                            calls,
                            concurrency,
                            rounds,
                        )
                    )
                finally:
                    process.terminate()
                    process.wait()

            big = test_settings(broker.url, heartbeat=1.0, catalog_ttl=5.0, max_payload=8 * 1024 * 1024)
            with NodeProcess(big, extra=4999):
                port = free_port()
                process = gateway(big, port, "--page-size", str(page_size))
                try:
                    wait_for(port)
                    listings = []
                    for _ in range(5):
                        count, elapsed = await list_all(f"http://127.0.0.1:{port}/mcp")
                        raw_count, raw = await raw_list_all(f"http://127.0.0.1:{port}/mcp")
                        assert raw_count == count == 5000, (raw_count, count)
                        listings.append((elapsed, raw))
                    report["tools_list"] = {
                        "tools": 5000,
                        "plain_client_ms": round(_median([raw for _, raw in listings]), 1),
                        "sdk_client_ms": round(_median([sdk for sdk, _ in listings]), 1),
                    }
                finally:
                    process.terminate()
                    process.wait()
    finally:
        direct.terminate()
        await direct.wait()
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--page-size", type=int, default=1000, help="tools/list page size of the gateway")
    parser.add_argument(
        "--rounds", type=int, default=5, help="alternating (a)/(b) rounds; ratios are medians"
    )
    options = parser.parse_args()
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    report = anyio.run(main, options.calls, options.concurrency, options.page_size, options.rounds)
    print(json.dumps(report, indent=2))
