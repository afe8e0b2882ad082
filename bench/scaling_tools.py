"""Tools for bench/scaling.py: one CPU-bound, one I/O-bound, one trivial."""

from __future__ import annotations

import anyio
import toolmesh


@toolmesh.tool
def spin(n: int) -> int:
    """CPU-bound: the sum of i*i for i below ``n`` (pure Python, holds the GIL)."""
    total = 0
    for i in range(n):
        total += i * i
    return total


@toolmesh.tool
async def pause(seconds: float) -> float:
    """I/O-bound: wait ``seconds`` without using the CPU."""
    await anyio.sleep(seconds)
    return seconds
