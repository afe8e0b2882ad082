"""``Node``: a kernel served on NATS.

Each local tool is a queue subscription on ``<prefix>.request.<token>`` (queue
group ``toolmesh``), so every node serving a tool shares its load.  The node
keeps its catalog entry fresh, answers the NATS service protocol, and on stop
drains: its tools leave the catalog at once, no new call is taken, and every
call already taken finishes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import msgspec
import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.nuid import NUID
from opentelemetry.trace import SpanKind
from toolmesh._config import Settings
from toolmesh._errors import BrokerError, CallRejected, ToolmeshError
from toolmesh._markers import hookimpl
from toolmesh._pipeline.backpressure import Admission
from toolmesh._pipeline.context import CallContext, NestedCall
from toolmesh._pipeline.identity import verify_request
from toolmesh._pipeline.json_nesting import nests_deeper_than
from toolmesh._pipeline.kernel import Kernel
from toolmesh._pipeline.results import failure_from
from toolmesh._telemetry.logs import redact_url
from toolmesh._telemetry.tracing import extract_context, record_error, tool_span
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh._transport.broker_keeper import BrokerKeeper
from toolmesh._transport.broker_state import with_local_secrets
from toolmesh._transport.callbacks import NatsCallbackChannel
from toolmesh._transport.caller_subjects import callback_refusal, reply_refusal
from toolmesh._transport.catalog import CatalogBucket, catalog_secret
from toolmesh._transport.connection_log import ConnectionLog
from toolmesh._transport.durable import REPLY_HEADER, DurableWorker, is_durable_delivery
from toolmesh._transport.mesh import Mesh, client_inbox, connect_nats
from toolmesh._transport.nats_auth import connect_options
from toolmesh._transport.running_calls import RunningCall, RunningCalls
from toolmesh._transport.service_protocol import EndpointCounters, ServiceResponder
from toolmesh._transport.shared_cache import SharedCache
from toolmesh._version import package_version
from toolmesh.contracts import (
    QUEUE_GROUP,
    Caller,
    ErrorCode,
    NodeEntry,
    ToolEvent,
    ToolRequest,
    ToolResult,
    ToolSpec,
    decode_cancel,
    decode_request,
    encode,
    is_valid_tool_name,
)

__all__ = ["Node"]
"""Queue group of every tool subscription: one node of the group gets each call."""

_log = logging.getLogger("toolmesh.node")
_nuid = NUID()


def _node_name() -> str:
    host = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in socket.gethostname())[:32] or "node"
    return f"{host}-{os.getpid()}-{_nuid.next().decode()[-6:]}"


class Node:
    """Serve a kernel's tools on NATS; run with ``await node.serve()`` inside a task group."""

    def __init__(
        self,
        kernel: Kernel | None = None,
        *,
        settings: Settings | None = None,
        sources: Iterable[Any] = (),
        plugins: Iterable[object] = (),
        load_entrypoints: bool = True,
    ) -> None:
        self.settings = settings or (kernel.settings if kernel else Settings())
        self.name = self.settings.node_name or _node_name()
        self.kernel = kernel or Kernel(plugins, settings=self.settings, load_entrypoints=load_entrypoints)
        self.kernel.node = self.name
        self.kernel.register_plugin(self, name=f"toolmesh.node.{self.name}")
        self.sources = list(sources)
        self.subjects = self.settings.subjects
        self._keeper: BrokerKeeper | None = None  # the embedded broker, when no URL is configured
        self.connection_log = ConnectionLog(self.name)  # one line per disconnect / reconnect / error
        self.nc: NATS | None = None
        self.url: str | None = None
        self.problems: list[str] = []
        self.endpoints: dict[str, EndpointCounters] = {}
        self.inflight = 0
        self.started_at = 0.0
        self._subscriptions: dict[str, Subscription] = {}
        self._catalog: CatalogBucket | None = None
        self._responder: ServiceResponder | None = None
        self._mesh: Mesh | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._running = RunningCalls(self.subjects)  # who may cancel what (toolmesh._transport.running_calls)
        self._stop = anyio.Event()
        self._idle = anyio.Event()
        self._draining = False
        self.on_ready: Callable[[Node], None] | None = None
        self._admission = Admission(self.name, self.settings.max_concurrency)
        self._durable: DurableWorker | None = None
        self._span_attributes = {  # the same on every call's SERVER span
            "messaging.operation.type": "process", "messaging.operation.name": "process",
            "messaging.consumer.group.name": QUEUE_GROUP, "toolmesh.node": self.name,
        }

    # -------------------------------------------------------------- lifecycle

    @property
    def broker(self) -> EmbeddedBroker | None:
        """The embedded broker this node runs right now (``None`` when it joined another's, or a URL)."""
        return self._keeper.broker if self._keeper is not None else None

    async def _connect(self) -> None:
        url = self.settings.nats_url
        advice = None
        if url is None:
            # Start the embedded broker, or join the one another local node runs (toolmesh._transport.broker_keeper).
            self._keeper = BrokerKeeper(self.settings)
            url = await self._keeper.open()
            self.settings = self._keeper.settings  # --port 0 now names the port it picked
        else:
            advice = (
                "start nats-server there, or leave out --nats / TOOLMESH_NATS_URL (and nats_url in"
                " toolmesh.toml) so that 'toolmesh up' starts an embedded broker"
            )
        # On the embedded broker, sign the catalog with the mesh's generated secret (toolmesh._transport.broker_state).
        self.settings = self.kernel.settings = with_local_secrets(self.settings)
        self.url = self.connection_log.url = url
        self.nc = await connect_nats(
            url,
            name=f"toolmesh-node {self.name}",
            unreachable_advice=advice,
            inbox_prefix=client_inbox(self.settings),  # its own inbox: proves its nested calls' cancels
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            reconnected_cb=self._on_reconnected,
            disconnected_cb=self._on_disconnected,
            error_cb=self._on_nats_error,
            **connect_options(self.settings),  # NATS auth and TLS (toolmesh._transport.nats_auth)
        )
        if self.nc.max_payload < self.settings.max_payload:
            _log.warning(
                "NATS at %s admits messages up to %d bytes, less than this node's max_payload %d: larger results"
                " cannot be sent; lower max_payload or raise the server's max_payload",
                redact_url(url), self.nc.max_payload, self.settings.max_payload,
            )

    async def _on_disconnected(self) -> None:
        self.connection_log.disconnected(closing=self.nc is None or self.nc.is_closed or self.nc.is_draining)
        if self._keeper is not None:
            self._keeper.connection_lost()

    async def _on_nats_error(self, exc: Exception) -> None:
        self.connection_log.error(exc)

    async def serve(self, *, task_status: anyio.abc.TaskStatus[Node] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, start the kernel, serve until :meth:`stop`, then drain and clean up."""
        self.started_at = time.time()
        try:
            await self._connect()
            assert self.nc is not None
            self._mesh = Mesh.over(self.nc, self.settings)
            await self._open_reliability()
            if self.settings.events:
                self.kernel.add_event_sink(self._publish_event)
            self.problems = await self.kernel.start(self.sources)
            if self._durable is not None:
                await self._durable.sync_consumers(self.kernel.tools)
            await self._open_catalog()
            async with anyio.create_task_group() as background:
                await self._sync_subscriptions()
                self._responder = ServiceResponder(
                    self.nc,
                    node=self.name,
                    version=package_version(),
                    queue_group=QUEUE_GROUP,
                    endpoints=self.endpoints,
                    metadata={"prefix": self.subjects.prefix},
                )
                await self._responder.start()
                await self.nc.subscribe(self.subjects.cancel, cb=self._on_cancel)
                await self._publish_entry(changed=True)
                background.start_soon(self._heartbeat)
                if self._keeper is not None:
                    background.start_soon(self._keeper.watch)  # restart or take over the broker
                task_status.started(self)
                if self.on_ready:
                    self.on_ready(self)
                await self._stop.wait()
                await self._drain()  # not shielded: a second signal may cut the drain short
                background.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._close()

    def stop(self) -> None:
        """Ask the node to drain and stop (safe to call more than once)."""
        self._stop.set()

    async def _drain(self) -> None:
        self._draining = True
        if self._catalog is not None:
            try:
                await self._catalog.remove(self.name)
                await self._announce()
            except (nats.errors.Error, ToolmeshError) as exc:  # the broker may already be gone
                _log.warning("could not remove catalog entry: %r", exc)
        for subscription in list(self._subscriptions.values()):
            try:
                await subscription.drain()
            except nats.errors.Error as exc:  # connection lost: nothing more will arrive
                _log.debug("draining a subscription failed: %r", exc)
        self._subscriptions.clear()
        if self.inflight:
            with anyio.move_on_after(self.settings.drain_timeout):
                await self._idle.wait()
            if self.inflight:
                _log.warning("stopping with %d calls unfinished after %ss", self.inflight, self.settings.drain_timeout)

    async def _close(self) -> None:
        for task in list(self._tasks):  # only left after an aborted drain
            task.cancel()
        if self._responder is not None:
            try:
                await self._responder.stop()
            except nats.errors.Error as exc:  # connection lost: its subscriptions are gone with it
                _log.debug("stopping the service responder failed: %r", exc)
        try:
            await self.kernel.stop()
        finally:
            if self.nc is not None and not self.nc.is_closed:
                try:
                    await self.nc.drain()
                except nats.errors.Error as exc:  # a broken connection cannot drain: close it
                    _log.debug("draining the NATS connection failed: %r", exc)
                    await self.nc.close()
            if self._keeper is not None:
                await self._keeper.close()

    # -------------------------------------------------------------- catalog

    def entry(self) -> NodeEntry:
        """This node's catalog entry as of now."""
        return NodeEntry(
            node=self.name,
            host=socket.gethostname(),
            pid=os.getpid(),
            version=package_version(),
            started_at=self.started_at,
            heartbeat_at=time.time(),
            heartbeat=self.settings.heartbeat,
            ttl=self.settings.catalog_ttl,
            tools=tuple(self.kernel.tools),
            draining=self._draining,
        )

    async def _publish_entry(self, *, changed: bool = False) -> None:
        if self._catalog is None or self._draining:
            return
        await self._catalog.put(self.entry())
        if changed:
            await self._announce()

    async def _announce(self) -> None:
        assert self.nc is not None
        await self.nc.publish(self.subjects.catalog_changed(self.name), encode({"node": self.name}))

    async def _heartbeat(self) -> None:
        while True:
            await anyio.sleep(self.settings.heartbeat)
            try:
                await self._publish_entry()
            except (nats.errors.Error, ToolmeshError) as exc:  # keep serving through a broker hiccup
                _log.warning("heartbeat failed: %r", exc)

    async def _open_reliability(self) -> None:
        # Durable calls and the shared cache (toolmesh._transport.durable, toolmesh._transport.shared_cache); a mesh
        # whose NATS user may not create streams still serves the fast path.
        assert self.nc is not None
        try:
            self._durable = await DurableWorker.open(self)
        except BrokerError as exc:
            _log.warning("durable calls disabled on this node: %s", exc)
        if self.settings.shared_cache:
            self.kernel.register_plugin(
                await SharedCache.open(self.nc.jetstream(), self.settings), name=f"toolmesh.shared_cache.{self.name}"
            )

    async def _on_reconnected(self) -> None:
        self.connection_log.reconnected()
        # A restarted broker has lost the catalog (memory storage): write it again.
        if self.nc is not None and not self._draining:
            await self._open_catalog()
            await self._publish_entry(changed=True)

    async def _open_catalog(self) -> None:
        assert self.nc is not None
        self._catalog = await CatalogBucket.open(
            self.nc.jetstream(), self.subjects.catalog_bucket, self.settings.catalog_ttl, create=True,
            replicas=self.settings.durable_replicas,  # on a cluster, listing must survive one server's loss too
            secret=catalog_secret(self.settings),  # signs this node's entry (toolmesh._transport.catalog)
        )

    @hookimpl
    async def toolmesh_tools_changed(self, kernel: Kernel, tools: list[ToolSpec]) -> None:
        if kernel is self.kernel and self.nc is not None:
            await self._sync_subscriptions()
            await self._publish_entry(changed=True)

    async def _sync_subscriptions(self) -> None:
        assert self.nc is not None
        wanted = {spec.name for spec in self.kernel.tools}
        for name in set(self._subscriptions) - wanted:
            await self._subscriptions.pop(name).drain()
        for name in sorted(wanted - set(self._subscriptions)):
            subject = self.subjects.request(name)
            self._subscriptions[name] = await self.nc.subscribe(subject, queue=QUEUE_GROUP, cb=self._on_request)
            self.endpoints.setdefault(name, EndpointCounters(subject=subject))
        for name in set(self.endpoints) - wanted:
            del self.endpoints[name]

    # -------------------------------------------------------------- requests

    async def _on_request(self, msg: Msg) -> None:
        # nats.py runs one subscription's callbacks one at a time: only admit
        # here and run the call in its own task.
        durable = is_durable_delivery(msg)
        if durable and (self._durable is None or self._durable.busy(msg)):
            return  # a redelivery of a call running here (or no durable support): JetStream keeps it
        tool = self.subjects.tool_from_request(msg.subject)
        spec = self.kernel.get_tool(tool)
        refusal = self._admission.admit(tool, self.inflight, spec.max_concurrency if spec else None)
        if refusal is not None:
            if durable:
                assert self._durable is not None
                await self._durable.defer(msg, refusal.retry_after)  # back to the queue, maybe another node
                return
            details = {"retry_after": refusal.retry_after, "limit": refusal.limit, "scope": refusal.scope}
            await self._respond(
                msg,
                self._failure("", tool, ErrorCode.UNAVAILABLE, refusal.message, details=details),
            )
            return
        self.inflight += 1
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        # A bare asyncio task costs a fraction of an anyio task-group spawn on
        # this hot path; the node tracks completion itself (inflight, _idle).
        task = asyncio.get_running_loop().create_task(self._serve(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, msg: Msg) -> None:
        started = time.perf_counter_ns()
        tool = self.subjects.tool_from_request(msg.subject)
        result: ToolResult | None = None
        request: ToolRequest | ToolResult | None = None
        running: RunningCall | None = None
        try:
            request = self._decode(msg, tool)
            durable = self._durable is not None and is_durable_delivery(msg)
            if not durable and msg.reply and (refusal := reply_refusal(self.subjects, msg.reply)) is not None:
                _log.info("not serving a call of %s: %s", tool, refusal)  # answering would publish there
                return
            request = self._check_callback(request, self._caller_reply(msg, durable))
            if isinstance(request, ToolResult):
                result = request
            elif self._durable is not None and not durable and self._durable.wants(request):
                await self._durable.enqueue(msg, request)  # answered by whichever node the queue picks
                return
            elif (
                durable and self._durable is not None
                and (stored := await self._durable.begin(msg, request)) is not None
            ):
                result = stored  # stored before (a redelivery), or given up after too many attempts
            else:
                identity = request.caller.identity if request.caller is not None else None  # as verified
                # _serve always runs as a task of its own, so there is a current one
                task: asyncio.Task[None] = asyncio.current_task()  # type: ignore[assignment]
                running = RunningCall(request.id, task, identity, self._caller_reply(msg, durable))
                self._running.add(running)
                with tool_span(
                    tool,
                    request.id,
                    kind=SpanKind.SERVER,
                    parent=extract_context(msg.headers),
                    **{"messaging.destination.name": msg.subject, **self._span_attributes},
                ) as span:
                    assert self.nc is not None  # a subscription delivers only while connected
                    channel = NatsCallbackChannel(self.nc, request.callback, request.id) if request.callback else None
                    result = await self.kernel.call(request, send_nested=self._send_nested, channel=channel)
                    if result.error is not None:
                        record_error(span, result.error.code.value)
                self._running.remove(running)  # finished: a cancel arriving now must not cut the answer short
            await self._respond(msg, result)
        except asyncio.CancelledError:
            if running is None or not running.cancelled:
                raise  # the node itself is stopping
            result = await self._answer_cancelled(msg, running, tool)
        except Exception as exc:  # noqa: BLE001 - isolation boundary around a call (plugin code runs in it)
            if self._durable is not None and is_durable_delivery(msg):
                await self._durable.abandon(msg, request, exc)  # removed from the queue, not redelivered in a loop
            else:
                _log.exception("serving %s failed", tool)
        finally:
            if running is not None:
                self._running.remove(running)
            counters = self.endpoints.get(tool)
            if counters is not None:
                error = result.error.code.value if result is not None and result.error else None
                counters.record(time.perf_counter_ns() - started, error)
            self._admission.release(tool, (time.perf_counter_ns() - started) / 1e9)
            self.inflight -= 1
            if self.inflight == 0:
                self._idle.set()

    async def _on_cancel(self, msg: Msg) -> None:
        # Only the call's caller may cancel it (toolmesh._transport.running_calls); anything else changes nothing.
        try:
            cancel = decode_cancel(msg.data)
            identity = verify_request(msg.headers, msg.subject, msg.data, self.settings.identity_secret)
        except (msgspec.DecodeError, msgspec.ValidationError, CallRejected) as exc:
            _log.debug("ignoring a cancel: %s", exc)
            return
        self._running.cancel(cancel, identity)

    async def _answer_cancelled(self, msg: Msg, running: RunningCall, tool: str) -> ToolResult:
        # The caller cancelled the call: it hears so at once (a durable call's answer is stored too).
        running.task.uncancel()
        result = self._failure(
            running.request_id, tool, ErrorCode.CANCELLED,
            f"call {running.request_id!r} of {tool!r} was cancelled by its caller before it finished",
        )
        try:
            await self.kernel.emit("cancelled", tool, request_id=running.request_id)
            await self._respond(msg, result)
        except (nats.errors.Error, ToolmeshError):  # the caller may be gone: its own deadline still applies
            _log.exception("answering the cancelled call %s of %s failed", running.request_id, tool)
        return result

    def _caller_reply(self, msg: Msg, durable: bool) -> str | None:
        # Where the caller waits: the reply subject, or for a durable delivery the inbox it travelled with.
        return (msg.headers or {}).get(REPLY_HEADER) if durable else msg.reply

    def _check_callback(
        self, request: ToolRequest | ToolResult, reply: str | None
    ) -> ToolRequest | ToolResult:
        # The node may publish anywhere: a callback may only go to the caller's own namespace
        # (toolmesh._transport.caller_subjects), checked before the tool runs or the call is queued.
        if isinstance(request, ToolResult) or not request.callback:
            return request
        refusal = callback_refusal(self.subjects, reply, request.callback)
        if refusal is None:
            return request
        return self._failure(request.id, request.tool, ErrorCode.BAD_REQUEST, refusal)

    def _decode(self, msg: Msg, tool: str) -> ToolRequest | ToolResult:
        if len(msg.data) > self.settings.max_payload:
            return self._failure(
                "", tool, ErrorCode.TOO_LARGE,
                f"request of {len(msg.data)} bytes exceeds this node's {self.settings.max_payload}-byte limit;"
                " send large data by reference",
            )
        depth = self.settings.max_argument_depth
        try:
            request = decode_request(msg.data)
        except msgspec.ValidationError as exc:
            return self._failure("", tool, ErrorCode.BAD_REQUEST,
                            f"request is not a ToolRequest: {exc}; expected"
                            ' {"id": str, "tool": str, "arguments": object, ...}')
        except msgspec.DecodeError as exc:
            return self._failure("", tool, ErrorCode.BAD_REQUEST,
                            f"request body is not valid JSON ({exc}); send a JSON object"
                            ' {"id": ..., "tool": ..., "arguments": {...}}')
        except RecursionError:  # msgspec stops at Python's recursion limit
            return self._failure("", tool, ErrorCode.BAD_REQUEST, _too_deep(depth))
        # The request object is one level above its arguments (toolmesh._pipeline.json_nesting).
        if nests_deeper_than(msg.data, depth + 1):
            return self._failure(request.id, tool, ErrorCode.BAD_REQUEST, _too_deep(depth))
        if request.tool and not is_valid_tool_name(request.tool):
            return self._failure(request.id, tool, ErrorCode.BAD_REQUEST,
                            f"the request names tool {_shown(request.tool)}, which is not a valid tool name"
                            " (1-128 characters of A-Z, a-z, 0-9, '_', '-' and '.'); send the name as"
                            f" listed by 'toolmesh tools', or leave \"tool\" out to call {tool!r}")
        if request.chain:
            strange = next((name for name in request.chain if not is_valid_tool_name(name)), None)
            if strange is not None:
                return self._failure(request.id, tool, ErrorCode.BAD_REQUEST,
                                f"the request's chain holds {_shown(strange)}, which is not a tool name;"
                                " leave \"chain\" out (nodes fill it in for the nested calls of tools)")
        if request.tool and request.tool != tool:
            return self._failure(request.id, request.tool, ErrorCode.BAD_REQUEST,
                            f"request for tool {request.tool!r} was sent to the subject of {tool!r};"
                            f" publish it on {self.subjects.request(request.tool)}")
        if not request.tool or not request.id:
            request = msgspec.structs.replace(request, tool=tool, id=request.id or _nuid.next().decode())
        return self._identify(msg, request)

    def _identify(self, msg: Msg, request: ToolRequest) -> ToolRequest | ToolResult:
        # The body's caller.identity is whatever the sender wrote; only a
        # signed header (toolmesh._pipeline.identity) is believed, an unsigned call is anonymous.
        try:
            identity = verify_request(msg.headers, msg.subject, msg.data, self.settings.identity_secret)
        except CallRejected as exc:
            return self._failure(request.id, request.tool, ErrorCode.REJECTED, exc.message)
        caller = request.caller
        if (caller.identity if caller is not None else None) == identity:
            return request
        caller = msgspec.structs.replace(caller, identity=identity) if caller else Caller(identity=identity)
        return msgspec.structs.replace(request, caller=caller)

    async def _respond(self, msg: Msg, result: ToolResult) -> None:
        if not msg.reply:
            return
        assert self.nc is not None
        data = encode(result)
        if len(data) > self.settings.max_payload:
            result = self._failure(
                result.id, result.tool, ErrorCode.TOO_LARGE,
                f"the result of {result.tool!r} has {len(data)} bytes, over the"
                f" {self.settings.max_payload}-byte limit; return less data or a reference to it",
            )
            data = encode(result)
        if self._durable is not None and is_durable_delivery(msg):
            await self._durable.finish(msg, result)  # store, send to the caller, then ack
            return
        if reply_refusal(self.subjects, msg.reply) is None:  # no confused deputy (toolmesh._transport.caller_subjects)
            await self.nc.publish(msg.reply, data)

    def _nested_call(self, parent: ToolRequest) -> NestedCall:
        # call_tool for a call of `parent` made outside the pipeline (which builds its own from _send_nested)
        return CallContext(request=parent, kernel=self.kernel, node=self.name).nested_call(self._send_nested)

    async def _send_nested(self, request: ToolRequest) -> ToolResult:
        # A tool's nested call, built by CallContext.nested_call (chain, time left), goes over the mesh.
        assert self._mesh is not None
        sent = self._mesh.new_request(
            request.tool, request.arguments, timeout=request.timeout, caller=request.caller, meta=request.meta
        )
        return await self._mesh.send(msgspec.structs.replace(sent, deadline=request.deadline, chain=request.chain))

    def _failure(self, request_id: str, tool: str, code: ErrorCode, message: str, **fields: Any) -> ToolResult:
        return failure_from(self.name, request_id, tool, code, message, **fields)

    async def _publish_event(self, event: ToolEvent) -> None:
        if self.nc is not None and not self.nc.is_closed:
            await self.nc.publish(self.subjects.event(event.kind, event.tool), encode(event))



def _too_deep(depth: int) -> str:
    return (
        f"request arguments nest arrays/objects more than {depth} levels deep (this node's"
        " max_argument_depth); flatten the data or send it as a string or by reference"
    )


def _shown(value: str) -> str:
    """``value`` quoted for a message, cut short if long (it comes from the caller)."""
    return repr(value) if len(value) <= 140 else f"{value[:128]!r}… ({len(value)} characters)"


