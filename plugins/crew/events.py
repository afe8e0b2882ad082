"""crewAI's tool-usage events on ``tool.event.<kind>.<tool>`` subjects.

Each event is a ``ToolEvent`` whose ``kind`` is crewAI's event ``type``
(``tool_usage_started``, ``tool_usage_finished``, ``tool_usage_error``,
``tool_selection_error``, ``tool_validate_input_error``) and whose
``attributes`` carry crewAI's field names: ``agent_key``, ``agent_role``,
``agent_id``, ``tool_name``, ``tool_args``, ``tool_class``, ``run_attempts``,
``delegations``, ``task_name``, ``task_id``, ``source_fingerprint``,
``source_type``, ``task_fingerprint`` and, per kind, ``started_at`` /
``finished_at`` / ``from_cache`` / ``output`` or ``error``.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import nats.errors
from nats.aio.client import Client as NATS
from toolmesh.contracts import ErrorCode, Subjects, ToolEvent, encode, is_valid_tool_name

__all__ = [
    "EVENT_KINDS",
    "UNKNOWN_TOOL_TOKEN",
    "AgentInfo",
    "EventEmitter",
    "TaskInfo",
    "security_context",
]

EVENT_KINDS = (
    "tool_usage_started",
    "tool_usage_finished",
    "tool_usage_error",
    "tool_selection_error",
    "tool_validate_input_error",
)
"""The event kinds the crew lifecycle publishes (crewAI's event ``type`` values)."""

UNKNOWN_TOOL_TOKEN = "_"
"""Subject token of events about a name that is not a valid tool name (selection errors)."""

_FINGERPRINTS = uuid.UUID("5a0c6f3e-6a55-4c1b-9a57-2f1b2f5d7c11")
_log = logging.getLogger("toolmesh.crew.events")


def _fingerprint(kind: str, ident: str) -> str:
    return str(uuid.uuid5(_FINGERPRINTS, f"{kind}:{ident}"))


@dataclass(frozen=True)
class AgentInfo:
    """The agent making calls: its role (also its address for delegation), key, id and fingerprint.

    The fingerprint is stable for a given id (or role), so replays are reproducible.
    """

    role: str
    key: str | None = None
    id: str | None = None
    fingerprint: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", _fingerprint("agent", self.id or self.role))


@dataclass(frozen=True)
class TaskInfo:
    """The task an agent works on: id, name and fingerprint."""

    id: str
    name: str | None = None
    fingerprint: str = ""

    def __post_init__(self) -> None:
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", _fingerprint("task", self.id))


def base_attributes(
    agent: AgentInfo | None,
    task: TaskInfo | None,
    tool_name: str,
    tool_args: Any,
    *,
    tool_class: str,
    run_attempts: int,
    delegations: int = 0,
) -> dict[str, Any]:
    """The fields every crewAI tool-usage event carries."""
    attributes: dict[str, Any] = {
        "agent_key": agent.key if agent else None,
        "agent_role": agent.role if agent else None,
        "agent_id": agent.id if agent else None,
        "tool_name": tool_name,
        "tool_args": tool_args,
        "tool_class": tool_class,
        "run_attempts": run_attempts,
        "delegations": delegations,
        "task_name": task.name if task else None,
        "task_id": task.id if task else None,
    }
    if agent is not None:
        attributes["source_fingerprint"] = agent.fingerprint
        attributes["source_type"] = "agent"
        if agent.metadata:
            attributes["fingerprint_metadata"] = agent.metadata
    if task is not None:
        attributes["task_fingerprint"] = task.fingerprint
    return attributes


def security_context(agent: AgentInfo | None, task: TaskInfo | None) -> dict[str, Any] | None:
    """crewAI's ``security_context`` for a tool call: the agent's and the task's fingerprints.

    Sent as the request's ``meta`` (a tool reads ``context.request.meta["security_context"]``), never
    mixed into the arguments, so strict schemas stay valid.  ``None`` when neither is known.
    """
    context: dict[str, Any] = {}
    if agent is not None:
        context["agent_fingerprint"] = {"uuid_str": agent.fingerprint, "metadata": dict(agent.metadata)}
    if task is not None:
        context["task_fingerprint"] = {"uuid_str": task.fingerprint, "metadata": {}}
    return {"security_context": context} if context else None


class EventEmitter:
    """Builds events, hands them to local listeners and publishes them on the mesh's event subjects."""

    def __init__(
        self, nc: NATS | None = None, subjects: Subjects | None = None, *, node: str | None = None
    ) -> None:
        self.nc = nc
        self.subjects = subjects or Subjects()
        self.node = node
        self.listeners: list[Callable[[ToolEvent], None]] = []
        self._subject_cache: dict[tuple[str, str], str] = {}

    def subject(self, kind: str, tool: str) -> str:
        """Where an event of ``kind`` about ``tool`` is published."""
        subject = self._subject_cache.get((kind, tool))
        if subject is None:
            if is_valid_tool_name(tool):
                subject = self.subjects.event(kind, tool)
            else:
                subject = f"{self.subjects.prefix}.event.{kind}.{UNKNOWN_TOOL_TOKEN}"
            if len(self._subject_cache) < 4096:
                self._subject_cache[(kind, tool)] = subject
        return subject

    async def emit(
        self,
        kind: str,
        tool: str,
        attributes: dict[str, Any],
        *,
        request_id: str | None = None,
        duration_ms: float | None = None,
        error_code: ErrorCode | None = None,
    ) -> ToolEvent:
        """Emit one event; a listener or publish failure is logged, never raised."""
        event = ToolEvent(
            kind=kind,
            tool=tool,
            request_id=request_id,
            node=self.node,
            timestamp=time.time(),
            duration_ms=duration_ms,
            error_code=error_code,
            attributes=attributes,
        )
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - isolation boundary around a listener: the call goes on
                _log.exception("crew event listener %r failed", listener)
        if self.nc is not None and not self.nc.is_closed:
            try:
                await self.nc.publish(self.subject(kind, tool), encode(event))
            except nats.errors.Error as exc:  # events are best effort
                _log.warning("could not publish %s event: %r", kind, exc)
        return event
