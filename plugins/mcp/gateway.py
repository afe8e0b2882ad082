"""``Gateway``: the whole mesh catalog served as one MCP server.

A low-level SDK ``Server`` whose handlers are backed by a ``toolmesh.Mesh``:
``tools/list`` pages through the catalog of every node, ``tools/call`` goes
over NATS through the kernel pipeline of the node serving the tool, and the
tool's callbacks (progress, log, sampling, elicitation) come back through the
gateway to the MCP client.  The gateway follows the catalog (change
announcements plus a poll for nodes that vanished) and sends
``notifications/tools/list_changed`` to every connected client.  Resources,
prompts and completions come from the MCP servers of the gateway's own
``toolmesh.toml`` (see ``resource_proxy``).
"""

from __future__ import annotations

import base64
import logging
from collections import OrderedDict
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
import msgspec
import nats.errors
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from toolmesh import Mesh, ToolmeshError
from toolmesh.contracts import Caller, ErrorCode, ToolCallback, ToolResult, ToolSpec

from .callback_router import CallbackRouter
from .content_mapping import call_result_from_tool_result, mcp_tool_from_spec
from .resource_proxy import ResourceProxy
from .tasks import RELATED_TASK_KEY, TaskRelay, TaskRunner, server_tasks_capability

__all__ = ["DEFAULT_PAGE_SIZE", "Gateway"]

DEFAULT_PAGE_SIZE = 1000
"""Tools per ``tools/list`` page."""

CATALOG_POLL = 1.0
"""Seconds between catalog reads that catch nodes which vanished without announcing it."""

_MAX_CONNECTIONS = 10_000
_BEFORE_INITIALIZE = frozenset({"initialize", "ping"})
"""Requests the MCP lifecycle allows before ``initialize`` has been answered."""
_LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_log = logging.getLogger("toolmesh.mcp.gateway")


def _wire(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _connection_key(ctx: ServerRequestContext[Any, Any]) -> str:
    request = ctx.request
    headers = getattr(request, "headers", None)
    session_id = headers.get("mcp-session-id") if headers is not None else None
    return session_id or "stdio"


class _GatewayServer(Server[Any]):
    """The SDK server announcing ``tools.listChanged`` and tasks on every transport (HTTP sessions use the defaults)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )
        options.capabilities.tasks = server_tasks_capability()
        return options


class Gateway:
    """Serve ``mesh``'s catalog over MCP; run :meth:`follow_catalog` alongside the transport."""

    def __init__(
        self,
        mesh: Mesh,
        *,
        name: str = "toolmesh",
        version: str = "",
        page_size: int = DEFAULT_PAGE_SIZE,
        call_timeout: float | None = None,
        proxy: ResourceProxy | None = None,
    ) -> None:
        self.mesh = mesh
        self.page_size = page_size
        self.call_timeout = call_timeout
        self.server: Server[Any] = _GatewayServer(
            name,
            version=version,
            instructions="Every tool of a toolmesh mesh: calls run on the node serving each tool.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self.server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._set_level)
        self.server.middleware.append(self._require_initialize)
        self.server.middleware.append(self._remember_connection)
        self.server.middleware.append(self._list_tools_fast)
        self.tasks = TaskRunner(self)
        self.callbacks = CallbackRouter(mesh)
        self.server.middleware.append(self.tasks.middleware)
        self.proxy = proxy
        if proxy is not None and proxy.servers:
            proxy.install(self.server)
        self._specs: list[ToolSpec] | None = None
        self._by_name: dict[str, ToolSpec] = {}
        self._listing: list[dict[str, Any]] = []
        self._signature = b""
        self._connections: OrderedDict[str, ServerSession] = OrderedDict()
        self._log_levels: dict[str, str] = {}
        self.changes = 0
        """How many catalog changes were announced to clients."""

    def initialization_options(self) -> InitializationOptions:
        """What the gateway announces in ``initialize`` (tools with ``listChanged``, logging, tasks)."""
        return self.server.create_initialization_options()

    # -------------------------------------------------------------- catalog

    async def catalog(self, *, refresh: bool = False) -> list[ToolSpec]:
        """The mesh catalog as last read (read now when ``refresh`` or never read)."""
        if refresh or self._specs is None:
            await self._update(await self.mesh.list_tools())
        assert self._specs is not None
        return self._specs

    async def _update(self, specs: list[ToolSpec]) -> bool:
        signature = msgspec.json.encode(specs)
        if signature == self._signature and self._specs is not None:
            return False
        first = self._specs is None
        self._specs = specs
        self._by_name = {spec.name: spec for spec in specs}
        self._listing = [_wire(mcp_tool_from_spec(spec)) for spec in specs]  # dumped once, served many times
        self._signature = signature
        return not first

    async def follow_catalog(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Watch catalog announcements (and poll) and tell every client when the tool set changes."""
        assert self.mesh.nc is not None
        subscription = await self.mesh.nc.subscribe(self.mesh.subjects.catalog_changed("*"))
        await self.callbacks.start()
        await self.catalog(refresh=True)
        task_status.started()
        nodes = await self.mesh.node_names()
        try:
            while True:
                announced = False
                with anyio.move_on_after(CATALOG_POLL):
                    await subscription.next_msg(timeout=None)
                    await anyio.sleep(0.02)  # let a burst of announcements settle
                    announced = True
                try:
                    # Nodes announce every change of their tools; the poll only has to catch nodes
                    # that vanished (or came back) silently, which the set of names shows cheaply:
                    # reading a large catalog every second would stall the event loop each time.
                    polled = await self.mesh.node_names()
                    if not announced and polled == nodes:
                        continue
                    nodes = polled
                    changed = await self._update(await self.mesh.list_tools())
                except (nats.errors.Error, ToolmeshError) as exc:  # keep the last catalog through a hiccup
                    _log.warning("reading the catalog failed: %r", exc)
                    continue
                if changed:
                    await self.announce_change()
        finally:
            with anyio.CancelScope(shield=True):
                await subscription.unsubscribe()
                await self.callbacks.stop()

    async def announce_change(self) -> None:
        """Send ``notifications/tools/list_changed`` to every connected client."""
        self.changes += 1
        for session in list(self._connections.values()):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:  # noqa: BLE001 - isolation boundary around an MCP client's session
                _log.debug("list_changed not delivered: %s", exc)

    async def _require_initialize(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Refuse every request but ``initialize`` and ``ping`` until the handshake (-32600, Invalid Request).

        The SDK's own gate sits behind the gateway's middleware (which answers
        ``tools/list`` and tasks itself), so the gateway checks first.  MCP
        names no code for this; -32002 ("Server not initialized" in LSP) is
        MCP's retired resource-not-found code, so the JSON-RPC code fits best.
        A 2026-07-28 connection carries its handshake in every request.
        """
        if (
            ctx.method in _BEFORE_INITIALIZE
            or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            or ctx.session.client_params is not None
        ):
            return await call_next(ctx)
        raise MCPError(
            types.INVALID_REQUEST,
            f"Server not initialized: send initialize before {ctx.method!r} (only ping may come first)",
        )

    async def _remember_connection(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        key = _connection_key(ctx)
        if ctx.method != "initialize":
            self._connections[key] = ctx.session
            self._connections.move_to_end(key)
            while len(self._connections) > _MAX_CONNECTIONS:
                self._connections.popitem(last=False)
        return await call_next(ctx)

    # -------------------------------------------------------------- handlers

    async def _list_tools_fast(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Serve 2025-11-25 ``tools/list`` pages as built, skipping the SDK's re-validation of every tool.

        The pages are dumps of SDK ``Tool`` models (validated once per catalog
        change), so checking them again on every request only costs time.
        """
        if ctx.method != "tools/list" or ctx.protocol_version != LATEST_HANDSHAKE_VERSION:
            return await call_next(ctx)
        cursor = (ctx.params or {}).get("cursor")
        return await self._page(ctx, cursor if isinstance(cursor, str) else None)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        page = await self._page(ctx, params.cursor if params is not None else None)
        return types.ListToolsResult.model_validate(page, by_name=False)

    async def _page(self, ctx: ServerRequestContext[Any, Any], cursor: str | None) -> dict[str, Any]:
        await self.catalog()
        start = 0
        if cursor:
            try:
                start = int(base64.urlsafe_b64decode(cursor.encode()).decode())
            except ValueError:
                raise MCPError(types.INVALID_PARAMS, f"invalid cursor {cursor!r}") from None
        end = start + self.page_size
        page = self._listing[start:end]
        result: dict[str, Any] = {"tools": page}
        if end < len(self._listing):
            result["nextCursor"] = base64.urlsafe_b64encode(str(end).encode()).decode()
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            result.update(resultType="complete", ttlMs=0, cacheScope="private")  # required from 2026-07-28 on
        return result

    async def _set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self._log_levels[_connection_key(ctx)] = params.level
        return types.EmptyResult()

    def spec(self, name: str) -> ToolSpec | None:
        """The catalog spec of ``name`` as last read."""
        return self._by_name.get(name)

    async def find_spec(self, name: str) -> ToolSpec | None:
        """The catalog spec of ``name``, reading the catalog again when the last read lacks it."""
        spec = self.spec(name)
        if spec is None:
            await self.catalog(refresh=True)  # a node may have joined since the last poll
            spec = self.spec(name)
        return spec

    async def run_tool(
        self,
        ctx: ServerRequestContext[Any, Any],
        name: str,
        arguments: dict[str, Any],
        task: TaskRelay | None = None,
    ) -> ToolResult:
        """Call ``name`` on the mesh with callbacks relayed to the client of ``ctx`` (for ``task``, if given).

        A task's call carries the task in its request ``meta`` (``io.modelcontextprotocol/related-task``),
        so the tool can tell which MCP task it runs for.
        """
        client = ctx.session.client_params
        caller = Caller(identity=f"mcp:{client.client_info.name}" if client is not None else "mcp")
        meta = {RELATED_TASK_KEY: {"taskId": task.task_id}} if task is not None else None
        if not self.callbacks.running:  # follow_catalog is not running: one callback subject per call
            return await self.mesh.call(
                name,
                arguments,
                timeout=self.call_timeout,
                caller=caller,
                meta=meta,
                on_callback=self._relay(ctx, name, task),
            )
        request = self.mesh.new_request(name, arguments, timeout=self.call_timeout, caller=caller, meta=meta)
        return await self.callbacks.send(request, self._relay(ctx, name, task))

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        result = await self.run_tool(ctx, params.name, params.arguments or {})
        return await self.to_call_result(params.name, result)

    async def to_call_result(self, name: str, result: ToolResult) -> types.CallToolResult:
        """The MCP result of a mesh call; an unknown tool is a protocol error (-32602)."""
        if result.is_error and result.error is not None and result.error.code == ErrorCode.UNKNOWN_TOOL:
            raise MCPError(types.INVALID_PARAMS, result.error.message)
        spec = self.spec(name) if result.is_error else await self.find_spec(name)
        return call_result_from_tool_result(result, spec)

    def _relay(self, ctx: ServerRequestContext[Any, Any], tool: str, task: TaskRelay | None = None) -> Any:
        """The callback handler of one call: request-scoped, or for a task on the connection's own stream."""
        related = None if task is not None else ServerMessageMetadata(related_request_id=ctx.request_id)
        related_request = None if task is not None else ctx.request_id
        task_meta = {RELATED_TASK_KEY: {"taskId": task.task_id}} if task is not None else None
        minimum = self._log_levels.get(_connection_key(ctx), "debug")

        async def on_callback(callback: ToolCallback) -> Any:
            data = callback.data
            if callback.kind == "progress":
                progress, total, message = data.get("progress", 0.0), data.get("total"), data.get("message")
                if task is None:
                    await ctx.session.report_progress(progress, total, message)
                elif task.progress_token is not None:
                    params = types.ProgressNotificationParams(
                        progress_token=task.progress_token, progress=progress, total=total, message=message
                    )
                    params.meta = task_meta
                    await ctx.session.send_notification(types.ProgressNotification(params=params))
                return None
            if callback.kind == "log":
                level = str(data.get("level", "info")).lower()
                level = level if level in _LOG_LEVELS else "info"
                if _LOG_LEVELS.index(level) < _LOG_LEVELS.index(minimum):
                    return None
                payload = {key: value for key, value in data.items() if key not in ("level", "logger")}
                message = payload.get("message") if list(payload) == ["message"] else payload
                log = types.LoggingMessageNotificationParams(
                    level=level,  # type: ignore[arg-type]
                    logger=data.get("logger") or tool,
                    data=message,
                )
                log.meta = task_meta
                notification = types.LoggingMessageNotification(params=log)
                await ctx.session.send_notification(notification, related_request_id=related_request)
                return None
            if callback.kind in ("sampling", "elicitation"):
                if task is not None:
                    task.waiting(True)
                try:
                    if callback.kind == "sampling":
                        sampling = types.CreateMessageRequestParams.model_validate(_with_meta(data, task_meta))
                        request = types.CreateMessageRequest(params=sampling)
                        answer: Any = await ctx.session.send_request(
                            request, types.CreateMessageResult, metadata=related
                        )
                    else:
                        elicit = _elicit_params(_with_meta(data, task_meta))
                        answer = await ctx.session.send_request(
                            types.ElicitRequest(params=elicit), types.ElicitResult, metadata=related
                        )
                finally:
                    if task is not None:
                        task.waiting(False)
                return _wire(answer)
            raise ValueError(f"the MCP gateway cannot relay {callback.kind!r} callbacks")

        return on_callback


def _with_meta(data: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """``data`` (request params on the wire) with ``extra`` merged into its ``_meta``."""
    if not extra:
        return data
    meta = data.get("_meta")
    return {**data, "_meta": {**(meta if isinstance(meta, dict) else {}), **extra}}


def _elicit_params(data: dict[str, Any]) -> types.ElicitRequestParams:
    if data.get("mode") == "url":
        return types.ElicitRequestURLParams.model_validate(data)
    return types.ElicitRequestFormParams.model_validate(data)
