"""Rune tools on the mesh: call throughput against the same tool in Python, and hot-reload latency.

1. Throughput: one node serves ``rune_echo`` (a sync Rune tool: once it has
   proved quick it is tried on the event loop with a tiny instruction budget,
   see plugins/rune/executor.py), ``rune_echo_thread`` (the same as an async
   Rune tool, which always runs in a worker thread), and the same tool in
   Python: ``echo_sync`` (a worker thread) and ``echo_async`` (the event loop).
   A client calls each with ``--concurrency`` calls in flight; rounds are
   interleaved; the table shows median rates and, per Python tool, the median
   of the per-round ratios Rune / Python.  Target: Rune ≥ 80 % of Python.
2. Reload latency: ``toolmesh up DIR`` in a separate process; this process
   rewrites a ``.rn`` file and calls the tool until the new version answers.
   Target: p50 ≤ 500 ms.

    python bench/rune_tool_calls.py [--calls 2000] [--concurrency 32] [--rounds 5] [--reloads 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio
import toolmesh
import toolmesh.plugins.rune as rune_plugin
from toolmesh._config import Settings
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh._transport.mesh import Mesh
from toolmesh.testing import running_node

ROOT = Path(__file__).resolve().parent.parent

RUNE_ECHO = """\
#[param(name = "message", type = "string", desc = "what to return")]
#[tool(desc = "Return the message")]
pub fn echo(message) { message }

#[param(name = "message", type = "string", desc = "what to return")]
#[tool(desc = "Return the message (async: always in a worker thread)")]
pub async fn echo_thread(message) { message }
"""


@toolmesh.tool
def echo_sync(message: str) -> str:
    """Return the message (sync: a worker thread, like a Rune script)."""
    return message


@toolmesh.tool
async def echo_async(message: str) -> str:
    """Return the message (async: on the event loop)."""
    return message


async def throughput(mesh: Mesh, tool: str, n: int, concurrency: int) -> float:
    """Calls per second of ``tool`` with ``concurrency`` calls in flight."""
    per_worker = n // concurrency

    async def worker() -> None:
        for _ in range(per_worker):
            result = await mesh.call(tool, {"message": "hello"})
            assert result.structured_content == "hello", result

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return per_worker * concurrency / (time.perf_counter() - started)


async def measure_throughput(calls: int, concurrency: int, rounds: int) -> dict[str, list[float]]:
    with EmbeddedBroker(0) as broker, tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "echo.rn").write_text(RUNE_ECHO)
        settings = Settings(nats_url=broker.url, prefix="bench", events=True)
        async with (
            running_node(settings, sources=[echo_sync, echo_async, folder]) as node,
            Mesh(settings=settings) as mesh,
        ):
            tools = ("rune_echo", "rune_echo_thread", "echo_sync", "echo_async")
            for tool in tools:
                await throughput(mesh, tool, 500, concurrency)  # warm-up
            samples: dict[str, list[float]] = {tool: [] for tool in tools}
            for _ in range(rounds):  # interleaved, so drift on the machine hits every series alike
                for tool in tools:
                    samples[tool].append(await throughput(mesh, tool, calls, concurrency))
            # how often the sync tool had to leave the event loop (see plugins/rune/executor.py)
            entry = rune_plugin.catalog_of(node.kernel).tools["rune_echo"]
            print(f"rune_echo after the runs: inline={entry.inline}, setbacks={entry.setbacks}")
    return samples


def ratio(samples: dict[str, list[float]], tool: str, other: str) -> float:
    """Median over rounds of ``tool``'s rate as a share of ``other``'s, measured in the same round
    (a round's neighbours share the machine's load of the moment, so their ratio is steadier)."""
    return statistics.median(a / b for a, b in zip(samples[tool], samples[other], strict=True))


async def reload_latencies(url: str, prefix: str, tool_file: Path, source: str, reloads: int) -> list[float]:
    """Milliseconds from writing a new version of the file to its first answer through the mesh."""
    latencies: list[float] = []
    async with Mesh(settings=Settings(nats_url=url, prefix=prefix)) as mesh:
        for version in range(1, reloads + 1):
            await anyio.sleep(0.3)  # let the watcher settle: each write is its own change
            started = time.perf_counter()
            tool_file.write_text(source.format(version))
            while (await mesh.call("rune_version")).structured_content != version:
                if time.perf_counter() - started > 10:
                    raise TimeoutError(f"version {version} never became callable")
                await anyio.sleep(0.005)
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def measure_reload(reloads: int) -> list[float]:
    """Serve a folder with ``toolmesh up`` in a child process and time ``reloads`` edits of its file."""
    with EmbeddedBroker(0) as broker, tempfile.TemporaryDirectory() as folder:
        tool_file = Path(folder) / "versioned.rn"
        source = '#[tool(desc = "which version")]\npub fn version() {{ {} }}\n'
        tool_file.write_text(source.format(0))
        prefix = f"b{uuid.uuid4().hex[:8]}"
        node = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolmesh",
                "up",
                folder,
                "--nats",
                broker.url,
                "--prefix",
                prefix,
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
        )
        try:
            ready = json.loads(node.stdout.readline())  # type: ignore[union-attr]
            assert "rune_version" in ready["tools"], ready
            return anyio.run(reload_latencies, broker.url, prefix, tool_file, source, reloads)
        finally:
            node.terminate()
            node.communicate(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; the table shows medians")
    parser.add_argument("--reloads", type=int, default=20)
    args = parser.parse_args()
    samples = anyio.run(
        measure_throughput, args.calls, args.concurrency, args.rounds, backend_options={"use_uvloop": True}
    )
    print(
        f"{args.rounds} rounds of {args.calls} calls, {args.concurrency} in flight; medians over the rounds"
    )
    print(f"{'tool':28} {'calls/s':>9} {'Rune as % of it':>16}")
    labels = {
        "rune_echo": "Rune",
        "rune_echo_thread": "Rune, always in a thread",
        "echo_sync": "Python sync (worker thread)",
        "echo_async": "Python async (event loop)",
    }
    for tool, rates in samples.items():
        share = 100 * ratio(samples, "rune_echo", tool)
        print(f"{labels[tool]:28} {statistics.median(rates):9.0f} {share:15.0f}%")
    latencies = sorted(measure_reload(args.reloads))
    p50 = statistics.median(latencies)
    p90 = latencies[max(0, int(len(latencies) * 0.9) - 1)]
    print(
        f"reload: file write → new version callable from another process, {len(latencies)} reloads:"
        f" p50 {p50:.0f} ms, p90 {p90:.0f} ms, max {latencies[-1]:.0f} ms (target p50 ≤ 500 ms)"
    )


if __name__ == "__main__":
    main()
