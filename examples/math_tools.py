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
