"""Tracing overhead: calls/s with the OpenTelemetry SDK exporting vs not configured, in one run.

Each configuration runs in a child process (a process can install only one
tracer provider) measuring in-process ``Mesh.call`` throughput of a trivial
tool with 64 calls in flight, client and node in the same process, so every
span of a call (CLIENT and SERVER) is paid for here:

- ``off``: no SDK (the default; instrumentation is skipped);
- ``sampled 100%``: SDK with every span exported (JSON lines to a temp file);
- ``sampled 100% + steps``: the same plus a span per pipeline step
  (``TOOLMESH_TRACE_STEPS=1``);
- ``sampled 10%``: SDK with the ``parentbased_traceidratio`` sampler at 0.1;
- ``sampling off``: SDK installed, sampler ``always_off``;

plus ``off`` a second time, whose difference from the first shows the noise.
Rounds are interleaved; a configuration's cost is the median over rounds of
its shortfall against the ``off`` run of the same round.  CPU time per call
(the child's process time, exporter thread included) is reported beside
calls/s because it suffers less from other load on the machine.  The
measured window ends once the spans still queued are exported, so their
export counts too, and ``spans/call`` (the fewest over rounds) counts the
lines written to the file per call: 2 at 100 % sampling, about 0.2 at 10 %
-- fewer would mean spans dropped on the way.

    python bench/tracing_overhead.py [--calls 6000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = "--child"


def _flush() -> None:
    # Spans still queued when the clock stops are part of the cost: export them inside the window.
    from opentelemetry import trace

    flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    if flush is not None:
        flush()


def _lines(path: str | None) -> int:
    if not path:
        return 0
    with open(path, "rb") as file:
        return sum(1 for _ in file)


async def measure(calls: int) -> dict[str, float]:
    from toolmesh._cli.benchmark import bench_echo, throughput
    from toolmesh._config import Settings
    from toolmesh._telemetry.export import configure_telemetry
    from toolmesh._transport.broker import EmbeddedBroker
    from toolmesh._transport.mesh import Mesh
    from toolmesh.testing import running_node

    configure_telemetry("bench")
    trace_file = os.environ.get("TOOLMESH_TRACE_FILE")
    with EmbeddedBroker(0) as broker:
        settings = Settings(nats_url=broker.url, prefix="bench")
        async with running_node(settings, sources=[bench_echo]), Mesh(settings=settings) as mesh:

            async def call() -> object:
                return await mesh.call("bench_echo", {"message": "hello"})

            await throughput(call, 500, 64)
            _flush()
            spans_before = _lines(trace_file)
            made = max(1, calls // 64) * 64  # what throughput() makes: whole rounds of 64
            started, cpu = time.perf_counter(), time.process_time()
            await throughput(call, calls, 64)
            _flush()
            cpu_per_call = (time.process_time() - cpu) / made * 1e6
            rate = made / (time.perf_counter() - started)
            # Exported spans per call: proof that nothing was dropped on the way to the file
            spans_per_call = (_lines(trace_file) - spans_before) / made
            return {"calls_per_s": rate, "cpu_us_per_call": cpu_per_call, "spans_per_call": spans_per_call}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(CHILD, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import anyio

        print(json.dumps(anyio.run(measure, args.calls, backend_options={"use_uvloop": True})))
        return
    descriptor, spans = tempfile.mkstemp(suffix=".jsonl")
    os.close(descriptor)
    exporting = {"TOOLMESH_TRACE_FILE": spans}
    configurations = {
        "off": {},
        "off, again": {},  # the same setting twice: the spread between them is the noise floor
        "sampled 100%": {**exporting, "OTEL_TRACES_SAMPLER": "always_on"},
        "sampled 100% + steps": {**exporting, "OTEL_TRACES_SAMPLER": "always_on", "TOOLMESH_TRACE_STEPS": "1"},
        "sampled 10%": {**exporting, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                        "OTEL_TRACES_SAMPLER_ARG": "0.1"},
        "sampling off": {**exporting, "OTEL_TRACES_SAMPLER": "always_off"},
    }
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in configurations}
    load_before = os.getloadavg()
    for _ in range(args.rounds):  # interleaved rounds, so drift on the machine hits all alike
        for name, extra in configurations.items():
            env = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "TOOLMESH_TRACE"))}
            out = subprocess.run([sys.executable, __file__, CHILD, "--calls", str(args.calls)],
                                 env={**env, **extra}, capture_output=True, text=True, check=True).stdout
            runs[name].append(json.loads(out.strip().splitlines()[-1]))
            open(spans, "w").close()  # keep the temp file small between runs
    os.unlink(spans)
    load_after = os.getloadavg()

    def cost(name: str, key: str, higher_is_better: bool) -> float:
        shortfalls = []
        for run, base in zip(runs[name], runs["off"]):
            ratio = run[key] / base[key]
            shortfalls.append(100 * (1 - ratio) if higher_is_better else 100 * (ratio - 1))
        return statistics.median(shortfalls)

    print(f"{os.cpu_count()} CPUs; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after;"
          f" {args.rounds} rounds of {args.calls} calls, 64 in flight")
    print(f"{'configuration':22} {'calls/s':>8} {'cost':>7} {'CPU µs/call':>12} {'CPU cost':>9} {'spans/call':>11}")
    for name in configurations:
        rate = statistics.median(run["calls_per_s"] for run in runs[name])
        cpu = statistics.median(run["cpu_us_per_call"] for run in runs[name])
        spans = min(run["spans_per_call"] for run in runs[name])  # the worst run: any drop shows
        print(f"{name:22} {rate:8.0f} {cost(name, 'calls_per_s', True):6.1f}% {cpu:12.0f}"
              f" {cost(name, 'cpu_us_per_call', False):8.1f}% {spans:11.2f}")


if __name__ == "__main__":
    main()
