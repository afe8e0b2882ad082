"""OpenTelemetry in one place: the tracer, and W3C trace context carried in NATS headers.

Spans follow the GenAI conventions for tool execution (``execute_tool {name}``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``).  With no SDK configured every
call here is a cheap no-op.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

__all__ = ["extract_context", "inject_headers", "tool_span"]

_tracer = trace.get_tracer("toolmesh")


def inject_headers(headers: dict[str, str] | None = None) -> dict[str, str] | None:
    """Add the current trace context (``traceparent``) to ``headers``; ``None`` when there is none."""
    carrier: dict[str, str] = dict(headers or {})
    propagate.inject(carrier)
    return carrier or None


def extract_context(headers: dict[str, str] | None) -> otel_context.Context | None:
    """The trace context a message carried, or ``None`` (bad or missing headers are ignored)."""
    if not headers or "traceparent" not in headers:
        return None
    try:
        return propagate.extract(headers)
    except Exception:  # noqa: BLE001 - a malformed header must not fail the call
        return None


@contextmanager
def tool_span(
    tool: str, call_id: str, *, kind: trace.SpanKind, parent: otel_context.Context | None = None, **attributes: Any
) -> Iterator[trace.Span]:
    """A span named ``execute_tool {tool}`` with the GenAI tool attributes."""
    with _tracer.start_as_current_span(
        f"execute_tool {tool}",
        context=parent,
        kind=kind,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id,
            "messaging.system": "nats",
            **attributes,
        },
    ) as span:
        yield span
