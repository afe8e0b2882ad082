"""Follow ``tool.event.*`` for ``toolmesh events`` and ``toolmesh top``.

Unlike iterating ``Mesh.events()``, :func:`subscribe_events` returns only once
the broker holds the subscription, so a caller can say "watching" and be sure
no event published afterwards is missed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ToolEvent, decode_event

__all__ = ["subscribe_events"]


async def subscribe_events(
    mesh: Mesh, handle: Callable[[ToolEvent], None], kind: str = "*", tool: str | None = None
) -> Any:
    """Call ``handle`` with every event of ``kind`` (``*`` for all) and ``tool`` (``None`` for all); returns the subscription."""

    async def on_message(message: Any) -> None:
        try:
            event = decode_event(message.data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return  # an observer must not die on one foreign message
        handle(event)

    nc = mesh._connection()
    subscription = await nc.subscribe(mesh.subjects.events(kind, tool), cb=on_message)
    await nc.flush()  # the broker has the subscription once it answered the PING after it
    return subscription
