"""Subscriptions: run a code tool when a matching breadcrumb is created or updated.

On NATS each subscription is a queue subscription on the schema's breadcrumb
subject, in a queue group per tool, so one node of the mesh runs the tool for
each event however many nodes serve it.  The tool gets an empty input and
the event as ``context.request.trigger_event``::

    {"schema_name": ..., "event": "created" | "updated", "breadcrumb": {...}, "timestamp": ...}
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import msgspec
import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from toolmesh.contracts import ToolRequest, ToolResult
from toolmesh.contracts.tool_code import BreadcrumbEvent

from .breadcrumbs import MemoryBreadcrumbs, breadcrumb_subject, matches
from .document import CodeTool

__all__ = ["Subscriptions", "trigger_for"]

_log = logging.getLogger("toolmesh.sandbox.subscriptions")

Caller = Callable[[ToolRequest], Awaitable[ToolResult]]


def trigger_for(event: BreadcrumbEvent) -> dict[str, Any]:
    """The ``trigger_event`` of a run started by ``event``."""
    return {
        "schema_name": event.breadcrumb.schema_name,
        "event": event.event,
        "breadcrumb": msgspec.to_builtins(event.breadcrumb),
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


class Subscriptions:
    """The breadcrumb subscriptions of the code tools on one kernel."""

    def __init__(self, call: Caller, *, nc: NATS | None, prefix: str, memory: MemoryBreadcrumbs | None) -> None:
        self.call = call
        self.nc = nc
        self.prefix = prefix
        self.memory = memory
        self.runs: list[tuple[str, dict[str, Any]]] = []
        """(tool, trigger_event) of every run started here, oldest first."""
        self._subscriptions: list[Subscription] = []
        self._wanted: list[tuple[str, str, str | None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    async def update(self, tools: list[CodeTool]) -> None:
        """Subscribe for exactly the subscriptions of ``tools``."""
        wanted = [
            (tool.name, sub.schema_name, sub.tag)
            for tool in tools
            for sub in tool.document.context.subscriptions
        ]
        if wanted == self._wanted:
            return
        await self._unsubscribe()
        self._wanted = wanted
        if self.nc is not None:
            for name, schema, tag in wanted:
                subject = breadcrumb_subject(self.prefix, schema)
                self._subscriptions.append(
                    await self.nc.subscribe(subject, queue=f"sandbox.{name}", cb=self._on_message(name, schema, tag))
                )
        elif self.memory is not None:
            self.memory.listeners.append(self._on_local)

    def _on_message(self, name: str, schema: str, tag: str | None) -> Callable[[Msg], Awaitable[None]]:
        async def handle(msg: Msg) -> None:
            try:
                event = msgspec.json.decode(msg.data, type=BreadcrumbEvent)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                _log.warning("ignoring a malformed breadcrumb event on %s: %s", msg.subject, exc)
                return
            if matches(event.breadcrumb, schema, tag):
                self._start(name, event)

        return handle

    async def _on_local(self, event: BreadcrumbEvent) -> None:
        for name, schema, tag in self._wanted:
            if matches(event.breadcrumb, schema, tag):
                self._start(name, event)

    def _start(self, name: str, event: BreadcrumbEvent) -> None:
        trigger = trigger_for(event)
        self.runs.append((name, trigger))
        request = ToolRequest(id=f"subscription-{name}-{uuid.uuid4().hex[:8]}", tool=name,
                              meta={"trigger_event": trigger})
        # Runs in its own task: a tool that writes breadcrumbs must not wait on its own announcement.
        task = asyncio.ensure_future(self._run(request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, request: ToolRequest) -> None:
        result = await self.call(request)
        if result.is_error and result.error is not None:
            _log.warning("subscription run of %s failed: %s", request.tool, result.error.message)

    async def _unsubscribe(self) -> None:
        for subscription in self._subscriptions:
            try:
                await subscription.unsubscribe()
            except nats.errors.Error as exc:  # connection already closed
                _log.debug("subscription not closed: %r", exc)
        self._subscriptions.clear()
        if self.memory is not None and self._on_local in self.memory.listeners:
            self.memory.listeners.remove(self._on_local)

    async def close(self) -> None:
        """Stop listening and cancel runs in progress."""
        await self._unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
