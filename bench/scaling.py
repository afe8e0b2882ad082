"""Scaling: 1, 2 and 4 node processes for a CPU-bound and an I/O-bound tool; durable vs fast latency.

One nats-server; for each node count, that many ``toolmesh up`` processes
serve ``bench/scaling_tools.py`` under a prefix of their own, and one client
process measures, in one run:

* CPU-bound throughput: ``spin`` (about 25 ms of pure Python per call) with
  4 calls in flight per node, fast path and durable path;
* I/O-bound throughput: ``pause(0.05)``; each node admits at most
  ``--io-slots`` calls (``--max-concurrency``) and the client keeps that many
  in flight per node, retrying ``unavailable`` answers after their hint;
* latency: p50/p99 of sequential calls of ``pause(0)``, fast vs durable;
* the machine's own ceiling, right after each row: as many plain Python
  processes spinning at once against one, without toolmesh.

    python bench/scaling.py [--nodes 1 2 4] [--seconds 3] [--plot docs/scaling.png] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
from toolmesh._config import Settings
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh._transport.mesh import Mesh

ROOT = Path(__file__).resolve().parent.parent
TOOLS = str(ROOT / "bench" / "scaling_tools.py")
SPIN_N = 600_000
"""Iterations of the CPU-bound tool: about 25 ms of pure Python, so per-call overhead is small."""


def start_nodes(count: int, url: str, prefix: str, io_slots: int) -> list[subprocess.Popen[str]]:
    """``count`` node processes, returned once every one printed its ready line."""
    env = {**os.environ, "TOOLMESH_PLUGINS": "python", "TOOLMESH_EVENTS": "false"}
    nodes = [
        subprocess.Popen(
            [sys.executable, "-m", "toolmesh", "up", TOOLS, "--nats", url, "--prefix", prefix,
             "--max-concurrency", str(io_slots), "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=env,
        )
        for _ in range(count)
    ]
    for node in nodes:
        assert node.stdout is not None
        while json.loads(node.stdout.readline() or '{"event": "exited"}')["event"] not in ("ready", "exited"):
            pass
    return nodes


_BARE_SPIN = """
import sys, time
n, end, count = int(sys.argv[1]), time.monotonic() + float(sys.argv[2]), 0
while time.monotonic() < end:
    total = 0
    for i in range(n):
        total += i * i
    count += 1
print(count)
"""


def bare_spins(processes: int, seconds: float) -> int:
    """Spins of ``SPIN_N`` done in ``seconds`` by ``processes`` plain Python processes running at once."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _BARE_SPIN, str(SPIN_N), str(seconds)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(processes)
    ]
    return sum(int(child.communicate()[0]) for child in children)


def machine_ceiling(processes: int, seconds: float) -> float:
    """What ``processes`` CPU-bound processes reach against one on this machine, right now, without toolmesh.

    The CPU-bound rows are read against it: a 2-core virtual machine rarely
    gives two busy processes twice the work of one.
    """
    one = bare_spins(1, seconds)
    return bare_spins(processes, seconds) / one if one else float("nan")


def stop_nodes(nodes: list[subprocess.Popen[str]]) -> None:
    """SIGTERM every node and wait for it."""
    for node in nodes:
        node.terminate()
    for node in nodes:
        node.wait(30)


async def closed_loop(mesh: Mesh, tool: str, arguments: dict[str, Any], in_flight: int, seconds: float,
                      durable: bool = False) -> tuple[float, int]:
    """Successful calls per second with ``in_flight`` callers for ``seconds``; and the refusals seen."""
    done = refused = 0
    stop = time.monotonic() + seconds

    async def caller() -> None:
        nonlocal done, refused
        while time.monotonic() < stop:
            result = await mesh.call(tool, arguments, durable=durable)
            if not result.is_error:
                done += 1
            elif result.error.code.value == "unavailable":
                refused += 1
                await anyio.sleep((result.error.details or {}).get("retry_after", 0.05))
            else:
                raise RuntimeError(f"{tool} failed: {result.error}")

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        for _ in range(in_flight):
            tg.start_soon(caller)
    return done / (time.monotonic() - started), refused


async def latency(mesh: Mesh, calls: int, durable: bool) -> tuple[float, float]:
    """p50 and p99 in milliseconds of ``calls`` sequential trivial calls."""
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await mesh.call("pause", {"seconds": 0}, durable=durable)
        samples.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result.error
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


async def measure(url: str, count: int, seconds: float, io_slots: int, latency_calls: int) -> dict[str, Any]:
    """Every figure for one node count."""
    prefix = f"s{uuid.uuid4().hex[:8]}"
    nodes = await anyio.to_thread.run_sync(start_nodes, count, url, prefix, io_slots)
    try:
        async with Mesh(settings=Settings(nats_url=url, prefix=prefix, default_timeout=30)) as mesh:
            for durable in (False, True):  # warm up both paths (consumer creation, imports)
                await mesh.call("pause", {"seconds": 0}, durable=durable)
                await mesh.call("spin", {"n": 10}, durable=durable)
            cpu_fast, _ = await closed_loop(mesh, "spin", {"n": SPIN_N}, 4 * count, seconds)
            cpu_durable, _ = await closed_loop(mesh, "spin", {"n": SPIN_N}, 4 * count, seconds, durable=True)
            io_fast, io_refused = await closed_loop(mesh, "pause", {"seconds": 0.05}, io_slots * count, seconds)
            fast_p50, fast_p99 = await latency(mesh, latency_calls, durable=False)
            durable_p50, durable_p99 = await latency(mesh, latency_calls, durable=True)
    finally:
        await anyio.to_thread.run_sync(stop_nodes, nodes)
    ceiling = await anyio.to_thread.run_sync(machine_ceiling, count, seconds) if count > 1 else 1.0
    return {
        "nodes": count,
        "bare_python_ceiling": round(ceiling, 2),
        "cpu_fast_per_s": round(cpu_fast, 1),
        "cpu_durable_per_s": round(cpu_durable, 1),
        "io_fast_per_s": round(io_fast, 1),
        "io_refused": io_refused,
        "fast_p50_ms": round(fast_p50, 3),
        "fast_p99_ms": round(fast_p99, 3),
        "durable_p50_ms": round(durable_p50, 3),
        "durable_p99_ms": round(durable_p99, 3),
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table, throughput also relative to one node."""
    base = rows[0]
    lines = [
        (
            "| nodes | CPU-bound fast calls/s (× 1 node) | bare Python processes (× 1) | CPU-bound durable calls/s"
            " | I/O-bound calls/s (× 1 node) | fast p50 / p99 ms | durable p50 / p99 ms | durable ÷ fast p50 |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['nodes']} | {row['cpu_fast_per_s']:.0f} ({row['cpu_fast_per_s'] / base['cpu_fast_per_s']:.2f}×)"
            f" | {row['bare_python_ceiling']:.2f}×"
            f" | {row['cpu_durable_per_s']:.0f}"
            f" | {row['io_fast_per_s']:.0f} ({row['io_fast_per_s'] / base['io_fast_per_s']:.2f}×)"
            f" | {row['fast_p50_ms']:.2f} / {row['fast_p99_ms']:.2f}"
            f" | {row['durable_p50_ms']:.2f} / {row['durable_p99_ms']:.2f}"
            f" | {row['durable_p50_ms'] / row['fast_p50_ms']:.2f}× |"
        )
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Throughput relative to one node (left) and p50 latency (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nodes = [row["nodes"] for row in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for key, label in (("cpu_fast_per_s", "CPU-bound, fast"), ("cpu_durable_per_s", "CPU-bound, durable"),
                       ("io_fast_per_s", "I/O-bound, fast")):
        left.plot(nodes, [row[key] / rows[0][key] for row in rows], marker="o", label=label)
    left.plot(nodes, nodes, linestyle=":", color="grey", label="linear")
    left.set(xlabel="node processes", ylabel="throughput ÷ 1 node", title="Scaling (2-core machine)", xticks=nodes)
    left.legend()
    width = 0.35
    positions = range(len(nodes))
    right.bar([p - width / 2 for p in positions], [row["fast_p50_ms"] for row in rows], width, label="fast")
    right.bar([p + width / 2 for p in positions], [row["durable_p50_ms"] for row in rows], width, label="durable")
    right.set(xlabel="node processes", ylabel="p50 ms (trivial tool)", title="Latency: fast vs durable",
              xticks=list(positions), xticklabels=[str(n) for n in nodes])
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


async def main(args: argparse.Namespace) -> None:
    """Run every node count on one broker and report."""
    rows = []
    with EmbeddedBroker(0) as broker:
        for count in args.nodes:
            rows.append(await measure(broker.url, count, args.seconds, args.io_slots, args.latency_calls))
            print(json.dumps(rows[-1]), flush=True)
    print(table(rows))
    if args.plot:
        plot(rows, Path(args.plot))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each throughput run")
    parser.add_argument("--io-slots", type=int, default=16, help="calls one node admits at once")
    parser.add_argument("--latency-calls", type=int, default=500)
    parser.add_argument("--plot", help="write the plot here (PNG)")
    parser.add_argument("--json", help="write the rows here")
    anyio.run(main, parser.parse_args(), backend_options={"use_uvloop": True})
