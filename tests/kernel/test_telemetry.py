"""Span helpers and the JSON-lines exporter, in process against a private tracer provider."""

from __future__ import annotations

import asyncio
import json

import pytest
from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from toolmesh._telemetry import tracing as telemetry
from toolmesh._telemetry.export import JsonLinesSpanExporter, _batch_processor


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """Route toolmesh's spans to an in-memory exporter without installing a global provider."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: "unit"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setitem(telemetry._state, "enabled", True)
    monkeypatch.setitem(telemetry._state, "never_samples", False)
    monkeypatch.setattr(telemetry, "_tracer", provider.get_tracer("toolmesh"))
    return exporter


def test_tool_span_is_current_in_its_block_and_carries_the_conventions(spans: InMemorySpanExporter) -> None:
    """The span is current inside the block (so traceparent goes out), ended after it, with its attributes."""
    with telemetry.tool_span("add", "c1", kind=SpanKind.CLIENT, **{"messaging.operation.type": "send"}) as span:
        assert trace.get_current_span() is span
        headers = telemetry.inject_headers({"x": "1"})
        assert headers is not None and headers["x"] == "1"
        assert headers["traceparent"].split("-")[2] == f"{span.get_span_context().span_id:016x}"
    assert trace.get_current_span() is not span
    (finished,) = spans.get_finished_spans()
    assert finished.name == "execute_tool add" and finished.kind is SpanKind.CLIENT
    assert dict(finished.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add", "gen_ai.tool.call.id": "c1",
        "messaging.system": "nats", "messaging.operation.type": "send",
    }


def test_server_span_hangs_under_the_extracted_parent(spans: InMemorySpanExporter) -> None:
    """A traceparent carried in headers makes the SERVER span a child of the CLIENT span."""
    with telemetry.tool_span("add", "c1", kind=SpanKind.CLIENT) as client:
        headers = telemetry.inject_headers()
    with telemetry.tool_span("add", "c1", kind=SpanKind.SERVER, parent=telemetry.extract_context(headers)):
        traced = telemetry.steps_traced()
    server = next(span for span in spans.get_finished_spans() if span.kind is SpanKind.SERVER)
    assert server.parent is not None and server.parent.span_id == client.get_span_context().span_id
    assert server.context.trace_id == client.get_span_context().trace_id
    assert traced is False  # step spans stay off unless asked for


def test_an_escaping_exception_fails_the_span_but_cancellation_does_not(spans: InMemorySpanExporter) -> None:
    """Like start_as_current_span: an Exception is recorded and sets ERROR; a BaseException only ends the span."""
    with pytest.raises(ValueError), telemetry.tool_span("boom", "c1", kind=SpanKind.SERVER):
        raise ValueError("bad")
    with pytest.raises(asyncio.CancelledError), telemetry.tool_span("stop", "c2", kind=SpanKind.SERVER):
        raise asyncio.CancelledError
    failed, cancelled = spans.get_finished_spans()
    assert failed.status.status_code is StatusCode.ERROR
    assert [event.name for event in failed.events] == ["exception"]
    assert cancelled.status.status_code is StatusCode.UNSET and not cancelled.events
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_step_spans_nest_under_the_call_span(spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    """With steps on, each step is a child of the call's span."""
    monkeypatch.setitem(telemetry._state, "steps", True)
    with telemetry.tool_span("add", "c1", kind=SpanKind.SERVER) as call:
        traced = telemetry.steps_traced()
        with telemetry.step_span("execute", "add", traced, **{"toolmesh.tool.source": "python"}):
            pass
    step, _ = spans.get_finished_spans()
    assert step.name == "toolmesh.execute add"
    assert step.parent is not None and step.parent.span_id == call.get_span_context().span_id
    assert dict(step.attributes or {})["toolmesh.tool.source"] == "python"


def test_json_lines_exporter_writes_one_object_per_span(spans: InMemorySpanExporter, tmp_path) -> None:
    """Each span becomes one JSON line with ids in hex, names of kind and status, attributes and service."""
    with telemetry.tool_span("add", "c1", kind=SpanKind.CLIENT) as client:
        client.set_attribute("toolmesh.tags", ("a", "b"))
        with telemetry.tool_span("add", "c1", kind=SpanKind.SERVER) as server:
            telemetry.record_error(server, "timeout")
    path = tmp_path / "spans.jsonl"
    exporter = JsonLinesSpanExporter(path)
    exporter.export(spans.get_finished_spans())
    exporter.export(spans.get_finished_spans()[:1])  # appends
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 3
    served, called = lines[0], lines[1]
    assert set(called) == {"name", "trace_id", "span_id", "parent_span_id", "kind", "start", "end", "status",
                           "attributes", "service"}
    assert (called["kind"], called["status"], called["parent_span_id"]) == ("CLIENT", "UNSET", None)
    assert called["span_id"] == f"{client.get_span_context().span_id:016x}"
    assert called["trace_id"] == f"{client.get_span_context().trace_id:032x}"
    assert called["attributes"]["toolmesh.tags"] == ["a", "b"]
    assert (served["kind"], served["status"], served["parent_span_id"]) == ("SERVER", "ERROR", called["span_id"])
    assert served["attributes"]["error.type"] == "timeout" and served["service"] == "unit"
    assert served["end"] >= served["start"] > 0


def test_batch_processor_takes_the_standard_environment() -> None:
    """OTEL_BSP_* settings win over toolmesh's defaults."""
    exporter = JsonLinesSpanExporter("/dev/null")
    chosen = _batch_processor(exporter, {"OTEL_BSP_SCHEDULE_DELAY": "1000", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "64"})
    default = _batch_processor(exporter, {})
    try:
        assert (chosen._batch_processor._schedule_delay_millis, chosen._batch_processor._max_export_batch_size) == (
            1000, 64)
        assert (default._batch_processor._schedule_delay_millis, default._batch_processor._max_queue_size) == (
            200, 8192)
    finally:
        chosen.shutdown()
        default.shutdown()
