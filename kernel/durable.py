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

A call is durable when the caller asks (``Mesh.call(..., durable=True)``,
``ToolRequest.durable``) or when the tool's spec says ``durable=True``; a
node enqueues a fast-path request for such a tool itself. What this does
and does not guarantee is written down in docs/reliability.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, KeyValueConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, NotFoundError
from nats.js.kv import KeyValue
from nats.nuid import NUID
from toolmesh.contracts import (
    ErrorCode,
    ToolError,
    ToolRequest,
    ToolResult,
    ToolSpec,
    decode_result,
    encode,
    encode_token,
)

from .config import Settings
from .context import CallContext
from .errors import BrokerError
from .identity import IDENTITY_HEADER, SIGNATURE_HEADER, sign_request
from .markers import hookimpl

if TYPE_CHECKING:
    from .kernel import Kernel
    from .node import Node

__all__ = [
    "ATTEMPT_STATE",
    "REPLY_HEADER",
    "DurableQueue",
    "DurableWorker",
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

MAX_ACK_PENDING = 1024
"""Durable calls of one tool handed out and not yet acked, across all nodes: bounds node memory."""

_KEY_PATTERN = re.compile(r"[-/_=a-zA-Z0-9]+(\.[-/_=a-zA-Z0-9]+)*")
_POLL_START, _POLL_MAX = 0.02, 0.5
_LAST_LOOK = 0.25  # seconds a caller whose wait is over still gives the results bucket
_log = logging.getLogger("toolmesh.durable")
_nuid = NUID()


def is_durable_delivery(msg: Msg) -> bool:
    """True for a message JetStream delivered (its reply subject is an ack subject)."""
    return bool(msg.reply) and msg.reply.startswith(JS_ACK_PREFIX)


def _first_delivery(msg: Msg) -> bool:
    try:
        return msg.metadata.num_delivered == 1
    except Exception:  # noqa: BLE001 - an unparsable ack subject: take the safe path
        return False


def result_key(request_id: str) -> str:
    """The key-value key of a request id: the id itself when it is a valid key, else its SHA-256."""
    if len(request_id) <= 200 and _KEY_PATTERN.fullmatch(request_id):
        return request_id
    return "sha256=" + hashlib.sha256(request_id.encode()).hexdigest()


def consumer_name(tool: str) -> str:
    """The durable consumer of ``tool`` (consumer names may not contain ``.``; tokens do not)."""
    return "tool_" + encode_token(tool)


async def ensure_durable_storage(js: JetStreamContext, settings: Settings) -> KeyValue:
    """Create the work-queue stream and the results bucket when missing; returns the bucket."""
    subjects = settings.subjects
    ttl = settings.durable_result_ttl
    try:
        try:
            await js.stream_info(subjects.durable_stream)
        except NotFoundError:
            await js.add_stream(
                StreamConfig(
                    name=subjects.durable_stream,
                    subjects=[f"{subjects.prefix}.durable.*"],
                    retention=RetentionPolicy.WORK_QUEUE,
                    storage=StorageType.FILE,
                    num_replicas=settings.durable_replicas,
                    # a repeat of an id within the result TTL is dropped at the door
                    duplicate_window=ttl,
                )
            )
        try:
            return await js.key_value(subjects.results_bucket)
        except BucketNotFoundError:
            config = KeyValueConfig(
                bucket=subjects.results_bucket,
                history=1,
                ttl=ttl,
                storage=StorageType.FILE,
                replicas=settings.durable_replicas,
            )
            try:
                return await js.create_key_value(config=config)
            except Exception:  # noqa: BLE001 - another node created it first
                return await js.key_value(subjects.results_bucket)
    except BrokerError:
        raise
    except Exception as exc:
        raise BrokerError(
            f"cannot set up durable calls on stream {subjects.durable_stream!r} ({type(exc).__name__}: {exc});"
            " durable calls need JetStream (nats-server -js) and permission to use it"
        ) from exc


async def ensure_consumer(js: JetStreamContext, settings: Settings, tool: str) -> None:
    """Create the push consumer that hands durable calls of ``tool`` to the nodes serving it.

    It delivers to the tool's ordinary request subject in the node queue group,
    so nodes need no extra subscription.  An existing consumer is left as it is.
    """
    from .node import QUEUE_GROUP  # the node module imports this one

    subjects = settings.subjects
    name = consumer_name(tool)
    try:
        await js.consumer_info(subjects.durable_stream, name)
        return
    except NotFoundError:
        pass
    config = ConsumerConfig(
        durable_name=name,
        deliver_subject=subjects.request(tool),
        deliver_group=QUEUE_GROUP,
        filter_subject=subjects.durable(tool),
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=settings.durable_ack_wait,
        # Unlimited: a node at its limit hands calls back (nak), which counts as a delivery.
        # Calls that keep killing nodes are bounded by durable_max_attempts instead.
        max_deliver=-1,
        max_ack_pending=MAX_ACK_PENDING,
    )
    try:
        await js.add_consumer(subjects.durable_stream, config=config)
    except Exception as exc:  # noqa: BLE001 - a concurrent creator may have won; check it exists
        try:
            await js.consumer_info(subjects.durable_stream, name)
        except NotFoundError:
            raise BrokerError(f"cannot create the durable consumer {name!r} for tool {tool!r}: {exc}") from exc


class _Attempts(msgspec.Struct, frozen=True):
    """Stored under a request id while it has no result: how many executions started."""

    attempts: int


_attempts_decoder = msgspec.json.Decoder(_Attempts)


async def _stored(kv: KeyValue, request_id: str) -> ToolResult | int:
    """The stored result of ``request_id``, else the number of executions started so far."""
    try:
        entry = await kv.get(result_key(request_id))
    except (KeyNotFoundError, NotFoundError):
        return 0
    if not entry.value:
        return 0
    try:
        return decode_result(entry.value)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    try:
        return _attempts_decoder.decode(entry.value).attempts
    except (msgspec.DecodeError, msgspec.ValidationError):
        _log.warning("ignoring an unreadable stored entry for request %s", request_id)
        return 0


async def stored_result(kv: KeyValue, request_id: str) -> ToolResult | None:
    """The stored result of ``request_id``, or ``None``."""
    found = await _stored(kv, request_id)
    return found if isinstance(found, ToolResult) else None


async def _stored_by(kv: KeyValue, request_id: str, limit: float) -> ToolResult | None:
    """The stored result of ``request_id`` if the bucket answers within ``limit`` seconds, else ``None``.

    For callers waiting for an answer only: a bucket that cannot be read right now
    (a stream-leader election, a reconnect) reads as "no result yet", so the caller
    gets a retryable answer by its deadline instead of an exception.  A node deciding
    whether to run a call must not read it that way (see ``DurableWorker.begin``).
    """
    with anyio.move_on_after(limit):
        try:
            return await stored_result(kv, request_id)
        except Exception as exc:  # noqa: BLE001 - unreadable for now: the caller asks again with the same id
            _log.debug("results bucket not readable for %s: %s", request_id, exc)
    return None


async def wait_for_result(kv: KeyValue, request_id: str, wait: float) -> ToolResult | None:
    """Poll the results bucket until ``request_id`` has a result or ``wait`` seconds passed."""
    deadline = time.monotonic() + wait
    pause = _POLL_START
    while True:
        result = await _stored_by(kv, request_id, max(_POLL_START, deadline - time.monotonic()))
        if result is not None or time.monotonic() >= deadline:
            return result
        await anyio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, _POLL_MAX)


def _still_queued(request: ToolRequest, wait: float) -> ToolResult:
    return ToolResult.failure(
        request.id,
        request.tool,
        ToolError(
            code=ErrorCode.TIMEOUT,
            message=(
                f"no result for durable call {request.id!r} of {request.tool!r} within {wait:g}s; it stays queued"
                " and will run when a node is free: call again with the same id to get its result"
            ),
            retryable=True,
            details={"durable": True, "request_id": request.id},
        ),
    )


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

        ``headers`` (trace context, a signed identity) travel with the request.
        """
        try:
            kv = await self._prepare(request.tool)
        except BrokerError as exc:
            return ToolResult.failure(
                request.id, request.tool, ToolError(code=ErrorCode.UNAVAILABLE, message=str(exc), retryable=True)
            )
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
                    timeout=min(max(deadline - time.monotonic(), _POLL_START), 5.0),
                )
            except Exception as exc:  # noqa: BLE001 - unconfirmed: a retry with the same id is safe
                return ToolResult.failure(
                    request.id,
                    request.tool,
                    ToolError(
                        code=ErrorCode.UNAVAILABLE,
                        message=f"the durable queue did not confirm call {request.id!r} ({type(exc).__name__}: {exc});"
                        " retry with the same id (a stored copy is not run twice)",
                        retryable=True,
                    ),
                )
            if ack.duplicate:
                # An earlier call with this id exists: its result is (or will be) stored.
                remaining = max(0.0, deadline - time.monotonic())
                return await wait_for_result(kv, request.id, remaining) or _still_queued(request, wait)
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
            return await _stored_by(kv, request.id, _LAST_LOOK) or _still_queued(request, wait)
        finally:
            self._waiting.pop(token, None)

    async def result(self, request_id: str) -> ToolResult | None:
        """The stored result of an earlier durable call, or ``None`` (not finished, or expired)."""
        if self.kv is None:
            self.kv = await ensure_durable_storage(self.js, self.settings)
        return await stored_result(self.kv, request_id)


class _Delivery:
    """One durable message a node is working on."""

    __slots__ = ("attempt", "heartbeat", "msg", "request_id", "stored")

    def __init__(self, msg: Msg, request_id: str) -> None:
        self.msg = msg
        self.request_id = request_id
        self.stored = False
        self.attempt = 1
        self.heartbeat: asyncio.Task[None] | None = None


class DurableWorker:
    """The node's side: serve durable deliveries exactly as the fast path does, plus store and ack.

    Registered on the node's kernel as a plugin so it creates consumers for
    tools declared ``durable`` whenever the tool set changes.
    """

    def __init__(self, node: Node, kv: KeyValue) -> None:
        assert node.nc is not None
        self.node = node
        self.nc = node.nc
        self.js = node.nc.jetstream()
        self.settings = node.settings
        self.kv = kv
        self._active: dict[str, _Delivery] = {}
        self._consumers: set[str] = set()

    @classmethod
    async def open(cls, node: Node) -> DurableWorker:
        """Set up storage and register on the node's kernel."""
        assert node.nc is not None
        worker = cls(node, await ensure_durable_storage(node.nc.jetstream(), node.settings))
        node.kernel.register_plugin(worker, name=f"toolmesh.durable.{node.name}")
        return worker

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
        except Exception as exc:  # noqa: BLE001 - the ack wait redelivers it anyway
            _log.debug("nak failed: %s", exc)

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
        except Exception as exc:  # noqa: BLE001 - the caller hears why at once
            await self._reply(msg.reply, self.node._failure(
                request.id, request.tool, ErrorCode.UNAVAILABLE,
                f"could not enqueue durable call {request.id!r} ({type(exc).__name__}: {exc}); retry it",
                retryable=True,
            ))
            return
        if ack.duplicate and msg.reply:
            wait = request.timeout if request.timeout is not None else self.settings.default_timeout
            result = await wait_for_result(self.kv, request.id, wait)
            await self._reply(msg.reply, result or _still_queued(request, wait))

    async def begin(self, msg: Msg, request: ToolRequest) -> ToolResult | None:
        """Start work on a delivery: its stored result if it has one (then nothing runs), else ``None``."""
        delivery = _Delivery(msg, request.id)
        self._active[request.id] = delivery
        # A first delivery needs no look-up: the stream admits an id once per result TTL,
        # so nothing can be stored for it yet. This saves a round trip on every durable call.
        try:
            found = 0 if _first_delivery(msg) else await _stored(self.kv, request.id)
        except BaseException:
            del self._active[request.id]  # not started: a later redelivery must not look busy
            raise
        if isinstance(found, ToolResult):
            delivery.stored = True
            return found
        if found >= self.settings.durable_max_attempts:
            return self.node._failure(
                request.id, request.tool, ErrorCode.EXECUTION_FAILED,
                f"durable call {request.id!r} of {request.tool!r} was started {found}x on nodes that died before"
                f" storing a result (durable_max_attempts = {self.settings.durable_max_attempts}); it is not run"
                " again: fix the tool (or raise durable_max_attempts), then call with a new id",
            )
        delivery.attempt = found + 1
        # Count this attempt without waiting for the store's ack (same connection as the
        # result written later, so the result always lands after the marker).
        await self.nc.publish(
            f"$KV.{self.settings.subjects.results_bucket}.{result_key(request.id)}", encode(_Attempts(found + 1))
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
                except Exception as exc:  # noqa: BLE001 - connection trouble: the ack wait decides
                    _log.debug("in-progress ack failed: %s", exc)
        finally:
            # a call that never finished (cancelled) must not make later redeliveries look busy
            if self._active.get(delivery.request_id) is delivery:
                del self._active[delivery.request_id]

    async def finish(self, msg: Msg, result: ToolResult) -> None:
        """Store the result, send it to the caller, then ack (in that order: see the module docstring)."""
        delivery = self._active.pop(result.id, None) if result.id else None
        if delivery is not None and delivery.heartbeat is not None:
            delivery.heartbeat.cancel()
        reply = (msg.headers or {}).get(REPLY_HEADER)
        if not result.id:
            # undecodable request: nothing to store, and redelivery would fail the same way
            await self._reply(reply, result)
            await msg.term()
            return
        if delivery is None or not delivery.stored:
            try:
                await self.kv.put(result_key(result.id), encode(result))
            except Exception as exc:  # noqa: BLE001 - not stored, so not acked: it runs again elsewhere
                _log.error("could not store the result of durable call %s: %s; it will be redelivered", result.id, exc)
                await self.defer(msg, 1.0)
                return
        await self._reply(reply, result)
        await msg.ack()

    async def _reply(self, subject: str | None, result: ToolResult) -> None:
        if subject:
            try:
                await self.nc.publish(subject, encode(result))
            except Exception as exc:  # noqa: BLE001 - the result is stored; the caller can fetch it
                _log.debug("could not send durable result to %s: %s", subject, exc)
