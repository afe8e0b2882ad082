"""Calls made from the console's tool page: run in the background, followed by the page, cancellable.

A call is an ordinary mesh call: it carries the console's identity (signed when the
settings hold ``identity_secret``) and goes through every node's authorization. Its
request id is the call's id on the page, so the call detail page finds its events too.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import msgspec
import nats.errors
from opentelemetry import trace
from toolmesh import BrokerError, Mesh, ToolmeshError, redact_arguments, tool_error
from toolmesh.contracts import Caller, ErrorCode, ToolCallback, ToolResult, ToolSpec

__all__ = ["CONSOLE_AGENT", "ConsoleCall", "ConsoleCalls"]

CONSOLE_AGENT = "toolmesh-console"
"""The ``caller.agent`` of every call made from the console."""

KEPT_CALLS = 200
"""Calls whose outcome the console keeps for the page (the latest ones)."""

KEPT_NOTIFICATIONS = 100
"""Progress and log notifications kept per call (the latest ones)."""

_tracer = trace.get_tracer("toolmesh.console")


@dataclass(slots=True)
class ConsoleCall:
    """One call made from the page and what is known of it so far."""

    id: str
    tool: str
    arguments: dict[str, Any]
    started_at: float
    status: str = "running"
    progress: dict[str, Any] | None = None
    notifications: list[dict[str, Any]] = field(default_factory=list)
    result: ToolResult | None = None
    trace_id: str | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def as_dict(self) -> dict[str, Any]:
        """The call as the page reads it (arguments already redacted)."""
        return {
            "id": self.id,
            "tool": self.tool,
            "arguments": self.arguments,
            "started_at": self.started_at,
            "status": self.status,
            "progress": self.progress,
            "notifications": self.notifications,
            "result": msgspec.to_builtins(self.result) if self.result is not None else None,
            "trace_id": self.trace_id,
        }


class ConsoleCalls:
    """Starts calls in a task group and keeps the latest :data:`KEPT_CALLS` of them."""

    def __init__(self, task_group: anyio.abc.TaskGroup, mesh: Mesh | None = None) -> None:
        self.mesh = mesh
        self.task_group = task_group
        self.calls: OrderedDict[str, ConsoleCall] = OrderedDict()

    def start(self, spec: ToolSpec, arguments: dict[str, Any], timeout: float | None = None) -> ConsoleCall:
        """Start calling ``spec`` with ``arguments``; the returned call fills in as it runs."""
        call = ConsoleCall(
            id=f"console-{secrets.token_urlsafe(12)}",
            tool=spec.name,
            arguments=redact_arguments(spec, arguments),
            started_at=time.time(),
        )
        self.calls[call.id] = call
        while len(self.calls) > KEPT_CALLS:
            _, dropped = self.calls.popitem(last=False)
            dropped.scope.cancel()
        self.task_group.start_soon(self._run, call, arguments, timeout)
        return call

    def get(self, call_id: str) -> ConsoleCall | None:
        """The call of that id, if it is still kept."""
        return self.calls.get(call_id)

    def cancel(self, call_id: str) -> bool:
        """Cancel a running call (the node is told to stop it); False when it is unknown or over."""
        call = self.calls.get(call_id)
        if call is None or call.status != "running":
            return False
        call.scope.cancel()
        return True

    async def _run(self, call: ConsoleCall, arguments: dict[str, Any], timeout: float | None) -> None:
        def on_callback(callback: ToolCallback) -> None:
            if callback.kind == "progress":
                call.progress = dict(callback.data)
            if callback.kind in ("progress", "log"):
                call.notifications.append({"kind": callback.kind, "at": time.time(), **callback.data})
                del call.notifications[:-KEPT_NOTIFICATIONS]
            # sampling and elicitation requests get no answer from the page (None declines them)

        mesh = self.mesh
        with _tracer.start_as_current_span(f"console call {call.tool}") as span:
            context = span.get_span_context()
            if context.is_valid:
                call.trace_id = format(context.trace_id, "032x")
            with call.scope:
                try:
                    if mesh is None:
                        raise BrokerError("the console is not connected to the mesh; try again when it is")
                    caller = Caller(identity=mesh.identity, agent=CONSOLE_AGENT)
                    call.result = await mesh.call(
                        call.tool,
                        arguments,
                        id=call.id,
                        caller=caller,
                        timeout=timeout,
                        on_callback=on_callback,
                    )
                except (ToolmeshError, nats.errors.Error, OSError) as exc:  # the mesh went away mid-call
                    message = f"the console could not complete the call: {type(exc).__name__}: {exc}"
                    call.result = ToolResult.failure(
                        call.id, call.tool, tool_error(ErrorCode.UNAVAILABLE, message)
                    )
                call.status = "error" if call.result.is_error else "done"
                return
        call.status = "cancelled"
