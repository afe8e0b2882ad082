"""OpenTelemetry in one place: the tracer, and W3C trace context carried in NATS headers.

Spans follow the GenAI conventions for tool execution (``execute_tool {name}``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``) and the messaging conventions
for NATS.  With no SDK configured every call here is a cheap no-op.

A call makes two spans: the caller's (CLIENT) and the serving node's (SERVER).
A child span per pipeline step more than doubles the tracing cost of a small tool, so
steps are traced only when asked (:func:`trace_steps`, ``TOOLMESH_TRACE_STEPS=1``).
"""

from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

__all__ = [
    "extract_context",
    "inject_headers",
    "record_error",
    "step_span",
    "steps_traced",
    "tool_span",
    "trace_steps",
    "tracing_enabled",
]

# A proxy until an SDK provider is installed; tracing_enabled() then swaps in the
# provider's own tracer, sparing every span the proxy's extra context-manager layer.
_tracer: trace.Tracer = trace.get_tracer("toolmesh")
_log = logging.getLogger("toolmesh.telemetry")


def inject_headers(headers: dict[str, str] | None = None) -> dict[str, str] | None:
    """Add the current trace context (``traceparent``) to ``headers``; ``None`` when there is none."""
    if not tracing_enabled() or not trace.get_current_span().get_span_context().is_valid:
        return headers or None
    carrier: dict[str, str] = dict(headers) if headers else {}
    propagate.inject(carrier)
    return carrier or None


def extract_context(headers: dict[str, str] | None) -> otel_context.Context | None:
    """The trace context a message carried, or ``None`` (bad or missing headers are ignored)."""
    if not headers or "traceparent" not in headers:
        return None
    try:
        return propagate.extract(headers)
    except Exception as exc:  # noqa: BLE001 - isolation boundary around the configured propagators
        _log.debug("trace context not extracted from %r: %r", headers.get("traceparent"), exc)
        return None  # a malformed header must not fail the call


_RECHECK_SECONDS = 1.0
_state: dict[str, Any] = {"enabled": False, "never_samples": False, "checked_at": float("-inf"), "steps": False}


def _never_samples(provider: Any) -> bool:
    # An SDK whose sampler is always off (alone, or as the root of a default ParentBased: the
    # always_off and parentbased_always_off of OTEL_TRACES_SAMPLER) records nothing unless a sampled
    # parent arrives: skip span work then.  Recognised by the public get_description() of samplers
    # built from the same documented constructor arguments; any other sampler gets spans.
    sampler = getattr(provider, "sampler", None)
    describe = getattr(sampler, "get_description", None)
    if describe is None:
        return False
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ParentBased

    return bool(describe() in {ALWAYS_OFF.get_description(), ParentBased(ALWAYS_OFF).get_description()})


def tracing_enabled() -> bool:
    """True once an OpenTelemetry SDK tracer provider is installed (the API alone records nothing).

    Looking the provider up reads the environment each time, too slow for
    every call, so a negative answer is reused for a second.
    """
    global _tracer
    if _state["enabled"]:
        return True
    now = time.monotonic()
    if now - _state["checked_at"] < _RECHECK_SECONDS:
        return False
    _state["checked_at"] = now
    provider = trace.get_tracer_provider()
    _state["enabled"] = not isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
    _state["never_samples"] = _state["enabled"] and _never_samples(provider)
    if _state["enabled"]:
        _tracer = provider.get_tracer("toolmesh")
    return bool(_state["enabled"])


def _wants_span(parent: otel_context.Context | None) -> bool:
    if not tracing_enabled():
        return False
    if not _state["never_samples"]:
        return True
    context = trace.get_current_span(parent).get_span_context()
    return context.is_valid and context.trace_flags.sampled


class _CurrentSpan(AbstractContextManager[trace.Span]):
    """Starts a span on entering a ``with`` block, makes it current there, and ends it on leaving.

    The contract of ``Tracer.start_as_current_span`` (an exception escaping the
    block is recorded and sets the status), in one small object instead of the
    SDK's nested generator context managers: at two spans a call, their set-up
    and tear-down were a good part of what tracing cost.
    """

    __slots__ = ("_attributes", "_kind", "_name", "_parent", "_span", "_token")

    def __init__(
        self, name: str, attributes: dict[str, Any], kind: trace.SpanKind, parent: otel_context.Context | None
    ) -> None:
        self._name = name
        self._attributes = attributes
        self._kind = kind
        self._parent = parent

    def __enter__(self) -> trace.Span:
        span = self._span = _tracer.start_span(
            self._name, context=self._parent, kind=self._kind, attributes=self._attributes
        )
        self._token = otel_context.attach(trace.set_span_in_context(span))
        return span

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        span = self._span
        otel_context.detach(self._token)
        try:
            # Only Exception subclasses: cancellation and GeneratorExit are not failures.
            if isinstance(exc, Exception) and span.is_recording():
                span.record_exception(exc)
                span.set_status(trace.Status(trace.StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        finally:
            span.end()


_NO_TOOL_SPAN = nullcontext(trace.INVALID_SPAN)


def tool_span(
    tool: str, call_id: str, *, kind: trace.SpanKind, parent: otel_context.Context | None = None, **attributes: Any
) -> AbstractContextManager[trace.Span]:
    """A span named ``execute_tool {tool}`` with the GenAI tool attributes (a shared no-op when tracing is off).

    ``attributes`` add the messaging ones of the side that makes the span
    (``messaging.destination.name``, ``messaging.operation.type``, ...).
    """
    if not _wants_span(parent):
        return _NO_TOOL_SPAN
    return _CurrentSpan(
        f"execute_tool {tool}",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id,
            "messaging.system": "nats",
            **attributes,
        },
        kind,
        parent,
    )


def record_error(span: trace.Span, code: str) -> None:
    """Mark ``span`` failed with the call's error code (``error.type``), so trace views flag it.

    The error's message stays out: it may quote the call's arguments, secrets included.
    """
    if span.is_recording():
        span.set_attribute("error.type", code)
        span.set_status(trace.StatusCode.ERROR, code)


def trace_steps(enabled: bool) -> None:
    """Give every traced call a child span per pipeline step (admit, decide, validate, execute)."""
    _state["steps"] = enabled


_NO_SPAN = nullcontext()


def steps_traced() -> bool:
    """True when the current call's span records and step spans are on (see :func:`trace_steps`).

    Decided once per call, so an untraced call pays one check, not one per step.
    """
    return _state["steps"] and tracing_enabled() and trace.get_current_span().is_recording()


def step_span(step: str, tool: str, traced: bool, **attributes: Any) -> AbstractContextManager[Any]:
    """A child span ``toolmesh.<step> {tool}`` when ``traced`` (see :func:`steps_traced`), else a shared no-op."""
    if not traced:
        return _NO_SPAN
    return _CurrentSpan(
        f"toolmesh.{step} {tool}",
        {"toolmesh.pipeline.step": step, "gen_ai.tool.name": tool, **attributes},
        trace.SpanKind.INTERNAL,
        None,
    )
