"""``toolmesh bench``: measure a mesh on this machine and write a Markdown report with plots.

Everything is measured in one run against one broker, side by side with a raw
nats.py request-reply echo as the baseline, so the report's ratios hold even
on a noisy machine.  Plots need matplotlib (``pip install 'toolmesh[bench]'``).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import nats
from toolmesh._cli.bench_scripts import ScriptRun, script_section
from toolmesh._cli.top import percentile
from toolmesh._config import Settings
from toolmesh._pipeline.tool_function import tool
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh._transport.mesh import Mesh

__all__ = ["BenchResults", "bench_echo", "latencies", "run_suite", "throughput", "write_report"]


@tool
async def bench_echo(message: str) -> str:
    """Return the message (the benchmark's trivial tool)."""
    return message


Call = Callable[[], Awaitable[object]]
Progress = Callable[[str, int], None]


async def latencies(call: Call, n: int, advance: Callable[[], None] = lambda: None) -> list[float]:
    """Latency in microseconds of ``n`` sequential calls."""
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1e6)
        advance()
    return samples


async def throughput(call: Call, n: int, concurrency: int) -> float:
    """Calls per second with ``concurrency`` calls in flight (``n`` calls in all)."""
    per_worker = max(1, n // concurrency)

    async def worker() -> None:
        for _ in range(per_worker):
            await call()

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return per_worker * concurrency / (time.perf_counter() - started)


@dataclass
class BenchResults:
    """Everything the report shows."""

    calls: int
    latency_us: dict[str, list[float]] = field(default_factory=dict)
    throughput_by_concurrency: dict[str, dict[int, float]] = field(default_factory=dict)
    scaling: dict[int, float] = field(default_factory=dict)

    def summary(self) -> dict[str, dict[str, float]]:
        """p50/p99 per series, in microseconds."""
        result = {}
        for name, samples in self.latency_us.items():
            ordered = sorted(samples)
            result[name] = {"p50_us": statistics.median(ordered), "p99_us": percentile(ordered, 0.99)}
        return result


def _start_nodes(count: int, url: str, prefix: str) -> list[subprocess.Popen[str]]:
    processes = []
    for _ in range(count):
        process = subprocess.Popen(
            [sys.executable, "-m", "toolmesh", "up", "toolmesh._cli.benchmark:bench_echo", "--nats", url,
             "--prefix", prefix, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        assert process.stdout is not None
        json.loads(process.stdout.readline())  # the "ready" line
        processes.append(process)
    return processes


async def run_suite(*, quick: bool = False, progress: Progress | None = None) -> BenchResults:
    """Measure raw echo vs ``Mesh.call``: latency, throughput vs concurrency, scaling over node processes."""
    calls = 300 if quick else 3000
    concurrencies = [1, 8, 64] if quick else [1, 4, 16, 64, 128]
    node_counts = [1, 2] if quick else [1, 2, 4]
    report = progress or (lambda task, amount: None)
    results = BenchResults(calls=calls)
    with EmbeddedBroker(0) as broker:
        raw = await nats.connect(broker.url)

        async def respond(msg: Any) -> None:
            await msg.respond(msg.data)

        await raw.subscribe("bench.raw.echo", queue="q", cb=respond)
        body = json.dumps({"id": "x" * 22, "tool": "bench_echo", "arguments": {"message": "hello"}}).encode()
        settings = Settings(nats_url=broker.url, prefix="bench")
        nodes = await anyio.to_thread.run_sync(_start_nodes, 1, broker.url, "bench")
        try:
            async with Mesh(settings=settings) as mesh:
                series: dict[str, Call] = {
                    "raw nats echo": lambda: raw.request("bench.raw.echo", body, timeout=10),
                    "Mesh.call": lambda: mesh.call("bench_echo", {"message": "hello"}),
                }
                for name, call in series.items():
                    await latencies(call, 50)
                    results.latency_us[name] = await latencies(call, calls, lambda: report("latency", 1))
                    results.throughput_by_concurrency[name] = {}
                    for concurrency in concurrencies:
                        rate = await throughput(call, calls * 2, concurrency)
                        results.throughput_by_concurrency[name][concurrency] = rate
                        report("throughput", 1)
                for count in node_counts:
                    extra = count - len(nodes)
                    if extra > 0:
                        nodes += await anyio.to_thread.run_sync(_start_nodes, extra, broker.url, "bench")
                    results.scaling[count] = await throughput(series["Mesh.call"], calls * 2, 64)
                    report("scaling", 1)
        finally:
            for process in nodes:
                process.terminate()
            for process in nodes:
                await anyio.to_thread.run_sync(process.wait)
            await raw.close()
    return results


def steps(quick: bool) -> dict[str, int]:
    """How many progress steps each phase of :func:`run_suite` reports."""
    calls = 300 if quick else 3000
    return {"latency": 2 * calls, "throughput": 2 * (3 if quick else 5), "scaling": 2 if quick else 3}


def write_report(results: BenchResults, folder: Path, scripts: Sequence[ScriptRun] = ()) -> Path:
    """Write ``report.md`` and its PNG plots into ``folder`` (a section per bench script run); returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    summary = results.summary()
    base = summary["raw nats echo"]

    def plot(filename: str, title: str, xlabel: str, ylabel: str, draw: Callable[[Any], None]) -> None:
        figure, axes = plt.subplots(figsize=(7, 4))
        draw(axes)
        axes.set(title=title, xlabel=xlabel, ylabel=ylabel)
        if axes.get_legend_handles_labels()[0]:
            axes.legend()
        figure.savefig(folder / filename, dpi=100, bbox_inches="tight")
        plt.close(figure)

    def latency_histogram(axes: Any) -> None:
        for name, samples in results.latency_us.items():
            axes.hist(samples, bins=60, alpha=0.6, label=name)

    def throughput_lines(axes: Any) -> None:
        for name, rates in results.throughput_by_concurrency.items():
            axes.plot(list(rates), list(rates.values()), marker="o", label=name)
        axes.set_xscale("log", base=2)

    def scaling_bars(axes: Any) -> None:
        axes.bar([str(count) for count in results.scaling], list(results.scaling.values()))

    plot("latency.png", "Sequential call latency", "latency (µs)", "calls", latency_histogram)
    plot("throughput.png", "Throughput vs concurrency", "calls in flight", "calls / s", throughput_lines)
    plot("scaling.png", "Scaling over nodes", "node processes", "calls / s (64 in flight)", scaling_bars)

    lines = [
        "# toolmesh benchmark",
        "",
        f"{results.calls} sequential calls per series; one broker, measured side by side in one run.",
        "",
        "| series | p50 µs | p99 µs | p50 × raw |",
        "|---|---:|---:|---:|",
    ]
    for name, row in summary.items():
        lines.append(f"| {name} | {row['p50_us']:.0f} | {row['p99_us']:.0f} | {row['p50_us'] / base['p50_us']:.2f} |")
    lines += ["", "![latency](latency.png)", "", "| calls in flight | " + " | ".join(results.throughput_by_concurrency) + " |",
              "|---:|" + "---:|" * len(results.throughput_by_concurrency)]
    concurrencies = next(iter(results.throughput_by_concurrency.values()))
    for concurrency in concurrencies:
        cells = [f"{rates[concurrency]:.0f}" for rates in results.throughput_by_concurrency.values()]
        lines.append(f"| {concurrency} | " + " | ".join(cells) + " |")
    lines += ["", "![throughput](throughput.png)", "", "| node processes | calls/s |", "|---:|---:|"]
    lines += [f"| {count} | {rate:.0f} |" for count, rate in results.scaling.items()]
    lines += ["", "![scaling](scaling.png)", ""]
    for run in scripts:
        lines += script_section(run)
    path = folder / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
