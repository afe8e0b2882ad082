"""Follow a tool's events from a test, starting only once the subscription provably receives them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio.abc
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ToolEvent, ToolResult
from toolmesh.testing import eventually


async def follow_events(
    mesh: Mesh, tg: anyio.abc.TaskGroup, tool: str | None, probe: Callable[[], Awaitable[ToolResult]]
) -> list[ToolEvent]:
    """Collect ``tool``'s (``None``: every tool's) events in a task of ``tg`` (cancel ``tg`` to stop).

    Returns the list the task keeps appending to.

    ``Mesh.events`` subscribes when its loop first runs, which a caller cannot observe, so ``probe`` (a
    harmless call of such a tool) is repeated until one of its own events arrives: from then on no event is
    missed. Callers filter the list by request id, since the probes' events are in it too.
    """
    seen: list[ToolEvent] = []

    async def follow() -> None:
        async for event in mesh.events(tool=tool):
            seen.append(event)

    tg.start_soon(follow)
    probes: set[str] = set()

    async def probe_seen() -> bool:
        probes.add((await probe()).id)
        return any(event.request_id in probes for event in seen)

    what = f"an event of {tool or 'any tool'!r} reaching the follower"
    await eventually(probe_seen, timeout=10, interval=0.01, what=what)
    return seen


def kinds_of(events: list[ToolEvent], request_id: str) -> list[str]:
    """The kinds of one call's events, in arrival order."""
    return [event.kind for event in events if event.request_id == request_id]
