"""``MemoryEventStore``: the events of recent SSE streams, so a client can resume with ``Last-Event-ID``.

The SDK gives every HTTP session the same store and names a stream after the
JSON-RPC request id it answers, so two sessions both have a stream ``"2"``.
To keep one session's events out of another's replay, each event is tagged
with the session that produced it: ``SessionTagging`` puts a ``SessionTag``
in a context variable for every request.  A session's server task, which
stores most events, is started by the request that opens the session and
inherits that request's tag; the tag learns its session id from the
``Mcp-Session-Id`` header of the response.  A replay sends only events of
the requesting session.  The store is bounded by event count and by bytes
(events are kept as their wire JSON).
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from contextvars import ContextVar
from typing import TYPE_CHECKING

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage, jsonrpc_message_adapter

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MemoryEventStore", "SessionTag", "SessionTagging"]


class SessionTag:
    """The session a request (and what it starts) belongs to; ``None`` until the opening response names it."""

    __slots__ = ("session_id",)

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id


_SESSION_TAG: ContextVar[SessionTag | None] = ContextVar("toolmesh_mcp_session_tag", default=None)


class SessionTagging:
    """ASGI wrapper setting the ``SessionTag`` of each HTTP request (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session_id = next((value for name, value in scope["headers"] if name == b"mcp-session-id"), None)
        tag = SessionTag(session_id.decode("latin-1") if session_id is not None else None)

        async def send_learning_the_session(message: Message) -> None:
            if tag.session_id is None and message["type"] == "http.response.start":
                for name, value in message.get("headers", ()):
                    if name.lower() == b"mcp-session-id":
                        tag.session_id = value.decode("latin-1")
            await send(message)

        token = _SESSION_TAG.set(tag)
        try:
            await self.app(scope, receive, send_learning_the_session if session_id is None else send)
        finally:
            _SESSION_TAG.reset(token)


def _session() -> str | None:
    tag = _SESSION_TAG.get()
    return tag.session_id if tag is not None else None


class MemoryEventStore(EventStore):
    """Keeps the newest events of all sessions, at most ``max_events`` and ``max_bytes`` of JSON."""

    def __init__(self, max_events: int = 10_000, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.size = 0
        """Bytes of JSON held now."""
        self._events: OrderedDict[str, tuple[SessionTag | None, StreamId, bytes | None]] = OrderedDict()

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = secrets.token_urlsafe(12)
        wire = (
            None if message is None else message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        )
        self._events[event_id] = (_SESSION_TAG.get(), stream_id, wire)  # the tag may learn its id later
        self.size += len(wire or b"")
        while len(self._events) > self.max_events or (self.size > self.max_bytes and len(self._events) > 1):
            _, (_, _, dropped) = self._events.popitem(last=False)
            self.size -= len(dropped or b"")
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        if last_event_id not in self._events:
            return None
        owner, stream_id, _ = self._events[last_event_id]
        session = owner.session_id if owner is not None else None
        if session != _session():
            return None  # another session's event: nothing to replay for this client
        found = False
        for event_id, (tag, stream, wire) in list(self._events.items()):
            mine = (tag.session_id if tag is not None else None) == session
            if found and mine and stream == stream_id and wire is not None:
                await send_callback(EventMessage(jsonrpc_message_adapter.validate_json(wire), event_id))
            elif event_id == last_event_id:
                found = True
        return stream_id
