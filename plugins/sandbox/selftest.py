"""Examples as self-tests: run each example's input and compare the result with its output."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from toolmesh import Kernel
from toolmesh.contracts import ToolRequest, ToolResult

__all__ = ["ExampleOutcome", "run_examples", "same_json"]


@dataclass(frozen=True, slots=True)
class ExampleOutcome:
    """One example's verdict; ``problem`` is ``None`` when it passed."""

    tool: str
    index: int
    description: str
    problem: str | None
    result: ToolResult | None = None


def same_json(expected: Any, actual: Any) -> bool:
    """JSON equality, with floats equal to 1e-9 relative and ``1 == 1.0`` (JSON has one number type)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same_json(expected[k], actual[k]) for k in expected)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(same_json(e, a) for e, a in zip(expected, actual))
    return bool(expected == actual)


async def run_examples(kernel: Kernel) -> list[ExampleOutcome]:
    """Run every example of every sandbox tool on ``kernel``; unavailable tools fail with their reason."""
    outcomes = []
    for spec in kernel.tools:
        if spec.source != "sandbox":
            continue
        if not spec.available:
            outcomes.append(ExampleOutcome(spec.name, -1, "load", spec.unavailable_reason or "unavailable"))
            continue
        for index, example in enumerate(spec.examples):
            result = await kernel.call(ToolRequest(id=f"example-{spec.name}-{index}", tool=spec.name,
                                                   arguments=dict(example.input)))
            problem = None
            if result.is_error and result.error is not None:
                problem = f"{result.error.code.value}: {result.error.message}"
            elif example.output is not None and not same_json(example.output, result.structured_content):
                problem = f"expected {example.output!r}, got {result.structured_content!r}"
            outcomes.append(ExampleOutcome(spec.name, index, example.description or "", problem, result))
    return outcomes
