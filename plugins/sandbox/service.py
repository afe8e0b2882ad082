"""``Sandbox``: the per-kernel state of the plugin — tools, worker pool, secrets, breadcrumbs — and its calls.

One ``Sandbox`` lives in ``kernel.plugin_state["sandbox"]`` from startup to
shutdown.  Sandbox failures are mapped to error codes here, in one place:
a denied permission (or breadcrumb schema) is ``sandbox_violation``, an
overrun ``timeout_ms`` is ``timeout``, a blown memory limit is
``sandbox_violation``, anything the tool throws is ``execution_failed``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
import nats.errors
from nats.aio.client import Client as NATS
from toolmesh import (
    CallContext,
    CallTimeout,
    ExecutionFailed,
    PayloadTooLarge,
    SandboxViolation,
    ToolCallError,
    ToolUnavailable,
    connect_nats,
)
from toolmesh.contracts import ToolExample, ToolRequest, ToolResult, ToolSpec
from toolmesh.contracts.tool_code import TOOL_CODE_SCHEMA, Breadcrumb, BreadcrumbEvent, ToolCodeContext

from .bootstrap import BootstrapLocks, Bootstrapper, bootstrap_order
from .breadcrumbs import BreadcrumbStore, MemoryBreadcrumbs, NatsBreadcrumbs, breadcrumb_subject
from .call_spans import record_call_spans
from .config import SandboxSettings
from .document import CodeTool, DocumentProblem, check_document
from .permissions import Profile
from .pool import PoolTool, WorkerPool
from .secrets import Redactor, SecretSource
from .subscriptions import Subscriptions
from .worker import WorkerCrashed, find_deno

if TYPE_CHECKING:
    from toolmesh import Kernel

__all__ = ["SOURCE", "Sandbox", "document_id", "spec_for", "ui_meta"]

SOURCE = "sandbox"
"""``ToolSpec.source`` of code tools."""

TIMEOUT_GRACE = 0.5
"""Seconds the kernel's deadline trails ``timeout_ms``, so the sandbox's own timeout (which names the limit) wins."""

_log = logging.getLogger("toolmesh.sandbox")
_DATA_URL = re.compile(r"data:application/(?:typescript|javascript);base64,[A-Za-z0-9+/=]+")
_BLOB_URL = re.compile(r"blob:null/[0-9a-f-]+")
_DENIED = ("NotCapable", "PermissionDenied")


def spec_for(tool: CodeTool, *, available: bool = True, reason: str | None = None) -> ToolSpec:
    """The ``ToolSpec`` of a code tool."""
    document = tool.document
    context = document.context
    return ToolSpec(
        name=context.name,
        title=document.title,
        description=context.description,
        version=context.version,
        tags=document.tags,
        input_schema=context.input_schema,
        output_schema=context.output_schema,
        source=SOURCE,
        timeout=context.limits.timeout_ms / 1000 + TIMEOUT_GRACE,
        required_secrets=context.required_secrets,
        examples=tuple(
            ToolExample(input=example.input, output=example.output, description=example.description or None)
            for example in context.examples
        ),
        meta={
            "file": tool.file,
            "language": context.code.language,
            # Spelled out: the contract omits defaults, but a reader of the catalog wants them.
            "limits": {"memory_mb": context.limits.memory_mb, "timeout_ms": context.limits.timeout_ms,
                       "cpu_percent": context.limits.cpu_percent},
            "permissions": {
                "network": context.permissions.network if isinstance(context.permissions.network, bool)
                else list(context.permissions.network),
                "breadcrumbs": {"read": list(context.permissions.breadcrumbs.read),
                                "write": list(context.permissions.breadcrumbs.write)},
            },
            **ui_meta(tool),
        },
        available=available,
        unavailable_reason=reason,
    )


def ui_meta(tool: CodeTool) -> dict[str, Any]:
    """``meta["ui_schema"]`` and ``meta["config_fields"]`` of the catalog: the document's, as written.

    Copied from the document only (checked for secret values when it loaded), never from the node's secrets.
    """
    ui_schema = tool.ui_schema
    if ui_schema is None:
        return {}
    # A deep copy through JSON: the spec must not share mutable state with the loaded document.
    copied = msgspec.json.decode(msgspec.json.encode(ui_schema))
    meta: dict[str, Any] = {"ui_schema": copied}
    if "config_fields" in copied:
        meta["config_fields"] = copied["config_fields"]
    return meta


def document_id(name: str) -> str:
    """The breadcrumb id under which the ``tool.code.v1`` document of tool ``name`` is published."""
    return f"{TOOL_CODE_SCHEMA}.{name}"


def clean_trace(text: str, name: str) -> str:
    """Replace the long data:/blob: URLs of the runtime in messages and stacks with readable names."""
    return _BLOB_URL.sub("<sandbox>", _DATA_URL.sub(f"<{name}>", text))


class Sandbox:
    """Everything the plugin keeps for one kernel."""

    def __init__(self, kernel: Kernel, settings: SandboxSettings) -> None:
        self.kernel = kernel
        self.settings = settings
        self.pool = WorkerPool(
            deno=settings.deno or find_deno(),
            size=settings.workers,
            log_limit=settings.log_limit,
            max_idle=settings.max_idle,
            rss_base_mb=settings.rss_base_mb,
            # A result the node could not send anyway is refused in the isolate, before it crosses processes.
            max_result=kernel.settings.max_payload,
            isolation=settings.isolation,
            idle_stop_s=settings.idle_stop_s,
            burst=settings.burst_workers,
        )
        self.secrets = SecretSource(file=settings.secrets_file, env_prefix=settings.secrets_env_prefix)
        self.breadcrumbs: BreadcrumbStore = MemoryBreadcrumbs()
        self.tools: dict[str, CodeTool] = {}
        self.specs: dict[str, ToolSpec] = {}
        self.nc: NATS | None = None
        self.locks = BootstrapLocks()
        self.bootstrapper: Bootstrapper | None = None
        self.subscriptions: Subscriptions | None = None
        self.mesh_tools: dict[str, CodeTool] = {}
        """Tools from documents published on the mesh (``mesh_tools`` setting)."""
        self.mesh_problems: dict[str, list[DocumentProblem]] = {}
        """Refused mesh documents: breadcrumb id -> every problem."""
        self._background: set[asyncio.Task[Any]] = set()
        self._document_subscription: Any = None

    async def open(self, on_mesh: bool) -> None:
        """Connect the breadcrumb store and bootstrap locks to NATS when the kernel serves on a mesh."""
        mode = self.settings.breadcrumbs
        if mode == "nats" or (mode == "auto" and on_mesh):
            prefix = self.kernel.settings.prefix
            self.nc = await connect_nats(
                self.kernel.settings.connect_url, name=f"toolmesh-sandbox {self.kernel.node}",
                settings=self.kernel.settings,
            )
            self.breadcrumbs = await NatsBreadcrumbs.open(self.nc, prefix)
            self.locks = await BootstrapLocks.open(self.nc, prefix)
        memory = self.breadcrumbs if isinstance(self.breadcrumbs, MemoryBreadcrumbs) else None
        self.subscriptions = Subscriptions(self._call, nc=self.nc, prefix=self.kernel.settings.prefix, memory=memory)
        if self.settings.mesh_tools:
            await self._follow_documents(memory)

    async def _follow_documents(self, memory: MemoryBreadcrumbs | None) -> None:
        # Subscribe first, then read what is stored: a document published in between is seen twice, never missed.
        if self.nc is not None:
            async def on_message(msg: Any) -> None:
                try:
                    event = msgspec.json.decode(msg.data, type=BreadcrumbEvent)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    _log.warning("ignoring a malformed tool.code.v1 announcement: %s", exc)
                    return
                if self.accept_document(event.breadcrumb):
                    self._in_background(self.kernel.refresh_tools())

            self._document_subscription = await self.nc.subscribe(
                breadcrumb_subject(self.kernel.settings.prefix, TOOL_CODE_SCHEMA), cb=on_message
            )
        elif memory is not None:
            async def on_event(event: BreadcrumbEvent) -> None:
                if event.breadcrumb.schema_name == TOOL_CODE_SCHEMA and self.accept_document(event.breadcrumb):
                    self._in_background(self.kernel.refresh_tools())

            memory.listeners.append(on_event)
        for crumb in await self.breadcrumbs.query(TOOL_CODE_SCHEMA, None, 10_000):
            self.accept_document(crumb)

    def accept_document(self, crumb: Breadcrumb) -> bool:
        """Check a published ``tool.code.v1`` breadcrumb; True when the served tools change."""
        label = f"breadcrumb {crumb.id}"
        data = {"schema_name": crumb.schema_name, "title": crumb.title, "tags": list(crumb.tags), "context": crumb.context}
        tool, problems = check_document(data, label)
        if tool is None:
            self.mesh_problems[crumb.id] = problems
            _log.warning("refused published tool.code.v1 document %s: %s", crumb.id,
                         "; ".join(f"{problem.path}: {problem.reason}" for problem in problems))
            return False
        self.mesh_problems.pop(crumb.id, None)
        if self.mesh_tools.get(tool.name) == tool:
            return False
        self.mesh_tools[tool.name] = tool
        return True

    async def _call(self, request: ToolRequest) -> ToolResult:
        return await self.kernel.call(request)

    async def activate(self, refused: dict[str, str], *, first: bool) -> None:
        """Subscribe for the loaded tools' subscriptions and, on the first discovery, start the bootstrap."""
        available = [tool for name, tool in self.tools.items() if self.specs[name].available and name not in refused]
        if self.subscriptions is not None:
            await self.subscriptions.update(available)
        if first and self.settings.bootstrap:
            order, refused_now = bootstrap_order(available)
            for name, reason in refused_now.items():
                if name not in refused:
                    _log.warning("bootstrap of %s will not run: %s", name, reason)
            if order:
                self.bootstrapper = Bootstrapper(self._call, self.locks)
                self._in_background(self._bootstrap(self.bootstrapper, order))

    async def _bootstrap(self, bootstrapper: Bootstrapper, order: list[CodeTool]) -> None:
        # Discovery returns before the kernel registers the specs: wait for them.
        with anyio.move_on_after(10):
            while not all(self.kernel.get_tool(tool.name) for tool in order):
                await anyio.sleep(0.01)
        async with anyio.create_task_group() as task_group:
            await bootstrapper.run(order, task_group)

    def _in_background(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ loading

    async def register(self, tools: list[CodeTool]) -> list[ToolSpec]:
        """Load ``tools`` into the pool; returns their specs (unavailable ones say why)."""
        wanted = {tool.name for tool in tools}
        self.pool.forget(set(self.tools) - wanted)
        self.tools = {tool.name: tool for tool in tools}
        # Each tool's check starts (and waits for) a Deno process of its own: they run side by side.
        specs = list(await asyncio.gather(*(self._load(tool) for tool in tools)))
        self.specs = {spec.name: spec for spec in specs}
        return specs

    async def _load(self, tool: CodeTool) -> ToolSpec:
        context = tool.document.context
        _, missing = self.secrets.resolve(context.required_secrets)
        if missing:
            reason = (
                f"required secret(s) {', '.join(missing)} not set: set them in the node's environment"
                " or in the [sandbox] secrets_file"
            )
            return spec_for(tool, available=False, reason=reason)
        error = await self.pool.load(_pool_tool(context))
        if error is not None:
            return spec_for(tool, available=False, reason=clean_trace(error, tool.name))
        return spec_for(tool)

    # ------------------------------------------------------------------ calls

    async def execute(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
        """Run one call of a code tool and return its JSON value; raises a ``ToolCallError`` on failure."""
        tool = self.tools.get(spec.name)
        if tool is None:
            raise ToolUnavailable(f"code tool {spec.name!r} is no longer loaded on this node; call it again")
        code = tool.document.context
        values, missing = self.secrets.resolve(code.required_secrets)
        if missing:
            raise ToolUnavailable(
                f"tool {spec.name!r} needs secret(s) {', '.join(missing)}, which are not set on node {context.node}"
            )
        redact = Redactor(values.values())
        timeout_ms = code.limits.timeout_ms
        remaining = context.remaining()
        if remaining is not None:
            timeout_ms = max(1, min(timeout_ms, int(remaining * 1000)))
        violations: list[str] = []
        request = {
            "id": context.request.id,
            "tool": spec.name,
            "node": context.node,
            "caller": msgspec.to_builtins(context.request.caller) if context.request.caller else None,
            "trigger_event": (context.request.meta or {}).get("trigger_event"),
        }
        started_ns = time.time_ns()
        try:
            outcome = await self.pool.call(
                spec.name,
                arguments,
                timeout_ms=timeout_ms,
                secrets=values,
                request=request,
                handler=self._handler(code, context, violations),
            )
        except WorkerCrashed as exc:
            record_call_spans(spec.name, started_ns, time.time_ns(), None, "WorkerCrashed")
            if exc.memory:
                raise SandboxViolation(
                    f"tool {spec.name!r} exceeded its memory limit ({code.limits.memory_mb} MiB): {exc};"
                    " the worker was replaced",
                    details={"limit": "memory_mb", "memory_mb": code.limits.memory_mb},
                ) from None
            raise ExecutionFailed(f"tool {spec.name!r} failed: {exc}; the worker was replaced") from None
        record_call_spans(spec.name, started_ns, time.time_ns(), outcome.timing,
                          str(outcome.error.get("name", "Error")) if outcome.error is not None else None)
        context.state["logs"] = [{**entry, "message": redact(entry["message"])} for entry in outcome.logs]
        for entry in context.state["logs"]:
            await context.log(entry["level"], entry["message"])
        if outcome.dropped:
            await context.log("warning", f"{outcome.dropped} console message(s) over the log limit were dropped")
        if violations:
            raise SandboxViolation(redact(violations[0]), details={"violations": [redact(v) for v in violations]})
        if outcome.error is not None:
            raise self._failure(spec.name, code, outcome.error, timeout_ms, redact)
        try:
            return msgspec.json.decode(outcome.json or "null")
        except msgspec.DecodeError as exc:  # the isolate produced it with JSON.stringify: not expected
            raise ExecutionFailed(f"tool {spec.name!r} returned malformed JSON: {exc}") from exc

    def _failure(
        self, name: str, code: ToolCodeContext, error: dict[str, Any], timeout_ms: int, redact: Redactor
    ) -> ToolCallError:
        kind = str(error.get("name") or "Error")
        message = redact(clean_trace(str(error.get("message") or ""), name))
        stack = redact(clean_trace(str(error.get("stack") or ""), name))
        details = {"error": kind, "stack": stack} if stack else {"error": kind}
        if kind in _DENIED or (kind == "TypeError" and "Requires import access" in message):
            return SandboxViolation(
                f"tool {name!r} tried something its permissions do not allow: {message}."
                f" Declared network access: {_network_text(code)}; file system, environment, subprocesses"
                " and FFI are never allowed",
                details=details,
            )
        if kind == "sandbox_violation":
            return SandboxViolation(message, details=details)
        if kind == "MemoryLimit":
            return SandboxViolation(
                f"tool {name!r} exceeded its memory limit ({code.limits.memory_mb} MiB): {message};"
                " its isolate was terminated",
                details={"limit": "memory_mb", "memory_mb": code.limits.memory_mb},
            )
        if kind == "Timeout":
            return CallTimeout(
                f"tool {name!r} did not finish within {timeout_ms} ms (limits.timeout_ms is"
                f" {code.limits.timeout_ms}); its isolate was terminated and replaced",
                details={"limit": "timeout_ms", "timeout_ms": timeout_ms},
            )
        if kind == "ResultTooLarge":
            return PayloadTooLarge(f"tool {name!r} returned too much: {message}; return less data or a reference to it")
        if kind == "Crash":
            return ExecutionFailed(f"tool {name!r} crashed: {message}; its isolate was replaced", details=details)
        if kind == "LoadError":
            return ExecutionFailed(f"tool {name!r} could not be loaded: {message}", details=details)
        return ExecutionFailed(f"tool {name!r} failed: {kind}: {message}", details=details)

    def _handler(self, code: ToolCodeContext, context: CallContext, violations: list[str]) -> Any:
        access = code.permissions.breadcrumbs
        name = code.name

        def refuse(action: str, schema: str | None, allowed: tuple[str, ...]) -> SandboxViolation:
            text = (
                f"tool {name!r} may not {action} breadcrumbs of schema {schema!r}; permissions.breadcrumbs"
                f".{'write' if action in ('create', 'update') else 'read'} allows: {', '.join(allowed) or 'none'}"
            )
            violations.append(text)
            return SandboxViolation(text)

        async def handle(kind: str, args: dict[str, Any]) -> Any:
            store = self.breadcrumbs
            if kind == "callTool":
                if context.call_tool is None:
                    raise ToolUnavailable("callTool is not available in this context")
                target = str(args.get("name"))
                result = await context.call_tool(target, dict(args.get("input") or {}))
                if result.is_error and result.error is not None:
                    raise _CallToolFailed(result.error.code.value, f"{target}: {result.error.message}")
                return result.structured_content if result.structured_content is not None else result.text
            if kind == "breadcrumbs.create":
                fields = dict(args.get("breadcrumb") or {})
                schema = fields.get("schema_name")
                if schema not in access.write:
                    raise refuse("create", schema, access.write)
                return msgspec.to_builtins(await store.create(fields))
            if kind == "breadcrumbs.get":
                crumb = await store.get(str(args.get("id")))
                if crumb is None:
                    return None
                if crumb.schema_name not in access.read:
                    raise refuse("read", crumb.schema_name, access.read)
                return msgspec.to_builtins(crumb)
            if kind == "breadcrumbs.query":
                schema = args.get("schema_name")
                if schema not in access.read:
                    raise refuse("read", schema, access.read)
                limit = int(args.get("limit") or 100)
                tag = args.get("tag")
                return [msgspec.to_builtins(crumb) for crumb in await store.query(schema, tag, min(limit, 1000))]
            if kind == "breadcrumbs.update":
                crumb_id = str(args.get("id"))
                crumb = await store.get(crumb_id)
                if crumb is None:
                    raise KeyError(f"no breadcrumb {crumb_id}")
                if crumb.schema_name not in access.write:
                    raise refuse("update", crumb.schema_name, access.write)
                return msgspec.to_builtins(await store.update(crumb_id, dict(args.get("changes") or {})))
            raise ValueError(f"unknown request {kind!r}")

        return handle

    async def close(self) -> None:
        """Stop bootstrap runs, subscriptions, workers and the NATS connection."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        if self.subscriptions is not None:
            await self.subscriptions.close()
        if self._document_subscription is not None:
            try:
                await self._document_subscription.unsubscribe()
            except nats.errors.Error as exc:  # connection already closed
                _log.debug("document subscription not closed: %r", exc)
        await self.pool.close()
        await self.breadcrumbs.close()
        if self.nc is not None and not self.nc.is_closed:
            await self.nc.close()


class _CallToolFailed(Exception):
    """A nested call failed: the tool's promise rejects with the callee's error code as its name."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.error_name = code


def _network_text(code: ToolCodeContext) -> str:
    network = code.permissions.network
    if network is True:
        return "any host"
    if not network:
        return "none"
    return ", ".join(network)


def _pool_tool(context: ToolCodeContext) -> PoolTool:
    return PoolTool(context.name, context.code.language, context.code.source, Profile.of(context))
