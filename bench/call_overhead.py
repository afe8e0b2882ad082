"""Call overhead: raw nats.py request-reply echo vs ``Mesh.call`` of a trivial tool, in one run.

Everything runs on one broker and one event loop, side by side, so the ratios
measure what toolmesh adds per call (decode, pipeline, validation, events,
encode).  Also times ``toolmesh up`` until ready, embedded broker included.

    python bench/call_overhead.py [--calls 3000] [--concurrency 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import nats
import toolmesh
from toolmesh._config import Settings
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh._transport.mesh import Mesh
from toolmesh.testing import running_node

ROOT = Path(__file__).resolve().parent.parent


@toolmesh.tool
async def echo(message: str) -> str:
    """Return the message (async: runs on the event loop)."""
    return message


@toolmesh.tool
def echo_sync(message: str) -> str:
    """Return the message (sync: runs in a worker thread)."""
    return message


Call = Callable[[int], Awaitable[object]]


async def sequential(call: Call, n: int) -> tuple[float, float]:
    """p50 and p99 latency in microseconds of ``n`` calls one after another."""
    latencies = []
    for i in range(n):
        started = time.perf_counter()
        await call(i)
        latencies.append((time.perf_counter() - started) * 1e6)
    latencies.sort()
    return statistics.median(latencies), latencies[int(len(latencies) * 0.99) - 1]


async def throughput(call: Call, n: int, concurrency: int) -> float:
    """Calls per second with ``concurrency`` calls in flight."""
    per_worker = n // concurrency

    async def worker(offset: int) -> None:
        for i in range(per_worker):
            await call(offset + i)

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for k in range(concurrency):
            tg.start_soon(worker, k * per_worker)
    return per_worker * concurrency / (time.perf_counter() - started)


async def measure(calls: int, concurrency: int, rounds: int) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    with EmbeddedBroker(0) as broker:
        raw = await nats.connect(broker.url)

        async def respond(msg: nats.aio.msg.Msg) -> None:
            await msg.respond(msg.data)

        await raw.subscribe("bench.echo", queue="q", cb=respond)
        payload = json.dumps({"id": "x" * 22, "tool": "echo", "arguments": {"message": "hello"}}).encode()

        async def raw_call(i: int) -> object:
            return await raw.request("bench.echo", payload, timeout=10)

        from nats.micro import add_service

        service = await add_service(raw, name="bench", version="0.0.1")
        async def micro_handler(request) -> None:
            await request.respond(request.data)

        await service.add_endpoint(name="echo", subject="bench.micro", handler=micro_handler)

        async def micro_call(i: int) -> object:
            return await raw.request("bench.micro", payload, timeout=10)

        settings = Settings(nats_url=broker.url, prefix="bench", events=True)
        async with (
            running_node(settings, sources=[echo, echo_sync], load_entrypoints=True),
            Mesh(settings=settings) as mesh,
        ):

            async def mesh_call(i: int) -> object:
                return await mesh.call("echo", {"message": "hello"})

            async def mesh_sync_call(i: int) -> object:
                return await mesh.call("echo_sync", {"message": "hello"})

            series = [
                ("raw nats echo", raw_call),
                ("nats.micro echo", micro_call),
                ("Mesh.call async tool", mesh_call),
                ("Mesh.call sync tool", mesh_sync_call),
            ]
            for _, call in series:
                await sequential(call, 200)  # warm-up
            samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in series}
            for _ in range(rounds):  # interleaved, so drift on the machine hits every series alike
                for name, call in series:
                    p50, p99 = await sequential(call, calls)
                    samples[name].append((p50, p99, await throughput(call, calls * 2, concurrency)))
            for name, measured in samples.items():
                rows[name] = {
                    key: statistics.median(values)
                    for key, values in zip(("p50_us", "p99_us", "calls_per_s"), zip(*measured))
                }
        await service.stop()
        await raw.close()
    return rows


def startup_time() -> dict[str, float]:
    """Seconds from spawning 'toolmesh up examples/' (embedded broker) to its ready line."""
    from tests.processes import free_port

    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolmesh", "up", "examples/", "--port", str(free_port()), "--json"],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    ready = json.loads(process.stdout.readline())
    wall = time.perf_counter() - started
    process.terminate()
    process.communicate(timeout=20)
    return {"process_to_ready_s": wall, "in_process_ready_s": ready["startup_ms"] / 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the table shows medians")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    rows = anyio.run(measure, args.calls, args.concurrency, args.rounds, backend_options={"use_uvloop": True})
    base = rows["raw nats echo"]
    print(f"{'':24} {'p50 µs':>9} {'p99 µs':>9} {'calls/s':>9} {'p50 ×raw':>9} {'thru %raw':>9}")
    for name, row in rows.items():
        print(
            f"{name:24} {row['p50_us']:9.0f} {row['p99_us']:9.0f} {row['calls_per_s']:9.0f}"
            f" {row['p50_us'] / base['p50_us']:9.2f} {100 * row['calls_per_s'] / base['calls_per_s']:8.0f}%"
        )
    startup = startup_time()
    print(f"toolmesh up → ready: {startup['process_to_ready_s']:.2f} s from process spawn,"
          f" {startup['in_process_ready_s']:.2f} s after imports")


if __name__ == "__main__":
    main()
