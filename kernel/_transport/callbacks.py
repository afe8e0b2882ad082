"""The callback channel: a running tool talks to its caller over NATS.

The caller subscribes to a subject of its own callback namespace,
``<prefix>.callback.<client>.<id>`` (``Mesh.callback_subject``), and names it
in ``ToolRequest.callback``; the node publishes ``ToolCallback`` notifications
there and sends requests (``sampling``, ``elicitation``) whose reply is
``{"result": ...}`` or ``{"error": "..."}``.  ``<client>`` is the client token
of the caller's reply subject: a node refuses (``bad_request``, before the tool
runs) a callback anywhere else, so a caller cannot make it publish where the
caller itself may not (``toolmesh._transport.caller_subjects``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from toolmesh._errors import ExecutionFailed
from toolmesh._pipeline.plugin_manager import await_maybe
from toolmesh._transport.nats_errors import nats_error
from toolmesh.contracts import ToolCallback, decode_callback, encode

__all__ = ["CallbackHandler", "NatsCallbackChannel", "serve_callbacks"]

CallbackHandler = Callable[[ToolCallback], Awaitable[Any] | Any]
"""Receives a tool's callbacks on the caller's side; its return value answers requests."""

_log = logging.getLogger("toolmesh.callbacks")
_reply_decoder = msgspec.json.Decoder(dict[str, Any])


class NatsCallbackChannel:
    """The node side: a ``CallbackChannel`` that publishes to the caller's callback subject."""

    def __init__(self, nc: NATS, subject: str, request_id: str) -> None:
        self.nc = nc
        self.subject = subject
        self.request_id = request_id

    async def notify(self, kind: str, data: dict[str, Any]) -> None:
        try:
            await self.nc.publish(self.subject, encode(ToolCallback(kind=kind, request_id=self.request_id, data=data)))
        except nats.errors.Error as exc:  # a lost notification must not fail the call
            _log.debug("callback %s lost: %r", kind, exc)

    async def ask(self, kind: str, data: dict[str, Any], timeout: float | None) -> Any:
        payload = encode(ToolCallback(kind=kind, request_id=self.request_id, data=data))
        try:
            reply = await self.nc.request(self.subject, payload, timeout=timeout or 60.0)
        except nats.errors.Error as exc:  # nothing answers: the caller stopped listening; or it is too slow
            raise nats_error(exc, self.subject, f"the {kind} request to the caller") from exc
        answer = _reply_decoder.decode(reply.data)
        if "error" in answer:
            raise ExecutionFailed(f"the caller refused the {kind} request: {answer['error']}")
        return answer.get("result")


async def serve_callbacks(nc: NATS, subject: str, handler: CallbackHandler) -> Any:
    """Subscribe the caller's side of the channel; returns the subscription (unsubscribe when done)."""

    async def on_message(msg: Msg) -> None:
        try:
            callback = decode_callback(msg.data)
            answer: dict[str, Any] = {"result": await await_maybe(handler(callback))}
        except Exception as exc:  # noqa: BLE001 - isolation boundary around the caller's handler
            _log.warning("callback handler for %s failed: %r", subject, exc, exc_info=True)
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        if msg.reply:
            await nc.publish(msg.reply, encode(answer))

    return await nc.subscribe(subject, cb=on_message)
