"""The call pipeline, in one place.

resolve → decision hooks → validate arguments → cache lookup → execute under
the deadline → validate result → cache store → events.  Every failure maps to
exactly one error code; nothing a tool or plugin raises escapes as an
exception.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from toolmesh._errors import (
    CallRejected,
    CallTimeout,
    ExecutionFailed,
    InvalidArguments,
    ToolCallError,
    ToolUnavailable,
    UnknownTool,
)
from toolmesh._pipeline.authorization import admit_call
from toolmesh._pipeline.context import PARENT_CALL, CallContext, chain_refusal
from toolmesh._pipeline.deadline import DeadlineExceeded, within_deadline
from toolmesh._pipeline.results import result_from_value
from toolmesh._pipeline.validation import ValidationIssue
from toolmesh._telemetry.logs import hide_call_secrets, redact_issues
from toolmesh._telemetry.metrics import call_metrics
from toolmesh._telemetry.tracing import step_span, steps_traced
from toolmesh.contracts import ErrorCode, ToolError, ToolRequest, ToolResult, ToolSpec

if TYPE_CHECKING:
    from toolmesh._config import Settings
    from toolmesh._pipeline.hook_calls import HookCalls

__all__ = ["PipelineKernel", "call_pipeline", "effective_deadline"]

_log = logging.getLogger("toolmesh.pipeline")


class PipelineKernel(Protocol):
    """What the pipeline uses of the ``Kernel`` it serves a call on: settings, hooks, local tools, events.

    The kernel imports this module to run its calls, so the pipeline names it by what it uses.
    """

    @property
    def node(self) -> str | None: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def hooks(self) -> HookCalls: ...

    def get_tool(self, name: str) -> ToolSpec | None: ...

    def suggest(self, name: str, candidates: Iterable[str] | None = None) -> tuple[str, ...]: ...

    async def emit(
        self,
        kind: str,
        tool: str,
        *,
        request_id: str | None = None,
        duration_ms: float | None = None,
        error_code: Any = None,
        attributes: dict[str, Any] | None = None,
    ) -> None: ...


def effective_deadline(kernel: PipelineKernel, spec: ToolSpec, context: CallContext) -> float:
    """The earliest of the request's timeout/deadline, the tool's timeout and the default."""
    now = time.monotonic()
    request = context.request
    candidates = [now + (spec.timeout or kernel.settings.default_timeout)]
    if request.timeout is not None:
        candidates.append(now + request.timeout)
    if request.deadline is not None:
        candidates.append(now + (request.deadline - time.time()))
    if context.deadline is not None:
        candidates.append(context.deadline)
    return min(candidates)


def _describe(issues: list[ValidationIssue]) -> str:
    return "; ".join(f"{issue.path}: {issue.message}" for issue in issues)


async def _execute(
    kernel: PipelineKernel, spec: ToolSpec, arguments: dict[str, Any], context: CallContext
) -> ToolResult:
    value = await kernel.hooks.execute_tool(spec=spec, arguments=arguments, context=context)
    return result_from_value(context.request.id, spec.name, value)


async def _run(kernel: PipelineKernel, spec: ToolSpec, context: CallContext) -> ToolResult:
    request = context.request
    hide_call_secrets(spec, request.arguments)  # a tool's exception may quote them, and it gets logged
    traced = steps_traced()
    with step_span("admit", spec.name, traced):
        await admit_call(kernel, spec, context)  # authorization and argument sizes (toolmesh._pipeline.authorization)
    with step_span("decide", spec.name, traced):
        arguments, completed = await kernel.hooks.before_call(
            spec=spec, request=request, arguments=request.arguments, context=context
        )
    if completed is not None:
        return result_from_value(request.id, spec.name, completed.result)

    with step_span("validate_arguments", spec.name, traced):
        issues = await kernel.hooks.validate_arguments(spec=spec, arguments=arguments)
    if issues:
        issues = redact_issues(spec, arguments, issues)  # messages quote values; secret ones must not leak
        raise InvalidArguments(
            f"invalid arguments for tool {spec.name!r}: {_describe(issues)}",
            details={"issues": [issue.as_dict() for issue in issues], "input_schema": spec.input_schema},
        )

    cache_key = None
    if spec.cache is not None and spec.cache.enabled and request.cache is not False:
        cache_key = kernel.hooks.cache_key(spec=spec, arguments=arguments, context=context)
        hit = await kernel.hooks.cache_get(spec=spec, key=cache_key) if cache_key else None
        if hit is not None:
            await kernel.emit("cache_hit", spec.name, request_id=request.id)
            return msgspec.structs.replace(hit, id=request.id, cached=True)

    if context.deadline is not None and context.deadline <= time.monotonic():
        # e.g. a nested call whose parent had no time left: it must not start at all
        raise CallTimeout(
            f"tool {spec.name!r} was not started: its deadline ({_timeout_text(spec, request)}) had passed;"
            " give the call (or the call that made it) more time"
        )
    try:
        with step_span("execute", spec.name, traced, **{"toolmesh.tool.source": spec.source or ""}):
            result = await within_deadline(context.deadline, _execute(kernel, spec, arguments, context))
    except DeadlineExceeded:
        raise CallTimeout(
            f"tool {spec.name!r} did not finish within its deadline"
            f" ({_timeout_text(spec, request)}); raise the timeout or make the tool faster",
        ) from None

    if not result.is_error:
        with step_span("validate_result", spec.name, traced):
            issues = await kernel.hooks.validate_result(spec=spec, result=result)
        if issues:
            raise ExecutionFailed(
                f"tool {spec.name!r} returned a result that violates its output_schema: {_describe(issues)}",
                details={"issues": [issue.as_dict() for issue in issues]},
            )
        if cache_key is not None and kernel.hooks.should_cache(spec=spec, arguments=arguments, result=result):
            ttl = spec.cache.ttl if spec.cache is not None else None
            await kernel.hooks.cache_put(spec=spec, key=cache_key, result=result, ttl=ttl)
    return result


def _timeout_text(spec: ToolSpec, request: ToolRequest) -> str:
    limits = []
    if request.timeout is not None:
        limits.append(f"request timeout {request.timeout:g}s")
    if request.deadline is not None:
        limits.append("request deadline")
    if spec.timeout is not None:
        limits.append(f"tool timeout {spec.timeout:g}s")
    return ", ".join(limits) or "default timeout"


def _caller_attributes(request: ToolRequest) -> dict[str, Any] | None:
    """Who makes the call, for observers (the console): the admitted identity, the agent, the parent call."""
    caller = request.caller
    parent = request.meta.get(PARENT_CALL) if request.meta else None
    named = {
        key: value
        for key, value in (
            ("caller", caller.identity if caller else None), ("agent", caller.agent if caller else None),
            ("parent", parent if isinstance(parent, str) else None),
        )
        if value
    }
    return named or None


async def call_pipeline(kernel: PipelineKernel, context: CallContext) -> ToolResult:
    """Serve ``context.request`` on ``kernel``; the result is always a ``ToolResult``."""
    request = context.request
    started = time.perf_counter()
    call_metrics.started(request.tool, kernel.node)
    spec = kernel.get_tool(request.tool)
    try:
        if request.chain and (refusal := chain_refusal(request, kernel.settings.max_call_depth)) is not None:
            raise CallRejected(refusal.message, details=refusal.details)
        if spec is None:
            raise UnknownTool(request.tool, kernel.suggest(request.tool))
        if not spec.available:
            raise ToolUnavailable(
                f"tool {spec.name!r} is unavailable: {spec.unavailable_reason or 'no reason given'}",
            )
        context.deadline = effective_deadline(kernel, spec, context)
        await kernel.emit("started", spec.name, request_id=request.id, attributes=_caller_attributes(request))
        result = await _run(kernel, spec, context)
    except ToolCallError as exc:
        result = ToolResult.failure(request.id, request.tool, exc.to_tool_error())
    except Exception as exc:  # noqa: BLE001 - isolation boundary around plugin code (hooks, tools)
        _log.exception("tool %s failed", request.tool)
        code = ErrorCode.EXECUTION_FAILED if spec is not None else ErrorCode.INTERNAL
        message = f"tool {request.tool!r} raised {type(exc).__name__}: {exc}"
        result = ToolResult.failure(request.id, request.tool, ToolError(code=code, message=message))
    finally:
        context.end()  # nested calls still in flight end with their parent, even if it was cancelled
    duration_ms = (time.perf_counter() - started) * 1000.0
    result = msgspec.structs.replace(
        result,
        node=kernel.node,
        duration_ms=duration_ms,
        result_as_answer=bool(spec and spec.result_as_answer and not result.is_error),
    )
    error_code = result.error.code.value if result.error else None
    call_metrics.finished(request.tool, kernel.node, duration_ms, error_code, result.cached)
    if spec is not None and kernel.hooks.implemented("toolmesh_after_call"):
        await kernel.hooks.after_call(spec=spec, request=request, result=result, context=context)
    await kernel.emit(
        "failed" if result.is_error else "finished",
        request.tool,
        request_id=request.id,
        duration_ms=duration_ms,
        error_code=result.error.code if result.error else None,
        attributes={"cached": True} if result.cached else None,
    )
    return result
