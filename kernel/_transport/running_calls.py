"""The calls a node is running, and who may cancel them.

A cancel (``<prefix>.cancel``, ``CancelRequest``) names a request id, and
request ids are not secret: they travel in events and callbacks.  So a node
accepts a cancel only from the call's caller: the same verified identity when
the call carried a signed one (``toolmesh._pipeline.identity``), else proof of the same
connection — the caller's connection inbox, under which the call's reply
subject lies (``toolmesh._transport.caller_subjects``).  Several calls may share an id
(anyone can send one); each is matched on its own.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from toolmesh._transport.caller_subjects import proves_caller
from toolmesh.contracts import CancelRequest, Subjects

__all__ = ["RunningCall", "RunningCalls"]

_log = logging.getLogger("toolmesh.node")


@dataclass(eq=False)
class RunningCall:
    """One call a node is running: its task and what identifies its caller."""

    request_id: str
    task: asyncio.Task[Any]
    identity: str | None
    """The call's verified identity; ``None`` for an anonymous call."""
    reply: str | None
    """Where the caller waits for the answer (for a durable call, its ``Toolmesh-Reply``)."""
    cancelled: bool = False
    """Set when its caller cancelled it (then the node answers ``cancelled``)."""


class RunningCalls:
    """The node's running calls by request id."""

    def __init__(self, subjects: Subjects) -> None:
        self.subjects = subjects
        self._calls: dict[str, list[RunningCall]] = {}

    def add(self, call: RunningCall) -> None:
        """Register a call that has started."""
        self._calls.setdefault(call.request_id, []).append(call)

    def remove(self, call: RunningCall) -> None:
        """Forget a call that has finished (or was cancelled)."""
        calls = self._calls.get(call.request_id)
        if calls is None:
            return
        if call in calls:
            calls.remove(call)
        if not calls:
            del self._calls[call.request_id]

    def owned_by(self, call: RunningCall, cancel: CancelRequest, identity: str | None) -> bool:
        """True when ``cancel`` (verified as sent by ``identity``) comes from the caller of ``call``."""
        if call.identity is not None:
            return identity == call.identity
        return proves_caller(self.subjects, call.reply, cancel.inbox)

    def cancel(self, cancel: CancelRequest, identity: str | None) -> int:
        """Cancel the calls of ``cancel.id`` whose caller sent it; returns how many."""
        cancelled = 0
        for call in list(self._calls.get(cancel.id, ())):
            if call.cancelled:
                continue
            if not self.owned_by(call, cancel, identity):
                _log.debug("refused a cancel of %s: not from the call's caller", cancel.id)
                continue
            call.cancelled = True
            call.task.cancel()
            cancelled += 1
        return cancelled
