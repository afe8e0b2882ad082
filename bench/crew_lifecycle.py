"""Crew lifecycle overhead: ``ToolUsage.use`` vs a bare ``Mesh.call``, and fuzzy selection at scale.

One run, one broker, one event loop, side by side:

- the lifecycle steps alone (parse → select → validate → guard → cache
  lookup) for a 200-tool catalog, in process;
- a whole ``ToolUsage.use`` with the tool run in process (the lifecycle's
  CPU: steps, usage counts, cache store, event building, observation);
- p50/p99 of ``ToolUsage.use`` (ReAct text in, events published, shared
  crew cache on) vs ``Mesh.call`` of the same tool over NATS, alternated call
  by call; ``added_own`` is the lifecycle's time minus that of the
  ``Mesh.call`` it made (target ≤ 50 µs at p50);
- selecting a misspelt name among 10,000 tools (target ≤ 2 ms), against the
  plain difflib scan crewAI does.

    python bench/crew_lifecycle.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import time
from collections.abc import Callable
from difflib import SequenceMatcher
from typing import Any

import anyio
import toolmesh
from toolmesh._pipeline.memory_cache import cache_key
from toolmesh._pipeline.validation import schema_issues
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import CachePolicy, ToolSpec
from toolmesh.plugins.crew import (
    CrewCache,
    LocalTool,
    ToolSelector,
    ToolUsage,
    UsageLedger,
    normalize_tool_name,
)
from toolmesh.plugins.crew.parsing import parse_agent_output
from toolmesh.testing import running_node, test_settings

SOURCE = "bench"
SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["query"],
    "additionalProperties": False,
}


def catalog(size: int, rng: random.Random) -> list[ToolSpec]:
    """``size`` tools with realistic names (``verb_noun_suffix``), the cached ``search_web`` among them."""
    verbs = ["get", "list", "create", "update", "delete", "search", "fetch", "send", "read", "write"]
    nouns = ["user", "order", "invoice", "ticket", "file", "email", "event", "report", "page", "record"]
    names = {"search_web"}
    while len(names) < size:
        names.add(
            f"{rng.choice(verbs)}_{rng.choice(nouns)}_{''.join(rng.choices(string.ascii_lowercase, k=5))}"
        )
    return [
        ToolSpec(
            name=name,
            description=f"The {name} tool.",
            source=SOURCE,
            input_schema=SCHEMA,
            cache=CachePolicy(ttl=60) if name == "search_web" else None,
        )
        for name in sorted(names)
    ]


class BenchTools:
    """Serves the catalog; every tool echoes its query."""

    def __init__(self, specs: list[ToolSpec]) -> None:
        self.specs = specs

    @toolmesh.hookimpl
    def toolmesh_discover_tools(self) -> list[ToolSpec]:
        return self.specs

    @toolmesh.hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        if spec.source != SOURCE:
            return None

        async def run() -> str:
            return arguments["query"]

        return run()


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.99) - 1)]


def steps_alone(specs: list[ToolSpec], n: int) -> tuple[float, float]:
    """p50/p99 µs of parse → select → validate → guard → cache lookup, nothing sent."""
    selector = ToolSelector(specs)
    ledger = UsageLedger()
    cache = CrewCache()
    latencies = []
    for i in range(n):
        output = f'Thought: look it up\nAction: search_web\nAction Input: {{"query": "q{i}", "limit": 3}}'
        started = time.perf_counter()
        parsed = parse_agent_output(output)
        spec = selector.select(parsed.tool)
        assert not schema_issues(spec.input_schema, parsed.arguments)
        ledger.check(spec, "agent")
        ledger.is_repeat(spec, "agent", parsed.arguments)
        cache.get(cache_key(spec.name, parsed.arguments))
        latencies.append((time.perf_counter() - started) * 1e6)
    return percentiles(latencies)


def fuzzy(rng: random.Random) -> dict[str, float]:
    """ms to select among 10,000 names: a typo that matches, one that does not, and plain difflib."""
    specs = catalog(10_000, rng)
    selector = ToolSelector(specs)
    names = [normalize_tool_name(spec.name) for spec in specs]
    target = rng.choice([spec.name for spec in specs])
    typo = target[:4] + target[5:]  # one character dropped
    miss = "summarize_quarterly_numbers"
    assert selector.find(typo) is not None and selector.find(miss) is None

    def best_ms(fn: Callable[[], Any], repeat: int) -> float:
        samples = []
        for _ in range(repeat):
            started = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - started) * 1e3)
        return statistics.median(samples)

    def plain_difflib() -> Any:
        wanted = normalize_tool_name(typo)
        return max(names, key=lambda name: SequenceMatcher(None, name, wanted).ratio())

    return {
        "fuzzy_hit_ms": best_ms(lambda: selector.find(typo), 50),
        "fuzzy_miss_ms": best_ms(lambda: selector.find(miss), 50),
        "plain_difflib_ms": best_ms(plain_difflib, 3),
    }


async def in_process(specs: list[ToolSpec], n: int) -> tuple[float, float]:
    """p50/p99 µs of a whole ``ToolUsage.use`` with the tool run in process: the lifecycle's CPU, no I/O."""
    search = next(spec for spec in specs if spec.name == "search_web")
    local = LocalTool(spec=search, function=lambda arguments: arguments["query"])
    usage = ToolUsage(None, specs, local_tools=[local], cache=CrewCache())
    latencies = []
    for i in range(n):
        started = time.perf_counter()
        observation = await usage.use(
            f'Thought: look it up\nAction: search_web\nAction Input: {{"query": "c{i}", "limit": 3}}',
            agent="bench",
        )
        latencies.append((time.perf_counter() - started) * 1e6)
        assert observation.ok and not observation.from_cache, observation.code
    return percentiles(latencies)


async def side_by_side(mesh: Mesh, usage: ToolUsage, calls: int, tag: str) -> dict[str, float]:
    """Alternate bare and lifecycle calls (same tool, fresh arguments) so both see the same conditions.

    ``own`` is the lifecycle's time minus the time of the ``Mesh.call`` it made:
    everything the lifecycle adds, events and cache writes included.
    """
    inner: list[float] = []
    call = mesh.call

    async def measured_call(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await call(*args, **kwargs)
        finally:
            inner.append(time.perf_counter() - started)

    bare, lifecycle, own = [], [], []
    for i in range(calls):
        started = time.perf_counter()
        await call("search_web", {"query": f"b{i}", "limit": 3}, cache=False)
        bare.append((time.perf_counter() - started) * 1e6)
        mesh.call = measured_call  # type: ignore[method-assign]
        started = time.perf_counter()
        observation = await usage.use(
            f'Thought: look it up\nAction: search_web\nAction Input: {{"query": "{tag}{i}", "limit": 3}}',
            agent="bench",
        )
        elapsed = time.perf_counter() - started
        mesh.call = call  # type: ignore[method-assign]
        assert observation.ok and not observation.from_cache, observation.code
        lifecycle.append(elapsed * 1e6)
        own.append((elapsed - inner.pop()) * 1e6)
    result: dict[str, float] = {}
    result["mesh_call_p50_us"], result["mesh_call_p99_us"] = percentiles(bare)
    result["tool_usage_p50_us"], result["tool_usage_p99_us"] = percentiles(lifecycle)
    result["added_own_p50_us"], result["added_own_p99_us"] = percentiles(own)
    result["ratio_p50"] = result["tool_usage_p50_us"] / result["mesh_call_p50_us"]
    return result


async def main(calls: int) -> None:
    rng = random.Random(11)
    specs = catalog(200, rng)
    report: dict[str, Any] = {"catalog": len(specs), "calls": calls}
    report["steps_p50_us"], report["steps_p99_us"] = steps_alone(specs, calls)
    report["use_in_process_p50_us"], report["use_in_process_p99_us"] = await in_process(specs, calls)
    with EmbeddedBroker(0) as broker:
        settings = test_settings(broker.url)
        async with (
            running_node(settings, plugins=[BenchTools(specs)], load_entrypoints=False),
            Mesh(settings=settings) as mesh,
        ):
            usage = await ToolUsage.connect(mesh)
            await side_by_side(mesh, usage, min(calls, 500), "warm")
            report.update(await side_by_side(mesh, usage, calls, "run"))
            await usage.close()
    report.update(fuzzy(rng))
    report["fuzzy_speedup_vs_difflib"] = report["plain_difflib_ms"] / report["fuzzy_hit_ms"]
    for key, value in report.items():
        print(f"{key:28} {value:10.2f}" if isinstance(value, float) else f"{key:28} {value:>10}")
    print(
        json.dumps(
            {key: round(value, 3) if isinstance(value, float) else value for key, value in report.items()}
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    arguments = parser.parse_args()
    anyio.run(main, arguments.calls, backend_options={"use_uvloop": True})
