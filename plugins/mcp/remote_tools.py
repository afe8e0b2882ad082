"""Remote MCP servers as mesh tools: one supervisor per configured server.

A **native** server keeps one persistent session: it is pinged, re-listed on
``notifications/tools/list_changed``, and reconnected with exponential
backoff after it dies, hangs or sends garbage — meanwhile its tools stay in
the catalog marked unavailable with the reason.  An **on-demand** server is
connected only to list its tools and for each call.  Tools the server runs as
tasks are called as tasks (see ``remote_tasks``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
import msgspec
from mcp.client.session import ClientRequestContext, ClientSession, IncomingMessage
from mcp.shared.exceptions import MCPError
from toolmesh import CallContext, ExecutionFailed, InvalidArguments, ToolmeshError, ToolUnavailable
from toolmesh.contracts import ToolResult, ToolSpec

from .client_session import Connection, list_all_tools, open_connection, open_session
from .content_mapping import spec_from_mcp_tool, tool_result_from_call_result
from .remote_tasks import StatusHandler, call_as_task, runs_tool_tasks, wants_task
from .server_config import ServerConfig
from .tool_names import SOURCE, mesh_tool_name

__all__ = ["RemoteServer"]

_log = logging.getLogger("toolmesh.mcp")

_FIRST_BACKOFF = 0.5
_PING_TIMEOUT = 5.0
_MAX_RELISTS = 3
"""Listings one on-demand probe repeats for a server that keeps announcing changes while listed."""


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.message}"
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _Broken(Exception):
    """The session must be dropped (garbage on the wire, lost connection, missed ping)."""


class RemoteServer:
    """One configured MCP server: its tools, its session (native mode) and its health."""

    def __init__(self, config: ServerConfig, on_change: Callable[[], None]) -> None:
        self.config = config
        self.on_change = on_change
        self.tools: dict[str, types.Tool] = {}
        """Remote tools by their remote name, as last listed."""
        self.names: dict[str, str] = {}
        """Mesh name → remote name."""
        self.unavailable_reason: str | None = "not connected yet"
        self.session: ClientSession | None = None
        self._connection: Connection | None = None
        self.runs_tool_tasks = False
        """Whether the server announced task-augmented ``tools/call`` when it was last listed."""
        self.listed = anyio.Event()
        """Set once the first listing attempt finished, successfully or not."""
        self.problems: list[str] = []
        self._stop = anyio.Event()
        self._wake = anyio.Event()
        self._broken_reason: str | None = None
        self._relist = False
        self._inflight: dict[int, CallContext] = {}
        self._task_progress: dict[str, CallContext] = {}
        """Calls running as tasks, by the progress token sent with them."""
        self._scopes: set[anyio.CancelScope] = set()
        self._task: asyncio.Task[None] | None = None

    # -------------------------------------------------------------- specs

    def specs(self) -> list[ToolSpec]:
        """The mesh specs of this server's tools, marked unavailable while it is down."""
        specs = []
        names: dict[str, str] = {}
        problems = []
        for remote in sorted(self.tools):
            name = mesh_tool_name(self.config.name, remote)
            if name in names:
                problems.append(
                    f"MCP server {self.config.name!r}: tools {names[name]!r} and {remote!r} both map to {name!r};"
                    f" keeping {names[name]!r}"
                )
                continue
            names[name] = remote
            spec = spec_from_mcp_tool(self.tools[remote], name=name, source=SOURCE, server=self.config.name)
            if self.config.tool_timeout is not None:
                spec = msgspec.structs.replace(spec, timeout=self.config.tool_timeout)
            if not self.runs_tool_tasks and spec.task_support != "forbidden":
                # Without the server's tasks capability its tools' taskSupport means nothing (MCP 2025-11-25).
                spec = msgspec.structs.replace(spec, task_support="forbidden")
            if self.unavailable_reason is not None:
                spec = msgspec.structs.replace(
                    spec,
                    available=False,
                    unavailable_reason=f"MCP server {self.config.name!r} ({self.config.describe()}) is down:"
                    f" {self.unavailable_reason}",
                )
            specs.append(spec)
        self.names = names
        for problem in problems:
            if problem not in self.problems:
                _log.warning("%s", problem)
        self.problems = problems
        return specs

    def _set_state(self, *, tools: list[types.Tool] | None = None, reason: str | None) -> None:
        changed = reason != self.unavailable_reason
        if tools is not None:
            listed = {tool.name: tool for tool in tools}
            changed = changed or listed != self.tools
            self.tools = listed
        self.unavailable_reason = reason
        if changed:
            self.on_change()

    # -------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the supervisor task on the running loop."""
        self._task = asyncio.get_running_loop().create_task(self._supervise())

    async def stop(self) -> None:
        """Stop the supervisor and close the session (a stdio server process is stopped)."""
        self._stop.set()
        self._wake.set()
        for scope in list(self._scopes):
            scope.cancel()
        if self._task is not None:
            with anyio.move_on_after(10):
                await asyncio.shield(self._task)
            self._task.cancel()

    def mark_broken(self, reason: str) -> None:
        """Drop the session (native: failing calls in flight with ``reason``) and reconnect with backoff."""
        if self._broken_reason is None:
            self._broken_reason = reason
            if self.config.mode == "native":
                for scope in list(self._scopes):
                    scope.cancel()
            self._wake.set()

    async def _message(self, message: IncomingMessage) -> None:
        if await self._task_progress_of(message):
            return
        if isinstance(message, Exception):
            self.mark_broken(f"sent malformed JSON-RPC ({_describe(message)})")
        elif isinstance(message, types.ToolListChangedNotification):
            self._relist = True
            if self.config.mode == "native":  # an on-demand probe re-lists in its own session
                self._wake.set()

    async def _task_progress_of(self, message: IncomingMessage) -> bool:
        """Relay a task's progress (it outlives the request that created the task) to its call."""
        if not isinstance(message, types.ProgressNotification):
            return False
        context = self._task_progress.get(str(message.params.progress_token))
        if context is None:
            return False
        params = message.params
        await context.progress(params.progress, params.total, params.message)
        return True

    async def _call_message(self, message: IncomingMessage) -> None:
        """Messages of an on-demand call's session: only a task's progress matters there."""
        await self._task_progress_of(message)

    async def _supervise(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            self._broken_reason = None
            self._wake = anyio.Event()
            try:
                if self.config.mode == "native":
                    await self._serve_native()
                    attempt = 0
                else:
                    await self._probe()
                    self.listed.set()
                    attempt = 0
                    await self._wake.wait()
                    if self._stop.is_set():
                        return
                    raise _Broken(self._broken_reason or "unreachable")
            except Exception as exc:  # noqa: BLE001 - isolation boundary around the MCP server: retry later
                reason = str(exc) if isinstance(exc, _Broken) else self._broken_reason or _describe(exc)
                _log.warning("MCP server %s is unavailable: %s", self.config.name, reason)
                self._set_state(reason=reason)
            finally:
                self.session = self._connection = None
                self.listed.set()
            if self._stop.is_set():
                return
            delay = min(self.config.max_backoff, _FIRST_BACKOFF * 2**attempt) * (0.8 + 0.4 * random.random())
            attempt += 1
            with anyio.move_on_after(delay):
                await self._stop.wait()

    async def _probe(self) -> None:
        """List an on-demand server's tools, listing again while it announces changes (lazy registration)."""
        self._relist = False
        with anyio.fail_after(self.config.connect_timeout):
            async with open_session(self.config, message_handler=self._message) as session:
                tools = await self._list_tools(session)
                for _ in range(_MAX_RELISTS):
                    # A change announced during the listing reaches the handler before this ping's answer.
                    await session.send_ping()
                    if not self._relist:
                        break
                    self._relist = False
                    tools = await self._list_tools(session)
        self._set_state(tools=tools, reason=None)

    async def _serve_native(self) -> None:
        reason: str | None = None
        with anyio.CancelScope() as teardown:
            async with open_connection(
                self.config,
                message_handler=self._message,
                logging_callback=self._remote_log,
                sampling_callback=self._sampling,
                elicitation_callback=self._elicitation,
            ) as connection:
                session = connection.session
                with anyio.fail_after(self.config.connect_timeout):
                    tools = await self._list_tools(session)
                self.session, self._connection = session, connection
                self._set_state(tools=tools, reason=None)
                self.listed.set()
                reason = await self._watch(session)
                self.session = self._connection = None
                if reason is not None:
                    # Tell the mesh first: closing a hung session may take long, so it is cut short.
                    self._set_state(reason=reason)
                    teardown.cancel()
        if reason is not None:
            raise _Broken(reason)

    async def _list_tools(self, session: ClientSession) -> list[types.Tool]:
        capabilities = session.server_capabilities
        self.runs_tool_tasks = runs_tool_tasks(capabilities)
        if capabilities is not None and capabilities.tools is None:
            return []  # a server of resources or prompts only
        return await list_all_tools(session)

    async def _watch(self, session: ClientSession) -> str | None:
        """Ping and re-list until stopped (``None``) or broken (the reason)."""
        while not self._stop.is_set():
            with anyio.move_on_after(self.config.ping_interval):
                await self._wake.wait()
            self._wake = anyio.Event()
            if self._stop.is_set():
                return None
            if self._broken_reason is not None:
                return self._broken_reason
            try:
                with anyio.fail_after(min(_PING_TIMEOUT, self.config.connect_timeout)):
                    if self._relist:
                        self._relist = False
                        self._set_state(tools=await self._list_tools(session), reason=None)
                    else:
                        await session.send_ping()
            except Exception as exc:  # noqa: BLE001 - isolation boundary around the MCP server: it is down
                _log.debug("MCP server %s failed its check: %r", self.config.name, exc)
                return f"stopped answering ({_describe(exc)})"
        return None

    # -------------------------------------------------------------- calls

    async def call(self, remote: str, arguments: dict[str, Any], context: CallContext) -> ToolResult:
        """Call ``remote`` on this server; progress is relayed to ``context``; the kernel's deadline cancels it."""

        async def progress(value: float, total: float | None, message: str | None) -> None:
            await context.progress(value, total, message)

        if self.config.mode == "native":
            connection = self._connection
            if connection is None:
                raise ToolUnavailable(
                    f"MCP server {self.config.name!r} is not connected: {self.unavailable_reason or 'reconnecting'}"
                )
            return await self._call_on(connection, remote, arguments, context, progress)
        connected = False
        try:
            async with open_connection(
                self.config,
                message_handler=self._call_message,
                logging_callback=self._remote_log,
                sampling_callback=self._sampling,
                elicitation_callback=self._elicitation,
            ) as connection:
                connected = True
                return await self._call_on(connection, remote, arguments, context, progress)
        except Exception as exc:
            if connected:
                raise
            reason = _describe(exc)
            self._set_state(reason=reason)
            self.mark_broken(reason)
            raise ToolUnavailable(f"cannot connect to MCP server {self.config.name!r}: {reason}") from exc

    async def _call_on(
        self,
        connection: Connection,
        remote: str,
        arguments: dict[str, Any],
        context: CallContext,
        progress: Any,
    ) -> ToolResult:
        key = id(context)
        self._inflight[key] = context
        scope = anyio.CancelScope()
        self._scopes.add(scope)
        session = connection.session
        remaining = context.remaining()
        token: str | None = None
        try:
            with scope:
                if wants_task(self.tools.get(remote), session.server_capabilities, remaining):
                    token = f"toolmesh-{uuid.uuid4().hex}"
                    self._task_progress[token] = context
                    result = await call_as_task(
                        connection,
                        remote,
                        arguments,
                        remaining=remaining,
                        progress_token=token,
                        on_status=self._status_reporter(context),
                    )
                    if not result.is_error:
                        await session.validate_tool_result(remote, result)
                else:
                    result = await session.call_tool(remote, arguments, progress_callback=progress)
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                self._set_state(reason=f"connection lost ({exc.message})")
                self.mark_broken(f"connection lost ({exc.message})")
                raise ToolUnavailable(
                    f"MCP server {self.config.name!r} went away during the call: {exc.message}"
                ) from None
            if exc.code == types.INVALID_PARAMS:
                raise InvalidArguments(
                    f"MCP server {self.config.name!r} refused the call: {exc.message}"
                ) from None
            raise ExecutionFailed(
                f"MCP server {self.config.name!r} answered with error {exc.code}: {exc.message}"
            ) from None
        except (msgspec.ValidationError, ValueError, RuntimeError) as exc:
            raise ExecutionFailed(
                f"MCP server {self.config.name!r} returned an unusable result: {exc}"
            ) from None
        finally:
            self._scopes.discard(scope)
            self._inflight.pop(key, None)
            if token is not None:
                self._task_progress.pop(token, None)
        if scope.cancelled_caught:
            reason = self._broken_reason or "the node is stopping"
            raise ToolUnavailable(f"MCP server {self.config.name!r} failed during the call: {reason}")
        if not isinstance(result, types.CallToolResult):
            raise ExecutionFailed(
                f"MCP server {self.config.name!r} returned {type(result).__name__}, not a tool result"
            )
        return tool_result_from_call_result(context.request.id, context.request.tool, result)

    def _status_reporter(self, context: CallContext) -> StatusHandler:
        """Tell the caller when a task's status message changes (servers describe their stages there)."""
        last: str | None = None

        async def report(status: types.GetTaskResult) -> None:
            nonlocal last
            if status.status_message and status.status_message != last:
                last = status.status_message
                await context.log("info", f"{status.status}: {status.status_message}")

        return report

    # -------------------------------------------------------------- server → caller

    def _only_call(self) -> CallContext | None:
        return next(iter(self._inflight.values())) if len(self._inflight) == 1 else None

    async def _remote_log(self, params: types.LoggingMessageNotificationParams) -> None:
        context = self._only_call()
        message = params.data if isinstance(params.data, str) else msgspec.json.encode(params.data).decode()
        if context is not None:
            await context.log(params.level, message)
        else:
            _log.info("MCP server %s: %s", self.config.name, message)

    async def _ask(self, kind: str, params: Any) -> Any:
        context = self._only_call()
        if context is None:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"{kind} is relayed only while exactly one call is running",
            )
        try:
            return await context.ask(kind, params.model_dump(by_alias=True, mode="json", exclude_none=True))
        except ToolmeshError as exc:  # the server gets the refusal
            _log.debug("%s for MCP server %s not answered: %r", kind, self.config.name, exc)
            return types.ErrorData(code=types.INTERNAL_ERROR, message=str(exc))

    async def _sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        answer = await self._ask("sampling", params)
        return (
            answer
            if isinstance(answer, types.ErrorData)
            else types.CreateMessageResult.model_validate(answer)
        )

    async def _elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        answer = await self._ask("elicitation", params)
        return answer if isinstance(answer, types.ErrorData) else types.ElicitResult.model_validate(answer)
