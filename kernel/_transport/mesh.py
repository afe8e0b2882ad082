"""``Mesh``: the client API — call tools, list the catalog, follow events.

::

    async with toolmesh.Mesh() as mesh:
        result = await mesh.call("add", {"a": 1, "b": 2})
        print(result.structured_content)

``SyncMesh`` offers the same calls to scripts without an event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any, Self

import anyio
import anyio.from_thread
import msgspec
import nats
import nats.errors
from nats.aio.client import Client as NATS
from opentelemetry.trace import SpanKind
from toolmesh._config import Settings, load_settings, url_user
from toolmesh._errors import (
    BrokerError,
    CallTimeout,
    ConfigError,
    NoResponders,
    PublishDenied,
    ToolmeshError,
    UnknownTool,
    tool_error,
)
from toolmesh._pipeline.authorization import client_identity, visible_tools
from toolmesh._pipeline.identity import sign_request
from toolmesh._pipeline.suggestions import close_names
from toolmesh._telemetry.logs import redact_url
from toolmesh._telemetry.tracing import inject_headers, record_error, tool_span
from toolmesh._transport.broker import nats_reachable
from toolmesh._transport.broker_state import with_local_secrets
from toolmesh._transport.callbacks import CallbackHandler, serve_callbacks
from toolmesh._transport.caller_subjects import caller_client
from toolmesh._transport.catalog import CatalogBucket, catalog_secret, merge_tools
from toolmesh._transport.durable_queue import DurableQueue
from toolmesh._transport.nats_auth import authenticates, connect_options
from toolmesh._transport.nats_errors import denied_subject, nats_error, refuses_connection
from toolmesh.contracts import (
    Caller,
    CancelRequest,
    ErrorCode,
    NodeEntry,
    ToolEvent,
    ToolRequest,
    ToolResult,
    ToolSpec,
    decode_event,
    decode_result,
    encode,
)

__all__ = ["Mesh", "SyncMesh", "client_inbox", "connect_nats"]

NO_RESPONDER_RETRY = 0.5
"""Seconds a call retries "no responders" before answering ``unknown_tool``: a node
that has just subscribed may not yet be known to every server of a cluster."""

_REPLY_GRACE = 0.5
"""Extra seconds a client waits beyond the call timeout, so the node's own
``timeout`` answer (which names the limit) arrives before the client gives up."""

_log = logging.getLogger("toolmesh.mesh")


async def connect_nats(
    url: str,
    *,
    name: str,
    inbox_prefix: str | None = None,
    settings: Settings | None = None,
    unreachable_advice: str | None = None,
    **options: Any,
) -> NATS:
    """Connect to NATS, turning "nothing there" into one clear ``BrokerError``.

    ``settings`` adds its credentials and TLS (``toolmesh._transport.nats_auth``): pass it
    from every connection a node or plugin opens, so all of them authenticate.

    Reachability is checked first: nats.py with reconnects enabled would
    otherwise retry the first connection for as long as it retries later ones.
    ``unreachable_advice`` replaces what the error tells a client to do when nothing answers
    at ``url`` (a node says something else than a caller).
    """

    async def quiet(exc: Exception) -> None:  # nats.py prints every error to stderr by default
        _log.debug("nats error: %r", exc)

    advice = unreachable_advice or (
        "start a mesh with 'toolmesh up' or point --nats / TOOLMESH_NATS_URL at a running NATS server"
    )
    failure = f"cannot reach NATS at {redact_url(url)}; {advice}"
    if not await nats_reachable(url):
        raise BrokerError(failure)
    if settings is not None:
        options = {**connect_options(settings), **options}
    options.setdefault("max_reconnect_attempts", 10)
    options.setdefault("reconnect_time_wait", 0.5)
    report = options.pop("error_cb", quiet)
    connected = False

    async def on_error(exc: Exception) -> None:
        # nats.py retries a refused first connection like a lost one (forever for a
        # node); wrong credentials or a rejected certificate never heal, so stop at once.
        if not connected and refuses_connection(exc):
            raise _Refused(exc)
        await report(exc)

    nc = NATS()
    try:
        await nc.connect(
            # A cluster URL lists its servers comma-separated; nats.py wants them as a list.
            [server.strip() for server in url.split(",") if server.strip()],
            name=name,
            inbox_prefix=inbox_prefix or "_INBOX",
            connect_timeout=2,
            error_cb=on_error,
            **options,
        )
    except _Refused as refused:
        try:
            await nc.close()  # the half-open socket, so nothing leaks
        except (_Refused, nats.errors.Error, OSError) as exc:  # best effort; closing may report the refusal again
            _log.debug("closing a refused NATS connection failed: %r", exc)
        raise BrokerError(
            f"NATS at {redact_url(url)} refused this connection ({type(refused.cause).__name__}: {refused.cause});"
            " check nats_user/nats_password, nats_token, nats_creds, nats_nkey (TOOLMESH_NATS_*) or the TLS files"
            " tls_ca/tls_cert/tls_key against the server's configuration; an embedded broker ('toolmesh up' without"
            " a URL) admits only its user's commands, which find its token in the state directory (TOOLMESH_STATE_DIR)"
        ) from refused.cause
    except (nats.errors.NoServersError, OSError, TimeoutError, nats.errors.Error) as exc:
        raise BrokerError(f"{failure} ({type(exc).__name__}: {exc})") from exc
    connected = True
    return nc


class _Refused(Exception):
    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


DENIAL_MEMORY = 5.0
"""Seconds a client remembers that NATS refused it a request subject (answers ``rejected`` at once)."""


class _RequestIds:
    # 96 random bits per process, then a counter: unique across processes and
    # machines, and a sixth of the cost of a NUID on the hot path.
    def __init__(self) -> None:
        self.reset()
        os.register_at_fork(after_in_child=self.reset)  # a forked child must not repeat the parent's ids

    def reset(self) -> None:
        self.prefix = secrets.token_urlsafe(12)
        self.counter = itertools.count()

    def next(self) -> str:
        return f"{self.prefix}{next(self.counter):x}"


_request_ids = _RequestIds()


def new_request_id() -> str:
    """A unique request id: 16 random URL-safe characters, then a hexadecimal counter."""
    return _request_ids.next()


def client_inbox(settings: Settings) -> str:
    """A new connection's inbox prefix: ``<prefix>.result.<client>.<connection>``.

    ``<client>`` is the NATS user (the server's permissions can then let each user read
    its own replies and callbacks only), else a random token; ``<connection>`` is random, so
    a cancel naming this inbox proves it comes from this connection (``toolmesh._transport.caller_subjects``).
    """
    user = settings.nats_user or url_user(settings.nats_url)
    client = user if user and re.fullmatch(r"[A-Za-z0-9_\-]+", user) else secrets.token_hex(8)
    return f"{settings.subjects.result_prefix}.{client}.{secrets.token_hex(8)}"


async def _abandon(nc: NATS) -> None:
    """Close a connection whose broker is gone.

    nats.py's ``close()`` of a reconnecting connection can let the cancellation of its own
    I/O task escape as ``CancelledError``; only a cancellation of the calling task propagates.
    """
    task = asyncio.current_task()
    try:
        await nc.close()
    except asyncio.CancelledError:
        if task is None or task.cancelling():
            raise


class Mesh:
    """A connection to a mesh; an async context manager."""

    def __init__(
        self,
        nats_url: str | None = None,
        *,
        prefix: str | None = None,
        settings: Settings | None = None,
        name: str = "toolmesh-client",
    ) -> None:
        self.settings = settings or load_settings({"nats_url": nats_url, "prefix": prefix})
        self.subjects = self.settings.subjects
        self.name = name
        self.nc: NATS | None = None
        self._owns_connection = True
        self._catalog: CatalogBucket | None = None
        # Subjects NATS refused this user, and the calls waiting on each subject
        self._denied_at: dict[str, float] = {}
        self._waiting: dict[str, set[asyncio.Task[Any]]] = {}
        self._denied_tasks: set[asyncio.Task[Any]] = set()
        # Only authenticated connections can meet subject permissions: skip the bookkeeping otherwise.
        self._watch_denials = authenticates(self.settings)
        self._durable: DurableQueue | None = None

    @classmethod
    def over(cls, nc: NATS, settings: Settings) -> Mesh:
        """A ``Mesh`` sharing an existing connection (nodes use it for nested calls)."""
        mesh = cls(settings=settings)
        mesh.nc = nc
        mesh._owns_connection = False
        return mesh

    async def connect(self) -> Self:
        """Open the connection; replies arrive under ``<prefix>.result.<client>.<connection>``."""
        if self.nc is None:
            # On the embedded broker, verify the catalog with the mesh's generated secret (toolmesh._transport.broker_state).
            self.settings = with_local_secrets(self.settings)
            self.nc = await connect_nats(
                self.settings.connect_url,
                name=self.name,
                inbox_prefix=self._inbox_prefix(),
                error_cb=self._on_nats_error,
                **connect_options(self.settings),  # NATS auth and TLS (toolmesh._transport.nats_auth)
            )
        return self

    async def close(self) -> None:
        """Close the connection (if this ``Mesh`` opened it)."""
        if self.nc is not None and self._owns_connection:
            try:
                await self.nc.drain()
            except (nats.errors.ConnectionReconnectingError, nats.errors.ConnectionClosedError):
                # The broker went away after the last answer (e.g. a node stopping its embedded
                # broker): nothing is left to flush, and the answers already received stand.
                await _abandon(self.nc)
        self.nc = None
        self._durable = None

    async def __aenter__(self) -> Self:
        return await self.connect()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _connection(self) -> NATS:
        if self.nc is None:
            raise BrokerError("this Mesh is not connected: use 'async with Mesh() as mesh'")
        return self.nc

    # -------------------------------------------------------------- calls

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        caller: Caller | None = None,
        cache: bool | None = None,
        id: str | None = None,
        meta: dict[str, Any] | None = None,
        on_callback: CallbackHandler | None = None,
        durable: bool | None = None,
    ) -> ToolResult:
        """Call ``tool``; returns its ``ToolResult`` (``is_error`` set on failure, never raises for it).

        ``on_callback`` receives the tool's progress and log messages and answers
        its ``sampling``/``elicitation`` requests (its return value is the answer).
        ``durable=True`` sends the call through the JetStream work queue: it survives
        the death of the node running it, and a repeat with the same ``id`` returns
        the stored result instead of running again (see docs/reliability.md).
        """
        request = self.new_request(
            tool, arguments, timeout=timeout, caller=caller, cache=cache, id=id, meta=meta, durable=durable
        )
        if on_callback is None:
            return await self.send(request)
        try:
            subject = self.callback_subject(new_request_id())
        except ConfigError as exc:
            return _local_failure(request, ErrorCode.BAD_REQUEST, str(exc))
        subscription = await serve_callbacks(self._connection(), subject, on_callback)
        try:
            return await self.send(msgspec.structs.replace(request, callback=subject))
        finally:
            await subscription.unsubscribe()

    def new_request(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        caller: Caller | None = None,
        cache: bool | None = None,
        id: str | None = None,
        meta: dict[str, Any] | None = None,
        durable: bool | None = None,
    ) -> ToolRequest:
        """The ``ToolRequest`` that :meth:`call` sends: a fresh id and this mesh's default timeout unless given."""
        return ToolRequest(
            id=id or new_request_id(),
            tool=tool,
            arguments=arguments or {},
            caller=caller,
            timeout=timeout if timeout is not None else self.settings.default_timeout,
            cache=cache,
            meta=meta,
            durable=durable or None,
        )

    async def send(self, request: ToolRequest) -> ToolResult:
        """Send a prepared ``ToolRequest`` and wait for its result."""
        try:
            destination = (self.subjects.durable if request.durable else self.subjects.request)(request.tool)
        except ValueError as exc:
            return _local_failure(request, ErrorCode.BAD_REQUEST, str(exc))
        with tool_span(
            request.tool, request.id, kind=SpanKind.CLIENT, parent=None,
            # given at the start, so samplers see them too (messaging conventions)
            **{"messaging.operation.type": "send", "messaging.operation.name": "send",
               "messaging.destination.name": destination},
        ) as span:
            result = await self._send(request, destination)
            if result.error is not None:  # local failures (timeout, rejected) included
                record_error(span, result.error.code.value)
            return result

    async def _send(self, request: ToolRequest, subject: str) -> ToolResult:
        nc = self._connection()
        payload = encode(request)
        if len(payload) > self.settings.max_payload:
            return _local_failure(
                request,
                ErrorCode.TOO_LARGE,
                f"request of {len(payload)} bytes exceeds the {self.settings.max_payload}-byte limit;"
                " send large data by reference (a URL or object-store key)",
            )
        if len(payload) > nc.max_payload:  # the server would refuse it (and nats.py raise)
            return _local_failure(
                request,
                ErrorCode.TOO_LARGE,
                f"request of {len(payload)} bytes exceeds the NATS server's {nc.max_payload}-byte max_payload;"
                " send large data by reference (a URL or object-store key)",
            )
        timeout = request.timeout if request.timeout is not None else self.settings.default_timeout
        wait = timeout + _REPLY_GRACE
        if request.durable:
            return await self._durable_queue().send(request, payload, wait, self._headers(request, subject, payload))
        started = time.monotonic()
        while True:
            try:
                headers = self._headers(request, subject, payload)
                try:
                    reply = await self._request(nc, subject, payload, wait, headers)
                except nats.errors.Error as exc:
                    raise nats_error(exc, subject, f"the call of {request.tool!r}") from exc
                break
            except PublishDenied as exc:
                return ToolResult.failure(request.id, request.tool, exc.to_tool_error())
            except NoResponders:
                if time.monotonic() - started < NO_RESPONDER_RETRY:
                    await anyio.sleep(0.05)
                    continue
                names = [spec.name for spec in await self._safe_list_tools()]
                error = UnknownTool(request.tool, close_names(request.tool, names))
                return ToolResult.failure(request.id, request.tool, error.to_tool_error())
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._cancel(request)
                raise
            except CallTimeout:
                await self._cancel(request)
                return _local_failure(
                    request,
                    ErrorCode.TIMEOUT,
                    f"no answer for {request.tool!r} within {timeout:g}s; the node may be overloaded or gone",
                )
        try:
            return decode_result(reply.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return _local_failure(request, ErrorCode.INTERNAL, f"the node's reply is not a ToolResult: {exc}")

    async def _request(
        self, nc: NATS, subject: str, payload: bytes, wait: float, headers: dict[str, str] | None
    ) -> Any:
        # NATS drops a publish the user may not make and reports it only
        # asynchronously (error_cb).  _on_nats_error cancels the calls waiting on that
        # subject, and they answer `rejected` at once instead of after their whole timeout.
        denied_at = self._denied_at.get(subject)
        if denied_at is not None and time.monotonic() - denied_at < DENIAL_MEMORY:
            raise PublishDenied(subject)
        if not self._watch_denials:
            return await nc.request(subject, payload, timeout=wait, headers=headers)
        task = asyncio.current_task()
        assert task is not None
        waiting = self._waiting.setdefault(subject, set())
        waiting.add(task)
        try:
            return await nc.request(subject, payload, timeout=wait, headers=headers)
        except asyncio.CancelledError:
            if task in self._denied_tasks:
                self._denied_tasks.discard(task)
                if task.uncancel() == 0:  # only our cancellation: anything else still propagates
                    raise PublishDenied(subject) from None
            raise
        finally:
            waiting.discard(task)
            if task in self._denied_tasks:  # the reply won the race with our cancellation: take it back
                self._denied_tasks.discard(task)
                task.uncancel()

    async def _on_nats_error(self, exc: Exception) -> None:
        subject = denied_subject(exc)
        if subject is None:
            _log.debug("nats error: %r", exc)
            return
        self._denied_at[subject] = time.monotonic()
        # Each refused publish is reported once, but several may arrive before a cancelled
        # call runs again: cancel each waiting call once only.
        for task in list(self._waiting.get(subject, ())):
            if task not in self._denied_tasks and task.cancel():
                self._denied_tasks.add(task)

    def _inbox_prefix(self) -> str:
        # A NATS user's replies arrive under <prefix>.result.<user>.<connection>, so the server's
        # permissions can let each user subscribe to its own replies only (ops/nats/permissions.conf).
        return client_inbox(self.settings)

    def inbox(self) -> str:
        """This connection's inbox prefix: replies to its calls arrive under it."""
        # new_inbox() is "<inbox prefix>.<unique token>" for whatever connection this Mesh uses.
        return self._connection().new_inbox().rsplit(".", 1)[0]

    def callback_subject(self, call: str | None = None) -> str:
        """A subject in this connection's callback namespace, for ``ToolRequest.callback``.

        Nodes send callbacks only to ``<prefix>.callback.<client>.<...>``, ``<client>``
        being the client token of the caller's inbox; any other subject is refused.
        """
        inbox = self.inbox()
        owner = caller_client(self.subjects, inbox)
        if owner is None:
            raise ConfigError(
                f"this connection's inbox prefix {inbox!r} names no client, so nodes would refuse"
                " its callbacks; open the connection with an inbox prefix"
                f" {self.subjects.result_prefix}.<client>.<connection> (toolmesh._transport.mesh.client_inbox),"
                " as Mesh.connect does"
            )
        return self.subjects.callback(owner[1], call or new_request_id())

    def _headers(self, request: ToolRequest, subject: str, payload: bytes) -> dict[str, str] | None:
        # Sign the caller's identity when this client holds the mesh's identity_secret
        secret = self.settings.identity_secret
        if secret is None:
            return inject_headers()
        identity = (request.caller.identity if request.caller is not None else None) or self.identity
        if identity is None:
            return inject_headers()
        return inject_headers(sign_request(secret, identity, subject, payload))

    @property
    def identity(self) -> str | None:
        """The identity this client signs its calls with: ``identity``, else the NATS user."""
        return client_identity(self.settings)

    def _durable_queue(self) -> DurableQueue:
        if self._durable is None:
            self._durable = DurableQueue(self._connection(), self.settings)
        return self._durable

    async def durable_result(
        self, request_id: str, *, tool: str | None = None, arguments: dict[str, Any] | None = None
    ) -> ToolResult | None:
        """The stored result of this client's earlier durable call (``None``: not finished yet, or expired).

        A result stored for another identity (the one this client signs with, or none),
        or for another ``tool`` or other ``arguments`` when given, is answered ``bad_request``.
        """
        identity = self.identity if self.settings.identity_secret is not None else None  # as _headers signs
        return await self._durable_queue().result(request_id, identity=identity, tool=tool, arguments=arguments)

    async def _cancel(self, request: ToolRequest) -> None:
        # The caller gave up: tell whichever node serves the call to stop it.  Nodes take a
        # cancel from the call's caller only: signed like the call, and naming this connection's inbox.
        try:
            payload = encode(CancelRequest(id=request.id, inbox=self.inbox()))
            headers = self._headers(request, self.subjects.cancel, payload)
            await self._connection().publish(self.subjects.cancel, payload, headers=headers)
        except (nats.errors.Error, ToolmeshError) as exc:  # best effort: the node's own deadline applies
            _log.debug("cancel of %s not sent: %r", request.id, exc)

    # -------------------------------------------------------------- catalog

    async def _bucket(self) -> CatalogBucket | None:
        if self._catalog is None:
            nc = self._connection()
            self._catalog = await CatalogBucket.open(
                nc.jetstream(), self.subjects.catalog_bucket, self.settings.catalog_ttl, create=False,
                secret=catalog_secret(self.settings),  # with a secret, entries that do not verify are ignored
            )
        return self._catalog

    async def nodes(self) -> list[NodeEntry]:
        """The live nodes of the mesh with their tools."""
        bucket = await self._bucket()
        return await bucket.entries() if bucket is not None else []

    async def node_names(self) -> set[str]:
        """The names of the live nodes, without reading their tool lists."""
        bucket = await self._bucket()
        return await bucket.node_names() if bucket is not None else set()

    async def list_tools(self) -> list[ToolSpec]:
        """Every tool served by some node, once each, sorted by name.

        With an ``[authorization]`` policy in this client's settings, only the tools
        :attr:`identity` may use are listed (advisory: see ``toolmesh._pipeline.authorization``).
        """
        merged = merge_tools(await self.nodes())
        return visible_tools(self.settings, self.identity, [merged[name][0] for name in sorted(merged)])

    async def _safe_list_tools(self) -> list[ToolSpec]:
        try:
            return await self.list_tools()
        except (nats.errors.Error, ToolmeshError) as exc:  # suggestions are a courtesy
            _log.debug("catalog unavailable for suggestions: %r", exc)
            return []

    # -------------------------------------------------------------- events

    async def events(self, kind: str = "*", tool: str | None = None) -> AsyncIterator[ToolEvent]:
        """Yield events as nodes publish them (``kind`` e.g. ``finished``; ``*`` for all)."""
        nc = self._connection()
        subscription = await nc.subscribe(self.subjects.events(kind, tool))
        try:
            async for message in subscription.messages:
                try:
                    yield decode_event(message.data)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    continue
        finally:
            await subscription.unsubscribe()


def _local_failure(request: ToolRequest, code: ErrorCode, message: str) -> ToolResult:
    return ToolResult.failure(request.id, request.tool, tool_error(code, message))


class SyncMesh:
    """A blocking ``Mesh`` for scripts: ``with SyncMesh() as mesh: mesh.call("add", {...})``."""

    def __init__(self, nats_url: str | None = None, **options: Any) -> None:
        self._mesh = Mesh(nats_url, **options)
        self._portal_cm = anyio.from_thread.start_blocking_portal("asyncio")
        self._portal: anyio.from_thread.BlockingPortal | None = None

    def __enter__(self) -> Self:
        self._portal = self._portal_cm.__enter__()
        try:
            self._portal.call(self._mesh.connect)
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._portal is not None
        try:
            self._portal.call(self._mesh.close)
        finally:
            self._portal_cm.__exit__(None, None, None)

    def call(self, tool: str, arguments: dict[str, Any] | None = None, **options: Any) -> ToolResult:
        """Call ``tool`` and block until its result arrives."""
        assert self._portal is not None, "use 'with SyncMesh() as mesh'"
        return self._portal.call(lambda: self._mesh.call(tool, arguments, **options))

    def list_tools(self) -> list[ToolSpec]:
        """Every tool of the mesh."""
        assert self._portal is not None, "use 'with SyncMesh() as mesh'"
        return self._portal.call(self._mesh.list_tools)
