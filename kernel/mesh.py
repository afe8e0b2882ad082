"""``Mesh``: the client API — call tools, list the catalog, follow events.

::

    async with toolmesh.Mesh() as mesh:
        result = await mesh.call("add", {"a": 1, "b": 2})
        print(result.structured_content)

``SyncMesh`` offers the same calls to scripts without an event loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.from_thread
import msgspec
import nats
import nats.errors
from nats.aio.client import Client as NATS
from nats.nuid import NUID
from opentelemetry.trace import SpanKind

from toolmesh.contracts import (
    CancelRequest,
    Caller,
    ErrorCode,
    NodeEntry,
    ToolError,
    ToolEvent,
    ToolRequest,
    ToolResult,
    ToolSpec,
    decode_event,
    decode_result,
    encode,
)

from .catalog import CatalogBucket, merge_tools
from .broker import nats_reachable
from .callbacks import CallbackHandler, serve_callbacks
from .config import Settings, load_settings
from .errors import BrokerError, UnknownTool
from .suggestions import close_names
from .telemetry import inject_headers, tool_span

__all__ = ["Mesh", "SyncMesh", "connect_nats"]

NO_RESPONDER_RETRY = 0.5
"""Seconds a call retries "no responders" before answering ``unknown_tool``: a node
that has just subscribed may not yet be known to every server of a cluster."""

_REPLY_GRACE = 0.5
"""Extra seconds a client waits beyond the call timeout, so the node's own
``timeout`` answer (which names the limit) arrives before the client gives up."""

_nuid = NUID()
_log = logging.getLogger("toolmesh.mesh")


async def connect_nats(url: str, *, name: str, inbox_prefix: str | None = None, **options: Any) -> NATS:
    """Connect to NATS, turning "nothing there" into one clear ``BrokerError``.

    Reachability is checked first: nats.py with reconnects enabled would
    otherwise retry the first connection for as long as it retries later ones.
    """

    async def quiet(exc: Exception) -> None:  # nats.py prints every error to stderr by default
        _log.debug("nats error: %r", exc)

    failure = f"cannot reach NATS at {url}; start a mesh with 'toolmesh up' or point --nats / TOOLMESH_NATS_URL at a running NATS server"
    if not await nats_reachable(url):
        raise BrokerError(failure)
    options.setdefault("max_reconnect_attempts", 10)
    options.setdefault("reconnect_time_wait", 0.5)
    try:
        return await nats.connect(
            url,
            name=name,
            inbox_prefix=inbox_prefix or "_INBOX",
            connect_timeout=2,
            error_cb=options.pop("error_cb", quiet),
            **options,
        )
    except (nats.errors.NoServersError, OSError, TimeoutError, nats.errors.Error) as exc:
        raise BrokerError(f"{failure} ({type(exc).__name__}: {exc})") from exc


def new_request_id() -> str:
    """A unique request id (NUID: 22 URL-safe characters)."""
    return _nuid.next().decode()


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

    @classmethod
    def over(cls, nc: NATS, settings: Settings) -> Mesh:
        """A ``Mesh`` sharing an existing connection (nodes use it for nested calls)."""
        mesh = cls(settings=settings)
        mesh.nc = nc
        mesh._owns_connection = False
        return mesh

    async def connect(self) -> Mesh:
        """Open the connection; replies arrive under ``<prefix>.result.<client>``."""
        if self.nc is None:
            self.nc = await connect_nats(
                self.settings.connect_url, name=self.name, inbox_prefix=self.subjects.result_prefix
            )
        return self

    async def close(self) -> None:
        """Close the connection (if this ``Mesh`` opened it)."""
        if self.nc is not None and self._owns_connection:
            await self.nc.drain()
        self.nc = None

    async def __aenter__(self) -> Mesh:
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
    ) -> ToolResult:
        """Call ``tool``; returns its ``ToolResult`` (``is_error`` set on failure, never raises for it).

        ``on_callback`` receives the tool's progress and log messages and answers
        its ``sampling``/``elicitation`` requests (its return value is the answer).
        """
        request = ToolRequest(
            id=id or new_request_id(),
            tool=tool,
            arguments=arguments or {},
            caller=caller,
            timeout=timeout if timeout is not None else self.settings.default_timeout,
            cache=cache,
            meta=meta,
        )
        if on_callback is None:
            return await self.send(request)
        subject = self.subjects.callback(new_request_id())
        subscription = await serve_callbacks(self._connection(), subject, on_callback)
        try:
            return await self.send(msgspec.structs.replace(request, callback=subject))
        finally:
            await subscription.unsubscribe()

    async def send(self, request: ToolRequest) -> ToolResult:
        """Send a prepared ``ToolRequest`` and wait for its result."""
        nc = self._connection()
        try:
            subject = self.subjects.request(request.tool)
        except ValueError as exc:
            return _local_failure(request, ErrorCode.BAD_REQUEST, str(exc))
        payload = encode(request)
        if len(payload) > self.settings.max_payload:
            return _local_failure(
                request,
                ErrorCode.TOO_LARGE,
                f"request of {len(payload)} bytes exceeds the {self.settings.max_payload}-byte limit;"
                " send large data by reference (a URL or object-store key)",
            )
        timeout = request.timeout if request.timeout is not None else self.settings.default_timeout
        wait = timeout + _REPLY_GRACE
        started = time.monotonic()
        with tool_span(
            request.tool,
            request.id,
            kind=SpanKind.CLIENT,
            **{"messaging.destination.name": subject, "messaging.operation.type": "send"},
        ):
            while True:
                try:
                    reply = await nc.request(subject, payload, timeout=wait, headers=inject_headers())
                    break
                except nats.errors.NoRespondersError:
                    if time.monotonic() - started < NO_RESPONDER_RETRY:
                        await anyio.sleep(0.05)
                        continue
                    names = [spec.name for spec in await self._safe_list_tools()]
                    error = UnknownTool(request.tool, close_names(request.tool, names))
                    return ToolResult.failure(request.id, request.tool, error.to_tool_error())
                except anyio.get_cancelled_exc_class():
                    with anyio.CancelScope(shield=True):
                        await self._cancel(request.id)
                    raise
                except nats.errors.TimeoutError:
                    await self._cancel(request.id)
                    return _local_failure(
                        request,
                        ErrorCode.TIMEOUT,
                        f"no answer for {request.tool!r} within {timeout:g}s; the node may be overloaded or gone",
                        retryable=True,
                    )
        try:
            return decode_result(reply.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return _local_failure(request, ErrorCode.INTERNAL, f"the node's reply is not a ToolResult: {exc}")

    async def _cancel(self, request_id: str) -> None:
        # The caller gave up: tell whichever node serves the call to stop it.
        try:
            await self._connection().publish(self.subjects.cancel, encode(CancelRequest(id=request_id)))
        except Exception as exc:  # noqa: BLE001 - best effort; the node's own deadline still applies
            _log.debug("cancel of %s not sent: %s", request_id, exc)

    # -------------------------------------------------------------- catalog

    async def _bucket(self) -> CatalogBucket | None:
        if self._catalog is None:
            nc = self._connection()
            self._catalog = await CatalogBucket.open(
                nc.jetstream(), self.subjects.catalog_bucket, self.settings.catalog_ttl, create=False
            )
        return self._catalog

    async def nodes(self) -> list[NodeEntry]:
        """The live nodes of the mesh with their tools."""
        bucket = await self._bucket()
        return await bucket.entries() if bucket is not None else []

    async def list_tools(self) -> list[ToolSpec]:
        """Every tool served by some node, once each, sorted by name."""
        merged = merge_tools(await self.nodes())
        return [merged[name][0] for name in sorted(merged)]

    async def _safe_list_tools(self) -> list[ToolSpec]:
        try:
            return await self.list_tools()
        except Exception as exc:  # noqa: BLE001 - suggestions are a courtesy
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


def _local_failure(request: ToolRequest, code: ErrorCode, message: str, *, retryable: bool = False) -> ToolResult:
    return ToolResult.failure(request.id, request.tool, ToolError(code=code, message=message, retryable=retryable))


class SyncMesh:
    """A blocking ``Mesh`` for scripts: ``with SyncMesh() as mesh: mesh.call("add", {...})``."""

    def __init__(self, nats_url: str | None = None, **options: Any) -> None:
        self._mesh = Mesh(nats_url, **options)
        self._portal_cm = anyio.from_thread.start_blocking_portal("asyncio")
        self._portal: anyio.from_thread.BlockingPortal | None = None

    def __enter__(self) -> SyncMesh:
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
