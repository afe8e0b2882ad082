"""Task-augmented ``tools/call`` (MCP 2025-11-25): ``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/cancel``.

Offered on every 2025-11-25 connection, whatever the client declared: the
gateway announces ``tasks.requests.tools.call``, and the specification ties
task augmentation to the *receiver's* capability ("Requestors SHOULD only
augment requests with a task if the corresponding capability has been
declared by the receiver"; "Receivers that accept a task-augmented request
MUST return a CreateTaskResult").  A client's own ``tasks`` capability only
says which requests *it* receives as tasks (sampling, elicitation), so a
client without it still gets a task when it asks for one, and a
``required`` tool called without a task still answers -32601.  Other
revisions have no in-core tasks: their calls run normally.  A
task-augmented call answers at once with a ``CreateTaskResult``; the call
runs on the mesh in the background and the client polls or waits for the
result.  The tool's progress and log messages reach the client on the
connection's own stream, tagged with the task; while it waits for a sampling
or elicitation answer the task is ``input_required``.  Per-tool ``task_support`` is honoured: ``forbidden`` tools refuse a
task, ``required`` tools refuse to run without one.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError

if TYPE_CHECKING:
    from toolmesh.contracts import ToolResult, ToolSpec

__all__ = [
    "RELATED_TASK_KEY",
    "TASKS_PROTOCOL_VERSION",
    "TASK_METHODS",
    "TaskRelay",
    "TaskRunner",
    "TaskTools",
    "server_tasks_capability",
]

TASK_METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel")
"""The task requests a client may send."""

TASKS_PROTOCOL_VERSION = "2025-11-25"
"""The protocol revision whose core has tasks (older ones predate them; 2026-07-28 moved them to an extension)."""

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
"""``_meta`` key tying notifications, requests and the result to their task."""
DEFAULT_TTL_MS = 10 * 60 * 1000
POLL_INTERVAL_MS = 500
_TERMINAL = ("completed", "failed", "cancelled")


def server_tasks_capability() -> types.ServerTasksCapability:
    """What the gateway announces: list, cancel, and task-augmented ``tools/call``."""
    return types.ServerTasksCapability(
        list=types.TasksListCapability(),
        cancel=types.TasksCancelCapability(),
        requests=types.ServerTasksRequestsCapability(
            tools=types.TasksToolsCapability(call=types.TasksCallCapability())
        ),
    )


def _iso(instant: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(instant)) + f".{int(instant % 1 * 1000):03d}Z"


@dataclass
class TaskRelay:
    """What the gateway's callback relay needs to know about a running task."""

    task_id: str
    progress_token: str | int | None = None
    waiting: Any = None
    """``waiting(True)`` while the task waits for the client (``input_required``), ``waiting(False)`` after."""


@dataclass
class _Task:
    task_id: str
    owner: str
    ttl_ms: int
    progress_token: str | int | None = None
    status: str = "working"
    status_message: str | None = None
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    result: dict[str, Any] | None = None
    error: MCPError | None = None
    done: anyio.Event = field(default_factory=anyio.Event)
    runner: asyncio.Task[None] | None = None

    def wire(self) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created),
            "lastUpdatedAt": _iso(self.updated),
            "ttl": self.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        }
        if self.status_message:
            task["statusMessage"] = self.status_message
        return task

    def finish(self, status: str, message: str | None = None) -> None:
        self.status, self.status_message, self.updated = status, message, time.time()
        self.done.set()

    def waiting(self, waiting: bool) -> None:
        if self.status not in _TERMINAL:
            self.status = "input_required" if waiting else "working"
            self.updated = time.time()

    def expired(self, now: float) -> bool:
        return self.status in _TERMINAL and now - self.updated > self.ttl_ms / 1000


class TaskTools(Protocol):
    """What a ``TaskRunner`` asks of its gateway: the tools' specs, a call on the mesh, its MCP result.

    The gateway imports this module to offer tasks, so the runner names it by what it uses.
    """

    def spec(self, name: str) -> ToolSpec | None: ...

    async def find_spec(self, name: str) -> ToolSpec | None: ...

    async def run_tool(
        self,
        ctx: ServerRequestContext[Any, Any],
        name: str,
        arguments: dict[str, Any],
        task: TaskRelay | None = None,
    ) -> ToolResult: ...

    async def to_call_result(self, name: str, result: ToolResult) -> types.CallToolResult: ...


class TaskRunner:
    """Tasks of one gateway, kept in memory; installed as a server middleware."""

    def __init__(self, gateway: TaskTools) -> None:
        self.gateway = gateway
        self.tasks: dict[str, _Task] = {}

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Answer task requests and task-augmented calls; pass everything else on."""
        if ctx.method not in TASK_METHODS and ctx.method != "tools/call":
            return await call_next(ctx)
        if ctx.protocol_version != TASKS_PROTOCOL_VERSION:
            return await call_next(ctx)
        params = dict(ctx.params or {})
        if ctx.method == "tools/call":
            return await self._call(ctx, call_next, params)
        self._expire()
        owner = _owner(ctx)
        if ctx.method == "tasks/list":
            return {"tasks": [task.wire() for task in self.tasks.values() if task.owner == owner]}
        task = self.tasks.get(str(params.get("taskId", "")))
        if task is None or task.owner != owner:
            raise MCPError(types.INVALID_PARAMS, f"no task {params.get('taskId')!r}")
        if ctx.method == "tasks/get":
            return task.wire()
        if ctx.method == "tasks/cancel":
            if task.status in _TERMINAL:
                raise MCPError(types.INVALID_PARAMS, f"task {task.task_id} is already {task.status}")
            if task.runner is not None:
                task.runner.cancel()
            task.finish("cancelled", "cancelled by the client")
            return task.wire()
        await task.done.wait()
        if task.error is not None:
            raise task.error
        if task.result is None:
            raise MCPError(types.INVALID_PARAMS, f"task {task.task_id} was {task.status}; it has no result")
        meta = {**(task.result.get("_meta") or {}), RELATED_TASK_KEY: {"taskId": task.task_id}}
        return {**task.result, "_meta": meta}

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, params: dict[str, Any]
    ) -> HandlerResult:
        name = str(params.get("name", ""))
        spec = self.gateway.spec(name)
        support = spec.task_support if spec is not None else "forbidden"
        requested = params.get("task")
        if requested is None:
            if support == "required":
                raise MCPError(
                    types.METHOD_NOT_FOUND, f"tool {name!r} must be called as a task (taskSupport: required)"
                )
            return await call_next(ctx)
        if spec is None:
            spec = await self.gateway.find_spec(name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"no tool named {name!r} is served on this mesh")
        support = spec.task_support
        if support == "forbidden":
            raise MCPError(types.METHOD_NOT_FOUND, f"tool {name!r} does not support task-augmented calls")
        ttl = requested.get("ttl") if isinstance(requested, dict) else None
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        task = _Task(
            task_id=uuid.uuid4().hex,
            owner=_owner(ctx),
            ttl_ms=int(ttl or DEFAULT_TTL_MS),
            progress_token=meta.get("progressToken"),
        )
        self.tasks[task.task_id] = task
        task.runner = asyncio.get_running_loop().create_task(
            self._run(ctx, task, name, dict(params.get("arguments") or {}))
        )
        return {"task": task.wire()}

    async def _run(
        self, ctx: ServerRequestContext[Any, Any], task: _Task, name: str, arguments: dict[str, Any]
    ) -> None:
        relay = TaskRelay(task_id=task.task_id, progress_token=task.progress_token, waiting=task.waiting)
        try:
            result = await self.gateway.run_tool(ctx, name, arguments, relay)
            call_result = await self.gateway.to_call_result(name, result)
        except MCPError as exc:
            task.error = exc
            task.finish("failed", exc.message)
            return
        except asyncio.CancelledError:
            if task.status not in _TERMINAL:
                task.finish("cancelled")
            raise
        task.result = call_result.model_dump(by_alias=True, mode="json", exclude_none=True)
        task.result.pop("resultType", None)
        task.finish(
            "failed" if call_result.is_error else "completed",
            "the tool reported an error" if call_result.is_error else None,
        )

    def _expire(self) -> None:
        now = time.time()
        for task_id in [task_id for task_id, task in self.tasks.items() if task.expired(now)]:
            del self.tasks[task_id]


def _owner(ctx: ServerRequestContext[Any, Any]) -> str:
    headers = getattr(ctx.request, "headers", None)
    return (headers.get("mcp-session-id") if headers is not None else None) or "stdio"
