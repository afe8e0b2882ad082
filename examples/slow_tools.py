"""Tools that misbehave on purpose: slow, unserialisable, or breaking their own schema."""

from __future__ import annotations

import anyio
import toolmesh


@toolmesh.tool(timeout=2)
async def sleep(seconds: float) -> float:
    """Sleep for some seconds and return how long (times out after 2 s)."""
    await anyio.sleep(seconds)
    return seconds


@toolmesh.tool
def bad_return() -> dict:
    """Return a value that cannot be sent as JSON."""
    return {"handle": object()}


@toolmesh.tool
def wrong_output() -> int:
    """Declare an integer result but return text."""
    return "not a number"  # type: ignore[return-value]  # on purpose: output-schema validation fails
