"""``CallbackRouter``: one NATS subscription for the tool callbacks of every call the gateway makes.

``Mesh.call(on_callback=...)`` subscribes and unsubscribes a subject for each
call.  The gateway makes a call per MCP ``tools/call``, so it names one
subject in all its requests and routes each ``ToolCallback`` by its request
id.  Notifications (progress, log) are handled in arrival order; requests
(sampling, elicitation) may wait minutes for a model or a person, so each
runs in its own task and never holds up the callbacks of other calls.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec
from nats.aio.msg import Msg
from toolmesh import CallbackHandler, Mesh, await_maybe
from toolmesh.contracts import ToolCallback, ToolRequest, ToolResult, decode_callback, encode

__all__ = ["CallbackRouter"]

_log = logging.getLogger("toolmesh.mcp.gateway")


class CallbackRouter:
    """Sends requests naming the router's subject and hands their callbacks to per-call handlers."""

    def __init__(self, mesh: Mesh) -> None:
        self.mesh = mesh
        self.subject = ""
        """The router's callback subject, in the mesh connection's own namespace (set by :meth:`start`)."""
        self._handlers: dict[str, CallbackHandler] = {}
        self._answering: set[asyncio.Task[None]] = set()
        self._subscription: Any = None

    async def start(self) -> None:
        """Subscribe to the router's subject."""
        assert self.mesh.nc is not None
        self.subject = self.mesh.callback_subject()  # nodes refuse callbacks outside the caller's namespace
        self._subscription = await self.mesh.nc.subscribe(self.subject, cb=self._on_message)

    async def stop(self) -> None:
        """Unsubscribe; requests still being answered are cancelled."""
        if self._subscription is not None:
            await self._subscription.unsubscribe()
            self._subscription = None
        for task in list(self._answering):
            task.cancel()

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._subscription is not None

    async def send(self, request: ToolRequest, handler: CallbackHandler) -> ToolResult:
        """Send ``request`` on the mesh; its callbacks go to ``handler`` until the result arrives."""
        self._handlers[request.id] = handler
        try:
            return await self.mesh.send(msgspec.structs.replace(request, callback=self.subject))
        finally:
            self._handlers.pop(request.id, None)

    async def _on_message(self, msg: Msg) -> None:
        try:
            callback = decode_callback(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            _log.debug("ignoring a malformed tool callback: %s", exc)
            return
        handler = self._handlers.get(callback.request_id)
        if not msg.reply:
            if handler is not None:
                try:
                    await await_maybe(handler(callback))
                except Exception as exc:  # noqa: BLE001 - isolation boundary around an MCP client's handler
                    _log.debug("%s callback of %s not delivered: %s", callback.kind, callback.request_id, exc)
            return
        task = asyncio.get_running_loop().create_task(self._answer(msg, handler, callback))
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _answer(self, msg: Msg, handler: CallbackHandler | None, callback: ToolCallback) -> None:
        answer: dict[str, Any]
        if handler is None:
            answer = {"error": f"the call {callback.request_id} is no longer waiting for an answer"}
        else:
            try:
                answer = {"result": await await_maybe(handler(callback))}
            except Exception as exc:  # noqa: BLE001 - isolation boundary around an MCP client's handler
                _log.debug("%s callback of %s failed: %r", callback.kind, callback.request_id, exc)
                answer = {"error": f"{type(exc).__name__}: {exc}"}  # the tool gets the failure as its answer
        assert self.mesh.nc is not None
        await self.mesh.nc.publish(msg.reply, encode(answer))
