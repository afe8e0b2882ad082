"""Tracing overhead: calls/s with the OpenTelemetry SDK exporting vs not configured, in one run.

Each configuration runs in a child process (a process can install only one
tracer provider), one after the other, measuring in-process ``Mesh.call``
throughput of a trivial tool with 64 calls in flight:

- ``off``: no SDK (the default; instrumentation is skipped);
- ``sampled 100%``: SDK with every span exported (JSON lines to a temp file);
- ``sampling off``: SDK installed, sampler ``always_off``;

plus ``off`` a second time, whose difference from the first shows the noise.

    python bench/tracing_overhead.py [--calls 6000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = "--child"


async def measure(calls: int) -> float:
    from toolmesh.benchmark import bench_echo, throughput
    from toolmesh.broker import EmbeddedBroker
    from toolmesh.config import Settings
    from toolmesh.mesh import Mesh
    from toolmesh.telemetry_config import configure_telemetry
    from toolmesh.testing import running_node

    configure_telemetry("bench")
    with EmbeddedBroker(0) as broker:
        settings = Settings(nats_url=broker.url, prefix="bench")
        async with running_node(settings, sources=[bench_echo]):
            async with Mesh(settings=settings) as mesh:

                async def call() -> object:
                    return await mesh.call("bench_echo", {"message": "hello"})

                await throughput(call, 500, 64)
                return await throughput(call, calls, 64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(CHILD, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import anyio

        print(json.dumps(anyio.run(measure, args.calls, backend_options={"use_uvloop": True})))
        return
    spans = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    configurations = {
        "off": {},
        "off, again": {},  # the same setting twice: the spread between them is the noise floor
        "sampled 100%": {"TOOLMESH_TRACE_FILE": spans, "OTEL_TRACES_SAMPLER": "always_on"},
        "sampling off": {"TOOLMESH_TRACE_FILE": spans, "OTEL_TRACES_SAMPLER": "always_off"},
    }
    rates: dict[str, list[float]] = {name: [] for name in configurations}
    for _ in range(args.rounds):  # interleaved rounds, so drift on the machine hits all alike
        for name, extra in configurations.items():
            env = {**os.environ, **extra}
            out = subprocess.run([sys.executable, __file__, CHILD, "--calls", str(args.calls)],
                                 env=env, capture_output=True, text=True, check=True).stdout
            rates[name].append(json.loads(out.strip().splitlines()[-1]))
    os.unlink(spans)
    base = max(rates["off"])
    print(f"{'configuration':16} {'best calls/s':>13} {'median':>9} {'cost vs off':>12}")
    for name, values in rates.items():
        best = max(values)
        median = sorted(values)[len(values) // 2]
        print(f"{name:16} {best:13.0f} {median:9.0f} {100 * (1 - best / base):11.1f}%")


if __name__ == "__main__":
    main()
