"""Trace spans of a code-tool call: the node's round trip to Deno, and the phases Deno timed itself.

The supervisor stamps each call when it arrives, when its isolate is ready
(warm from the pool or newly spawned), when the call is posted to the isolate
and when the result comes back.  When the call's span is recorded, those
stamps become child spans, so a trace shows where the time went inside Deno
without an OpenTelemetry SDK in the worker.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

__all__ = ["record_call_spans"]

_tracer = trace.get_tracer("toolmesh.sandbox")


def _nanoseconds(timing: dict[str, Any], key: str) -> int | None:
    value = timing.get(key)
    return int(value * 1_000_000) if isinstance(value, int | float) else None


def _phase(name: str, parent: Any, start: int | None, end: int | None, **attributes: Any) -> None:
    if start is None or end is None or end < start:
        return  # a phase Deno did not reach (the call was cancelled or crashed first)
    span = _tracer.start_span(name, context=parent, start_time=start, attributes=attributes)
    span.end(end_time=end)


def record_call_spans(
    tool: str, started_ns: int, ended_ns: int, timing: dict[str, Any] | None, error: str | None = None
) -> None:
    """Add ``toolmesh.sandbox.call {tool}`` under the current span, with ``deno.isolate`` and ``deno.run`` below it.

    Does nothing when the current span is not recorded (tracing off or not sampled).
    """
    if not trace.get_current_span().is_recording():
        return
    span = _tracer.start_span(
        f"toolmesh.sandbox.call {tool}", start_time=started_ns, attributes={"gen_ai.tool.name": tool}
    )
    if error is not None:
        span.set_attribute("error.type", error)
        span.set_status(trace.StatusCode.ERROR, error)
    if timing:
        inside = trace.set_span_in_context(span)
        _phase(f"deno.isolate {tool}", inside, _nanoseconds(timing, "received"), _nanoseconds(timing, "ready"),
               **{"toolmesh.sandbox.warm_isolate": bool(timing.get("warm"))})
        _phase(f"deno.run {tool}", inside, _nanoseconds(timing, "posted"), _nanoseconds(timing, "finished"))
    span.end(end_time=ended_ns)
