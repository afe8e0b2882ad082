"""The caller's side of durable calls: publish into the work queue, wait for the result.

See :mod:`toolmesh._transport.durable` for the whole path and docs/reliability.md for what it
guarantees.  A caller reading the results bucket gets only results of its own
calls: an entry bound to another tool, other arguments or another identity is
answered ``bad_request`` (:mod:`toolmesh._transport.durable_results`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import anyio
import msgspec
import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js.kv import KeyValue
from nats.nuid import NUID
from toolmesh._config import Settings
from toolmesh._errors import BrokerError, tool_error
from toolmesh._pipeline.identity import IDENTITY_HEADER
from toolmesh._transport.durable import MSG_ID_HEADER, REPLY_HEADER
from toolmesh._transport.durable_results import (
    UNREADABLE,
    CallBinding,
    arguments_digest,
    id_taken,
    read_entry,
    wait_for_result,
)
from toolmesh._transport.durable_storage import ensure_consumer, ensure_durable_storage
from toolmesh.contracts import ErrorCode, ToolError, ToolRequest, ToolResult, decode_result

__all__ = ["DurableQueue"]

_log = logging.getLogger("toolmesh.durable")

_LAST_LOOK = 0.25  # seconds a caller whose wait is over still gives the results bucket
_nuid = NUID()


class DurableQueue:
    """The caller's side: publish durable requests and wait for their results (one per ``Mesh``)."""

    def __init__(self, nc: NATS, settings: Settings) -> None:
        self.nc = nc
        self.settings = settings
        self.js = nc.jetstream()
        self.kv: KeyValue | None = None
        self._consumers: set[str] = set()
        self._inbox = nc.new_inbox()
        self._waiting: dict[str, asyncio.Future[bytes]] = {}
        self._subscription: Any = None
        self._lock = anyio.Lock()

    async def _prepare(self, tool: str) -> KeyValue:
        async with self._lock:
            if self.kv is None:
                self.kv = await ensure_durable_storage(self.js, self.settings)
                self._subscription = await self.nc.subscribe(self._inbox + ".*", cb=self._on_reply)
            if tool not in self._consumers:
                await ensure_consumer(self.js, self.settings, tool)
                self._consumers.add(tool)
        return self.kv

    async def _on_reply(self, msg: Msg) -> None:
        future = self._waiting.get(msg.subject.rsplit(".", 1)[-1])
        if future is not None and not future.done():
            future.set_result(msg.data)

    async def send(
        self, request: ToolRequest, payload: bytes, wait: float, headers: dict[str, str] | None = None
    ) -> ToolResult:
        """Enqueue ``request`` (encoded as ``payload``) and wait up to ``wait`` s for its result.

        ``headers`` (trace context, a signed identity) travel with the request.  A
        repeat of an id answers the stored result only when it was made by the same
        call: same tool, arguments and signed identity.
        """
        try:
            kv = await self._prepare(request.tool)
        except BrokerError as exc:
            return ToolResult.failure(
                request.id, request.tool, exc.to_tool_error()
            )
        # The identity the node will verify is the one signed in the headers (none: anonymous).
        binding = CallBinding.of(request, (headers or {}).get(IDENTITY_HEADER))
        # One deadline for the whole call: a slow publish confirmation (a stream-leader
        # election) leaves less time to wait for the result, not more.
        deadline = time.monotonic() + wait
        token = _nuid.next().decode()
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[token] = future
        headers = {**(headers or {}), MSG_ID_HEADER: request.id, REPLY_HEADER: f"{self._inbox}.{token}"}
        try:
            try:
                ack = await self.js.publish(
                    self.settings.subjects.durable(request.tool), payload, headers=headers,
                    timeout=min(max(deadline - time.monotonic(), 0.02), 5.0),
                )
            except nats.errors.Error as exc:  # unconfirmed: a retry with the same id is safe
                _log.warning("durable call %s not confirmed: %r", request.id, exc)
                return ToolResult.failure(
                    request.id,
                    request.tool,
                    tool_error(
                        ErrorCode.UNAVAILABLE,
                        f"the durable queue did not confirm call {request.id!r}"
                        f" ({type(exc).__name__}: {exc}); retry with the same id (a stored copy is not run twice)",
                    ),
                )
            if ack.duplicate:
                # An earlier call with this id exists: its result is (or will be) stored.
                remaining = max(0.0, deadline - time.monotonic())
                return await wait_for_result(kv, request, binding, remaining, waited=wait)
            with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
                data = await future
                try:
                    return decode_result(data)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    return ToolResult.failure(
                        request.id,
                        request.tool,
                        ToolError(code=ErrorCode.INTERNAL, message=f"the node's reply is not a ToolResult: {exc}"),
                    )
            return await wait_for_result(kv, request, binding, 0.0, look=_LAST_LOOK, waited=wait)
        finally:
            self._waiting.pop(token, None)

    async def result(
        self,
        request_id: str,
        *,
        identity: str | None,
        tool: str | None = None,
        arguments: dict[str, Any] | None = None,
    ) -> ToolResult | None:
        """The stored result of an earlier durable call by ``identity`` (``None``: not finished, or expired).

        An id that belongs to another caller's call (or to another ``tool`` or other
        ``arguments``, when given) is answered ``bad_request``, never with that call's result.
        """
        if self.kv is None:
            self.kv = await ensure_durable_storage(self.js, self.settings)
        entry = await read_entry(self.kv, request_id)
        if entry is None:
            return None
        call = entry.call
        if (
            entry is UNREADABLE
            or (call is None and entry.result is not None)
            or (call is not None and call.identity != identity)
            or (call is not None and tool is not None and call.tool != tool)
            or (call is not None and arguments is not None and call.arguments != arguments_digest(arguments))
        ):
            return id_taken(request_id, tool or "")
        return entry.result
