"""Arithmetic and statistics tools."""

from __future__ import annotations

import statistics as stats
from typing import Annotated

import msgspec
import toolmesh


@toolmesh.tool(tags=["math"])
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@toolmesh.tool(tags=["math"])
def divide(a: float, b: float) -> float:
    """Divide a by b (fails for b = 0)."""
    return a / b


class Summary(msgspec.Struct):
    """Descriptive statistics of a list of numbers."""

    mean: float
    median: float
    stdev: float
    min: float
    max: float


@toolmesh.tool(tags=["math"], cache=300)
def statistics(values: Annotated[list[float], msgspec.Meta(min_length=1)]) -> Summary:
    """Mean, median, standard deviation, min and max of some numbers.

    Args:
        values: the numbers (at least one)
    """
    return Summary(
        mean=stats.fmean(values),
        median=stats.median(values),
        stdev=stats.stdev(values) if len(values) > 1 else 0.0,
        min=min(values),
        max=max(values),
    )


@toolmesh.tool(tags=["math"])
async def total(values: list[int], context: toolmesh.CallContext) -> int:
    """Sum integers by calling the `add` tool through the mesh (a tool that uses other tools)."""
    result = 0
    for value in values:
        answer = await context.call_tool("add", {"a": result, "b": value})
        if answer.is_error:
            raise RuntimeError(f"add failed: {answer.error.message if answer.error else answer.text}")
        result = answer.structured_content
    return result
