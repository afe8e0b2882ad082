"""Turn on OpenTelemetry export for a process from the standard ``OTEL_*`` environment.

- ``OTEL_TRACES_EXPORTER=otlp`` / ``OTEL_METRICS_EXPORTER=otlp`` (or an
  ``OTEL_EXPORTER_OTLP_ENDPOINT``) export over OTLP/HTTP — ``pip install
  'toolmesh[otlp]'``; the SDK reads the usual ``OTEL_EXPORTER_OTLP_*`` and
  ``OTEL_TRACES_SAMPLER`` variables itself.
- ``TOOLMESH_TRACE_FILE=PATH`` appends finished spans to PATH as JSON lines
  (handy for debugging and used by the test suite).
- ``TOOLMESH_TRACE_STEPS=1`` adds a child span per pipeline step to every
  traced call (see ``toolmesh._telemetry.tracing``).
- ``metrics_port`` (``toolmesh up --metrics-port N``) serves Prometheus
  metrics on ``http://127.0.0.1:N/metrics`` — ``pip install 'toolmesh[prometheus]'``.

Nothing is configured when none of these is set, and the instrumentation in
``toolmesh._telemetry.tracing`` / ``toolmesh._telemetry.metrics`` then costs next to nothing.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgspec
from opentelemetry import metrics, trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, StatusCode
from toolmesh._errors import ConfigError
from toolmesh._telemetry.tracing import trace_steps

__all__ = ["JsonLinesSpanExporter", "configure_telemetry"]

TRACE_FILE_ENV = "TOOLMESH_TRACE_FILE"
TRACE_STEPS_ENV = "TOOLMESH_TRACE_STEPS"
_TRUE = ("1", "true", "yes", "on")


_KIND_NAMES = {kind: kind.name for kind in SpanKind}
_STATUS_NAMES = {code: code.name for code in StatusCode}


def _plain_dict(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    # A finished span's attributes are a read-only view of the SDK's BoundedAttributes:
    # dict() on that goes key by key through the Mapping protocol, copy() in one step.
    if not attributes:
        return {}
    if isinstance(attributes, (MappingProxyType, BoundedAttributes)):
        copied = attributes.copy()
        if type(copied) is dict:
            return copied
    return dict(attributes)


class JsonLinesSpanExporter(SpanExporter):
    """Appends each finished span to a file as one JSON object per line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._encoder = msgspec.json.Encoder(enc_hook=str)
        self._services: dict[int, tuple[Resource, Any]] = {}

    def _service(self, resource: Resource) -> Any:
        # Every span of a provider shares its resource: look the service name up once.
        known = self._services.get(id(resource))
        if known is None or known[0] is not resource:
            known = self._services[id(resource)] = (resource, (resource.attributes or {}).get(SERVICE_NAME))
        return known[1]

    def _record(self, span: ReadableSpan) -> dict[str, Any]:
        context = span.get_span_context()
        assert context is not None  # the SDK gives every span it ends a context
        parent = span.parent
        return {
            "name": span.name,
            "trace_id": f"{context.trace_id:032x}",
            "span_id": f"{context.span_id:016x}",
            "parent_span_id": f"{parent.span_id:016x}" if parent else None,
            "kind": _KIND_NAMES[span.kind],
            "start": span.start_time,
            "end": span.end_time,
            "status": _STATUS_NAMES[span.status.status_code],
            "attributes": _plain_dict(span.attributes),
            "service": self._service(span.resource),
        }

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write ``spans`` to the file, one JSON line each, in one append."""
        records = [self._record(span) for span in spans]
        try:
            data = self._encoder.encode_lines(records)
        except (TypeError, ValueError, OverflowError):  # a value msgspec cannot take: the lenient encoder
            data = "".join(json.dumps(record, default=str) + "\n" for record in records).encode()
        with self._lock, self.path.open("ab") as file:
            file.write(data)
        return SpanExportResult.SUCCESS


def _batch_processor(exporter: SpanExporter, env: Mapping[str, str]) -> BatchSpanProcessor:
    # The standard OTEL_BSP_* settings win.  Otherwise: a short delay, so spans reach
    # the file or collector soon after a call, and a queue deep enough that a burst of
    # thousands of calls a second is not dropped while an export is under way.
    def setting(name: str, default: int) -> int:
        try:
            return int(env[name])
        except (KeyError, ValueError):
            return default

    return BatchSpanProcessor(
        exporter,
        schedule_delay_millis=setting("OTEL_BSP_SCHEDULE_DELAY", 200),
        max_queue_size=setting("OTEL_BSP_MAX_QUEUE_SIZE", 8192),
        max_export_batch_size=setting("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
        export_timeout_millis=setting("OTEL_BSP_EXPORT_TIMEOUT", 30000),
    )


def _otlp(kind: str):
    try:
        if kind == "traces":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            return OTLPSpanExporter
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter
    except ImportError as exc:
        raise ConfigError(
            f"OTLP {kind} export was asked for but the exporter is not installed: pip install 'toolmesh[otlp]'"
        ) from exc


def configure_telemetry(
    service_name: str = "toolmesh", *, metrics_port: int | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """Install SDK providers as the environment asks; returns whether anything was configured."""
    env = os.environ if env is None else env
    resource = Resource.create({SERVICE_NAME: env.get("OTEL_SERVICE_NAME", service_name)})
    endpoint = bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT"))
    configured = False
    trace_steps(env.get(TRACE_STEPS_ENV, "").strip().lower() in _TRUE)

    span_exporters: list[SpanExporter] = []
    if env.get("OTEL_TRACES_EXPORTER", "otlp" if endpoint else "none") == "otlp":
        span_exporters.append(_otlp("traces")())
    if env.get(TRACE_FILE_ENV):
        span_exporters.append(JsonLinesSpanExporter(env[TRACE_FILE_ENV]))
    if span_exporters:
        provider = TracerProvider(resource=resource)
        for exporter in span_exporters:
            provider.add_span_processor(_batch_processor(exporter, env))
        trace.set_tracer_provider(provider)
        configured = True

    readers: list[MetricReader] = []
    if env.get("OTEL_METRICS_EXPORTER", "otlp" if endpoint else "none") == "otlp":
        readers.append(PeriodicExportingMetricReader(_otlp("metrics")()))
    if metrics_port is not None:
        try:
            from opentelemetry.exporter.prometheus import PrometheusMetricReader
            from prometheus_client import start_http_server
        except ImportError as exc:
            raise ConfigError(
                "--metrics-port needs the Prometheus exporter: pip install 'toolmesh[prometheus]'"
            ) from exc
        start_http_server(metrics_port, addr="127.0.0.1")
        readers.append(PrometheusMetricReader())
    if readers:
        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=readers))
        configured = True
    return configured
