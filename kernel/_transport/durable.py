"""Durable calls: a JetStream work queue in front of the nodes, results kept by request id.

The fast path (core NATS request-reply) loses a call whose node dies. A
durable call instead goes through JetStream:

1. the caller publishes the ``ToolRequest`` on ``<prefix>.durable.<token>``
   with ``Nats-Msg-Id: <request id>``; the work-queue stream
   ``toolmesh_durable_<prefix>`` stores it (and drops a second publish of
   the same id within ``durable_result_ttl``);
2. a push consumer per tool delivers it on the tool's ordinary request
   subject to the queue group every serving node already listens in, with a
   ``$JS.ACK.…`` reply subject — that is how a node tells the two paths apart;
3. the node answers "still working" every third of ``durable_ack_wait``,
   runs the call, **stores the result** in the key-value bucket
   ``toolmesh_results_<prefix>`` under the request id, sends it to the
   caller's reply subject (header ``Toolmesh-Reply``), and only then acks;
4. a node that dies before the ack leaves the message un-acked: JetStream
   hands it to another node after ``durable_ack_wait``; that node finds a
   stored result (and answers with it) or runs the call.

A stored result answers only the call that made it: same tool, same
arguments, same verified caller (:mod:`toolmesh._transport.durable_results`), and the
caller must still be authorized for the tool.  A delivery that cannot be
served (undecodable, a ``Nats-Msg-Id`` that is not its id, a handler that
raises) is answered, logged once and terminated, never redelivered in a loop.

A call is durable when the caller asks (``Mesh.call(..., durable=True)``,
``ToolRequest.durable``) or when the tool's spec says ``durable=True``; a
node enqueues a fast-path request for such a tool itself. What this does
and does not guarantee is written down in docs/reliability.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import msgspec
import nats.errors
from nats.aio.msg import Msg
from nats.js.errors import NotFoundError, ServiceUnavailableError
from nats.js.kv import KeyValue
from toolmesh._errors import BrokerError, CallRejected, ToolmeshError
from toolmesh._markers import hookimpl
from toolmesh._pipeline.authorization import check_call_allowed
from toolmesh._pipeline.context import CallContext
from toolmesh._pipeline.identity import IDENTITY_HEADER, SIGNATURE_HEADER, sign_request
from toolmesh._pipeline.results import failure_from
from toolmesh._transport.durable_results import (
    UNREADABLE,
    CallBinding,
    StoredEntry,
    arguments_digest,
    decode_entry,
    id_taken,
    read_entry,
    result_key,
    wait_for_result,
)
from toolmesh._transport.durable_storage import MAX_ACK_PENDING, ensure_consumer, ensure_durable_storage
from toolmesh.contracts import (
    ErrorCode,
    ToolRequest,
    ToolResult,
    ToolSpec,
    decode_request,
    encode,
)

if TYPE_CHECKING:
    from nats.aio.client import Client
    from toolmesh._config import Settings
    from toolmesh._pipeline.kernel import Kernel

__all__ = [
    "ATTEMPT_STATE",
    "MAX_ACK_PENDING",
    "REPLY_HEADER",
    "DurableWorker",
    "ServingNode",
    "ensure_consumer",
    "ensure_durable_storage",
    "is_durable_delivery",
    "result_key",
]

REPLY_HEADER = "Toolmesh-Reply"
"""Header of a durable request: where the node sends the result (the caller's inbox)."""

MSG_ID_HEADER = "Nats-Msg-Id"
"""JetStream's de-duplication header; toolmesh puts the request id in it."""

JS_ACK_PREFIX = "$JS.ACK."
"""Reply subjects of JetStream deliveries start with this."""

ATTEMPT_STATE = "toolmesh.durable_attempt"
"""Key of ``CallContext.state`` holding which execution of a durable call this is (1, 2, …).

Above 1 an earlier node died while running the call — possibly after the tool's
side effect and before its result was stored.  A tool with external effects
checks them (keyed by ``context.request.id``) before acting again."""

REDELIVER_AFTER = 1.0
"""Seconds before a delivery handed back (result not stored, tool not served here) comes again."""

_BROKER_TROUBLE = (
    # Errors of the connection or of a JetStream leader election: the message stays and comes
    # back after durable_ack_wait.  Anything else a handler raises would fail every time.
    nats.errors.ConnectionClosedError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.ConnectionDrainingError,
    nats.errors.StaleConnectionError,
    nats.errors.OutboundBufferLimitError,
    nats.errors.NoRespondersError,
    ServiceUnavailableError,
    TimeoutError,  # nats.errors.TimeoutError and asyncio's included
    ConnectionError,
    BrokerError,  # the same troubles, met through toolmesh._transport.nats_errors
)
_UNPARSABLE_ACK = (nats.errors.Error, ValueError, IndexError, OverflowError, OSError)
"""What nats.py's ``Msg.metadata`` raises for an ack subject it cannot parse (not JetStream's, or mangled)."""
_SHOWN = 200  # characters of a foreign value or error message quoted in a log line
_log = logging.getLogger("toolmesh.durable")


def is_durable_delivery(msg: Msg) -> bool:
    """True for a message JetStream delivered (its reply subject is an ack subject)."""
    return bool(msg.reply) and msg.reply.startswith(JS_ACK_PREFIX)


def _first_delivery(msg: Msg) -> bool:
    try:
        return msg.metadata.num_delivered == 1
    except _UNPARSABLE_ACK as exc:  # take the safe path: look the id up
        _log.debug("delivery count not readable from %r: %r", msg.reply, exc)
        return False


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else str(value)
    return repr(text) if len(text) <= _SHOWN else f"{text[:_SHOWN]!r}… ({len(text)} characters)"


def _describe(msg: Msg) -> str:
    """A durable message for a log line: stream sequence, subject and ``Nats-Msg-Id``."""
    try:
        sequence: object = msg.metadata.sequence.stream
    except _UNPARSABLE_ACK:  # not parsable from the ack subject: the log line leaves it out
        sequence = "?"
    return f"#{sequence} on {msg.subject} (Nats-Msg-Id {_shown((msg.headers or {}).get(MSG_ID_HEADER, ''))})"


_RUN, _ANSWER, _REFUSE, _DEFER = "run", "answer", "refuse", "defer"
"""What ``finish`` does with a delivery: store the result then ack; ack only; terminate; hand back."""


class _Delivery:
    """One durable message a node is working on."""

    __slots__ = ("attempt", "binding", "heartbeat", "msg", "outcome", "request_id")

    def __init__(self, msg: Msg, request_id: str) -> None:
        self.msg = msg
        self.request_id = request_id
        self.outcome = _RUN
        self.binding: CallBinding | None = None
        self.attempt = 1
        self.heartbeat: asyncio.Task[None] | None = None


class ServingNode(Protocol):
    """What the durable worker uses of its ``Node``: its name, settings, NATS connection and kernel.

    The node imports this module to serve durable deliveries, so the worker names it by what it uses.
    """

    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def nc(self) -> Client | None: ...

    @property
    def kernel(self) -> Kernel: ...


class DurableWorker:
    """The node's side: serve durable deliveries exactly as the fast path does, plus store and ack.

    Registered on the node's kernel as a plugin so it creates consumers for
    tools declared ``durable`` whenever the tool set changes.
    """

    def __init__(self, node: ServingNode, kv: KeyValue) -> None:
        assert node.nc is not None
        self.node = node
        self.nc = node.nc
        self.js = node.nc.jetstream()
        self.settings = node.settings
        self.kv = kv
        self._active: dict[str, _Delivery] = {}  # running calls by request id
        self._deliveries: dict[int, _Delivery] = {}  # every delivery begin() took, by id() of its message
        self._consumers: set[str] = set()

    @classmethod
    async def open(cls, node: ServingNode) -> DurableWorker:
        """Set up storage and register on the node's kernel."""
        assert node.nc is not None
        worker = cls(node, await ensure_durable_storage(node.nc.jetstream(), node.settings))
        node.kernel.register_plugin(worker, name=f"toolmesh.durable.{node.name}")
        return worker

    def _failure(
        self, request_id: str, tool: str, code: ErrorCode, message: str, **fields: Any
    ) -> ToolResult:
        """A failure answered by this node (its name on the result, as on the node's own answers)."""
        return failure_from(self.node.name, request_id, tool, code, message, **fields)

    # ---------------------------------------------------------- consumers

    async def sync_consumers(self, tools: list[ToolSpec]) -> None:
        """Make sure every tool declared ``durable`` has its consumer."""
        for spec in tools:
            if spec.durable and spec.name not in self._consumers:
                await ensure_consumer(self.js, self.settings, spec.name)
                self._consumers.add(spec.name)

    @hookimpl
    async def toolmesh_tools_changed(self, kernel: Kernel, tools: list[ToolSpec]) -> None:
        if kernel is self.node.kernel:
            await self.sync_consumers(tools)

    @hookimpl(tryfirst=True)
    def toolmesh_before_call(self, request: ToolRequest, context: CallContext) -> None:
        # Tell the tool which attempt this is (see ATTEMPT_STATE); never changes the call.
        delivery = self._active.get(request.id)
        if delivery is not None:
            context.state[ATTEMPT_STATE] = delivery.attempt

    # ---------------------------------------------------------- deliveries

    def busy(self, msg: Msg) -> bool:
        """True when this node already works on the request (a redelivery of a live call): ignore it."""
        headers = msg.headers or {}
        return headers.get(MSG_ID_HEADER, "") in self._active

    async def defer(self, msg: Msg, delay: float) -> None:
        """Give a delivery back for later (this node is at a limit): JetStream redelivers after ``delay``."""
        try:
            await msg.nak(delay=delay)
        except nats.errors.Error as exc:  # the ack wait redelivers it anyway
            _log.debug("nak failed: %r", exc)

    def wants(self, request: ToolRequest) -> bool:
        """True when a fast-path request must take the durable path (asked for, or the tool says so)."""
        if request.durable:
            return True
        spec = self.node.kernel.get_tool(request.tool)
        return spec is not None and spec.durable

    async def enqueue(self, msg: Msg, request: ToolRequest) -> None:
        """Move a fast-path request into the durable queue; the result goes to its reply subject."""
        try:
            await ensure_consumer(self.js, self.settings, request.tool)
            subject = self.settings.subjects.durable(request.tool)
            headers = {
                name: value
                for name, value in (msg.headers or {}).items()
                if name not in (IDENTITY_HEADER, SIGNATURE_HEADER)
            }
            identity = request.caller.identity if request.caller is not None else None
            if identity is not None and self.settings.identity_secret is not None:
                # The caller's signature covered the request subject; this node verified it
                # and vouches for the identity on the durable subject with the mesh's secret.
                headers.update(sign_request(self.settings.identity_secret, identity, subject, msg.data))
            headers[MSG_ID_HEADER] = request.id
            if msg.reply:
                headers[REPLY_HEADER] = msg.reply
            ack = await self.js.publish(subject, msg.data, headers=headers)
        except (nats.errors.Error, ToolmeshError) as exc:  # the caller hears why at once
            _log.warning("could not enqueue durable call %s: %r", _shown(request.id), exc)
            await self._reply(msg.reply, self._failure(
                request.id, request.tool, ErrorCode.UNAVAILABLE,
                f"could not enqueue durable call {request.id!r} ({type(exc).__name__}: {exc}); retry it",
            ))
            return
        if ack.duplicate and msg.reply:
            wait = request.timeout if request.timeout is not None else self.settings.default_timeout
            await self._reply(msg.reply, await self._repeat(request, wait))

    async def _repeat(self, request: ToolRequest, wait: float) -> ToolResult:
        """The answer to a repeat of a stored id: authorized first, then only the same call's result."""
        identity = request.caller.identity if request.caller is not None else None  # verified by the node
        refusal = await self._refusal(request, identity)
        if refusal is not None:
            return refusal
        return await wait_for_result(self.kv, request, CallBinding.of(request, identity), wait)

    async def _refusal(self, request: ToolRequest, identity: str | None) -> ToolResult | None:
        """The answer when ``identity`` may not (or no longer) call ``request.tool`` here, else ``None``."""
        spec = self.node.kernel.get_tool(request.tool)
        if spec is None:
            return self._failure(
                request.id, request.tool, ErrorCode.UNAVAILABLE,
                f"this node no longer serves {request.tool!r}; call again with the same id",
            )
        try:
            await check_call_allowed(self.node.kernel, identity, spec)
        except CallRejected as exc:
            return msgspec.structs.replace(
                ToolResult.failure(request.id, request.tool, exc.to_tool_error()), node=self.node.name
            )
        return None

    async def begin(self, msg: Msg, request: ToolRequest) -> ToolResult | None:
        """Start work on a delivery: ``None`` to run it, else the answer (a stored result, a refusal)."""
        delivery = _Delivery(msg, request.id)
        msg_id = (msg.headers or {}).get(MSG_ID_HEADER)
        if msg_id != request.id:
            # The stream de-duplicates by the header: a body id that differs from it is not
            # protected, so it could reach (and overwrite) another call's stored result.
            delivery.outcome = _REFUSE
            self._deliveries[id(msg)] = delivery
            return self._failure(
                request.id, request.tool, ErrorCode.BAD_REQUEST,
                f"durable request {_shown(request.id)} came with Nats-Msg-Id {_shown(msg_id or '')}; publish"
                f" durable requests with the header Nats-Msg-Id equal to the request id",
            )
        if self.node.kernel.get_tool(request.tool) is None:
            delivery.outcome = _DEFER  # a node that serves it takes it (the subscription is going away)
            self._deliveries[id(msg)] = delivery
            return self._failure(request.id, request.tool, ErrorCode.UNAVAILABLE, "not served here")
        identity = request.caller.identity if request.caller is not None else None  # verified by the node
        delivery.binding = binding = CallBinding.of(request, identity)
        self._active[request.id] = delivery
        self._deliveries[id(msg)] = delivery
        # A first delivery needs no look-up: the stream admits an id once per result TTL,
        # so nothing can be stored for it yet. This saves a round trip on every durable call.
        try:
            found = None if _first_delivery(msg) else await read_entry(self.kv, request.id)
        except BaseException:
            self._release(msg)  # not started: a later redelivery must not look busy
            raise
        if found is UNREADABLE:
            _log.warning("replacing an unreadable results entry for durable call %s", _shown(request.id))
            found = None
        elif found is not None and not found.belongs_to(binding):
            delivery.outcome = _REFUSE
            return id_taken(request.id, request.tool)
        if found is not None and found.result is not None:
            delivery.outcome = _ANSWER  # stored before (a redelivery): authorized again, nothing runs
            return await self._refusal(request, identity) or found.result
        attempts = found.attempts if found is not None else 0
        if attempts >= self.settings.durable_max_attempts:
            return self._failure(
                request.id, request.tool, ErrorCode.EXECUTION_FAILED,
                f"durable call {request.id!r} of {request.tool!r} was started {attempts}x on nodes that died before"
                f" storing a result (durable_max_attempts = {self.settings.durable_max_attempts}); it is not run"
                " again: fix the tool (or raise durable_max_attempts), then call with a new id",
            )
        delivery.attempt = attempts + 1
        # Count this attempt without waiting for the store's ack (same connection as the
        # result written later, so the result always lands after the marker).
        await self.nc.publish(
            f"$KV.{self.settings.subjects.results_bucket}.{result_key(request.id)}",
            encode(StoredEntry(call=binding, attempts=delivery.attempt)),
        )
        delivery.heartbeat = asyncio.get_running_loop().create_task(self._keep_alive(delivery, request))
        return None

    async def _keep_alive(self, delivery: _Delivery, request: ToolRequest) -> None:
        # Tell JetStream the call is alive so it is not handed to another node; stop at the
        # call's own deadline (plus one ack wait) so a stuck or cancelled call cannot pin it.
        period = self.settings.durable_ack_wait / 3
        limit = request.timeout if request.timeout is not None else self.settings.default_timeout
        until = time.monotonic() + limit + self.settings.durable_ack_wait
        try:
            while time.monotonic() < until:
                await anyio.sleep(period)
                try:
                    await delivery.msg.in_progress()
                except nats.errors.Error as exc:  # connection trouble: the ack wait decides
                    _log.debug("in-progress ack failed: %r", exc)
        finally:
            # a call that never finished (cancelled) must not make later redeliveries look busy
            if self._active.get(delivery.request_id) is delivery:
                del self._active[delivery.request_id]

    def _release(self, msg: Msg) -> _Delivery | None:
        """Forget the delivery of ``msg``: no longer running, no heartbeat."""
        delivery = self._deliveries.pop(id(msg), None)
        if delivery is not None:
            if delivery.heartbeat is not None:
                delivery.heartbeat.cancel()
            if self._active.get(delivery.request_id) is delivery:
                del self._active[delivery.request_id]
        return delivery

    async def finish(self, msg: Msg, result: ToolResult) -> None:
        """Store the result, send it to the caller, then ack (in that order: see the module docstring)."""
        delivery = self._release(msg)
        reply = (msg.headers or {}).get(REPLY_HEADER)
        if delivery is None or delivery.outcome == _REFUSE:
            # Undecodable, refused at the door (delivery None: answered before begin()), or an id
            # that is not its own: every redelivery would end the same way.
            _log.warning("removed durable message %s: %s", _describe(msg), _shown(_reason(result)))
            await self._record_unserved(msg, result)
            await self._reply(reply, result)
            await self._settle(msg, "term")
            return
        if delivery.outcome == _DEFER:
            await self.defer(msg, REDELIVER_AFTER)
            return
        if delivery.outcome == _RUN and not await self._store(delivery, result):
            await self.defer(msg, REDELIVER_AFTER)  # not stored, so not acked: it runs again
            return
        await self._reply(reply, result)
        await self._settle(msg, "ack")

    async def _store(self, delivery: _Delivery, result: ToolResult) -> bool:
        entry = StoredEntry(call=delivery.binding, result=result)
        try:
            try:
                await self.kv.put(result_key(delivery.request_id), encode(entry))
            except nats.errors.MaxPayloadError:
                # Over the server's limit with the binding around it: a retry would run the
                # tool again and fail the same way, so the caller gets (and keeps) why instead.
                failure = self._failure(
                    result.id, result.tool, ErrorCode.TOO_LARGE,
                    f"the result of {result.tool!r} is too large to store for a durable call (the NATS"
                    " server's max_payload); return less data or a reference to it",
                )
                await self.kv.put(result_key(delivery.request_id), encode(StoredEntry(call=delivery.binding,
                                                                                      result=failure)))
        except (nats.errors.Error, msgspec.EncodeError) as exc:  # not stored: the caller hands the call back
            _log.error("could not store the result of durable call %s: %r; it will be redelivered",
                       _shown(delivery.request_id), exc)
            return False
        return True

    async def abandon(self, msg: Msg, request: ToolRequest | ToolResult | None, exc: Exception) -> None:
        """A durable delivery whose handling raised ``exc``: kept for redelivery if the broker is at fault, else removed.

        Whatever else fails would fail again on every redelivery, so the message is
        terminated (one log line, no traceback), its caller answered ``internal``.
        """
        delivery = self._release(msg)
        if isinstance(exc, _BROKER_TROUBLE):
            _log.warning("durable message %s stays queued after a broker error (%s: %s); it comes again after"
                         " durable_ack_wait", _describe(msg), type(exc).__name__, _shown(exc))
            return
        _log.error("removed durable message %s: serving it raised %s: %s", _describe(msg), type(exc).__name__,
                   _shown(exc))
        _log.debug("the error that removed a durable message", exc_info=exc)
        request_id = request.id if request is not None else (msg.headers or {}).get(MSG_ID_HEADER, "")
        tool = request.tool if request is not None else ""
        failure = self._failure(
            request_id, tool, ErrorCode.INTERNAL,
            f"the node could not serve durable call {_shown(request_id)} ({type(exc).__name__}); it was removed"
            " from the queue and is not run again (it may have run once): call again with a fresh id",
        )
        await self._record_unserved(msg, failure, delivery.binding if delivery is not None else None)
        await self._reply((msg.headers or {}).get(REPLY_HEADER), failure)
        await self._settle(msg, "term")

    async def _record_unserved(self, msg: Msg, result: ToolResult, binding: CallBinding | None = None) -> None:
        """Keep the answer of a removed message under its ``Nats-Msg-Id`` (a repeat is dropped by de-duplication).

        Without it, a repeat would wait for a result that never comes.  The entry is bound
        to ``binding`` (the delivery's call), else to the call as far as the body tells (the
        claimed identity: it holds a refusal only), else it is a tombstone.  It replaces
        nothing but this call's own attempt marker: never a result, never another call's entry.
        """
        msg_id = (msg.headers or {}).get(MSG_ID_HEADER)
        if not msg_id:
            return
        if binding is None and result.id == msg_id:
            try:
                request = decode_request(msg.data)
                tool = request.tool or self.settings.subjects.tool_from_request(msg.subject)
                claimed = (msg.headers or {}).get(IDENTITY_HEADER)
                binding = CallBinding(tool=tool, arguments=arguments_digest(request.arguments), identity=claimed)
            except ValueError as exc:  # msgspec's decode errors too: the body tells nothing, keep a tombstone
                _log.debug("removed durable message %s has no readable call: %r", _shown(msg_id), exc)
                binding = None
        key, value = result_key(msg_id), encode(StoredEntry(call=binding, result=result))
        try:
            try:
                current = await self.kv.get(key)
            except NotFoundError:  # KeyNotFoundError and KeyDeletedError included
                await self.kv.create(key, value)
                return
            existing = decode_entry(current.value) if current.value else UNREADABLE
            if binding is not None and existing.result is None and existing.belongs_to(binding):
                await self.kv.update(key, value, last=current.revision)
        except nats.errors.Error as exc:  # written meanwhile, or the store is away
            _log.debug("no entry kept for removed durable message %s: %r", _shown(msg_id), exc)

    async def _settle(self, msg: Msg, how: str) -> None:
        try:
            await (msg.ack() if how == "ack" else msg.term())
        except nats.errors.Error as exc:  # connection trouble: the ack wait redelivers, then it settles
            _log.debug("%s of a durable message failed: %r", how, exc)

    async def _reply(self, subject: str | None, result: ToolResult) -> None:
        if subject:
            try:
                await self.nc.publish(subject, encode(result))
            except nats.errors.Error as exc:  # the result is stored; the caller can fetch it
                _log.debug("could not send durable result to %s: %r", subject, exc)


def _reason(result: ToolResult) -> str:
    return f"{result.error.code.value}: {result.error.message}" if result.error is not None else "answered"
