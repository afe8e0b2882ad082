"""Task-augmented ``tools/call`` to remote MCP servers (MCP 2025-11-25, the requestor's side).

Only servers that announce ``tasks.requests.tools.call`` get tasks (the
specification forbids them otherwise).  A tool whose ``execution.taskSupport``
is ``required`` is always called as a task.  An ``optional`` one is called as
a task when the mesh call may run longer than :data:`TASK_AFTER` seconds: a
plain call holds one request (over HTTP, one response stream) open for its
whole run, and idle connections of a minute or more are what proxies and load
balancers cut (60 s is a common idle timeout); a task holds nothing open
between short polls.  A call with the default deadline (60 s) stays a plain
call.

A task is created with ``tools/call`` + ``task`` (a time to live covering the
call's deadline), polled with ``tasks/get`` at the server's ``pollInterval``
(kept between 0.05 s and 5 s) until it ends or needs input, and its result is
fetched with ``tasks/result`` — which also carries the sampling or
elicitation requests of an ``input_required`` task.  When the mesh call is
cancelled (its deadline, its caller, the node stopping) the task is cancelled
with ``tasks/cancel``.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from toolmesh import ExecutionFailed

from .client_session import Connection

__all__ = ["TASK_AFTER", "StatusHandler", "call_as_task", "runs_tool_tasks", "wants_task"]

TASK_AFTER = 60.0
"""An ``optional`` tool is called as a task when the call's deadline is further away than this (seconds)."""

_POLL_DEFAULT = 0.5
_POLL_MIN = 0.05
_POLL_MAX = 5.0
_TTL_MARGIN = 60.0
"""Seconds a task is kept beyond the call's deadline, so that its result is still there to fetch."""
_CANCEL_GRACE = 5.0
_TERMINAL = ("completed", "failed", "cancelled")

StatusHandler = Callable[[types.GetTaskResult], Awaitable[None]]
"""Called with every status a task is polled in."""


def runs_tool_tasks(capabilities: types.ServerCapabilities | None) -> bool:
    """Whether a server announced task-augmented ``tools/call`` (``tasks.requests.tools.call``)."""
    tasks = capabilities.tasks if capabilities is not None else None
    requests = tasks.requests if tasks is not None else None
    return requests is not None and requests.tools is not None and requests.tools.call is not None


def wants_task(tool: types.Tool | None, capabilities: types.ServerCapabilities | None, remaining: float | None) -> bool:
    """Whether to call ``tool`` as a task, given the server's capabilities and the seconds the call has left."""
    if tool is None or tool.execution is None or not runs_tool_tasks(capabilities):
        return False
    if tool.execution.task_support == "required":
        return True
    return tool.execution.task_support == "optional" and (remaining is None or remaining > TASK_AFTER)


async def call_as_task(
    connection: Connection,
    name: str,
    arguments: dict[str, Any],
    *,
    remaining: float | None,
    progress_token: str,
    on_status: StatusHandler,
) -> types.CallToolResult:
    """Call ``name`` as a task and return its result; cancelling the caller cancels the task.

    ``progress_token`` is sent with the call: the server's progress
    notifications for the task carry it.  ``on_status`` sees every polled
    status.  Raises ``MCPError`` as a plain call would (``tasks/result``
    returns what the call would have), ``ExecutionFailed`` when the task is
    lost, cancelled by the server, or its answers make no sense.
    """
    session = connection.session
    task: dict[str, Any] = {}
    if remaining is not None:
        task["ttl"] = math.ceil((remaining + _TTL_MARGIN) * 1000)
    params = {"name": name, "arguments": arguments, "task": task, "_meta": {"progressToken": progress_token}}
    headers = {MCP_PROTOCOL_VERSION_HEADER: session.protocol_version or "2025-11-25"}
    raw = await connection.outbound.send_raw_request("tools/call", params, {"headers": headers})
    if "task" not in raw:  # a server that ignored the task ran the call as a plain one
        return types.CallToolResult.model_validate(raw, by_name=False)
    status = types.GetTaskResult.model_validate(raw["task"], by_name=False)
    try:
        while status.status not in (*_TERMINAL, "input_required"):
            await anyio.sleep(_poll_interval(status))
            status = await _get(connection, status.task_id)
            await on_status(status)
        if status.status == "cancelled":
            raise ExecutionFailed(
                f"the MCP server cancelled task {status.task_id} of tool {name!r}"
                + (f": {status.status_message}" if status.status_message else "")
            )
        request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=status.task_id))
        return await session.send_request(request, types.CallToolResult)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_GRACE):
            await _cancel(connection, status.task_id)
        raise


def _poll_interval(status: types.GetTaskResult) -> float:
    if status.poll_interval is None:
        return _POLL_DEFAULT
    return min(_POLL_MAX, max(_POLL_MIN, status.poll_interval / 1000))


async def _get(connection: Connection, task_id: str) -> types.GetTaskResult:
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    try:
        return await connection.session.send_request(request, types.GetTaskResult)
    except MCPError as exc:
        if exc.code != types.INVALID_PARAMS:
            raise
        raise ExecutionFailed(
            f"the MCP server no longer knows task {task_id} ({exc.message}); call the tool again"
        ) from None


async def _cancel(connection: Connection, task_id: str) -> None:
    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    try:
        await connection.session.send_request(request, types.CancelTaskResult)
    except MCPError:
        pass  # already over, or unknown to the server: nothing left to stop
