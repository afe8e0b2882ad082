"""OpenTelemetry metrics of tool calls: counts, errors by code, durations, cache hits, in-flight.

Instruments come from the global meter provider; with no SDK installed they
are skipped entirely (checked like tracing), so an unobserved node pays nothing.
"""

from __future__ import annotations

import time
from typing import Any

from opentelemetry import metrics

__all__ = ["CallMetrics", "call_metrics"]

_RECHECK_SECONDS = 1.0


class CallMetrics:
    """The instruments of one process, created when an SDK meter provider appears."""

    def __init__(self) -> None:
        self._instruments: dict[str, Any] | None = None
        self._checked_at = float("-inf")

    def _get(self) -> dict[str, Any] | None:
        if self._instruments is not None:
            return self._instruments
        now = time.monotonic()
        if now - self._checked_at < _RECHECK_SECONDS:
            return None
        self._checked_at = now
        provider = metrics.get_meter_provider()
        if type(provider).__name__ in ("_ProxyMeterProvider", "NoOpMeterProvider"):
            return None
        meter = provider.get_meter("toolmesh")
        self._instruments = {
            "calls": meter.create_counter("toolmesh.calls", unit="{call}", description="Tool calls served"),
            "errors": meter.create_counter("toolmesh.errors", unit="{call}", description="Failed calls by code"),
            "duration": meter.create_histogram(
                "toolmesh.call.duration", unit="ms", description="Time from receipt to result"
            ),
            "cache_hits": meter.create_counter("toolmesh.cache.hits", unit="{call}", description="Calls served from cache"),
            "in_flight": meter.create_up_down_counter(
                "toolmesh.calls.in_flight", unit="{call}", description="Calls being served"
            ),
        }
        return self._instruments

    def started(self, tool: str, node: str | None) -> None:
        """A call entered the pipeline."""
        instruments = self._get()
        if instruments is not None:
            instruments["in_flight"].add(1, {"gen_ai.tool.name": tool, "toolmesh.node": node or ""})

    def finished(self, tool: str, node: str | None, duration_ms: float, error_code: str | None, cached: bool) -> None:
        """A call left the pipeline with its outcome."""
        instruments = self._get()
        if instruments is None:
            return
        attributes = {"gen_ai.tool.name": tool, "toolmesh.node": node or ""}
        instruments["in_flight"].add(-1, attributes)
        instruments["calls"].add(1, attributes)
        instruments["duration"].record(duration_ms, attributes)
        if error_code is not None:
            instruments["errors"].add(1, {**attributes, "error.type": error_code})
        if cached:
            instruments["cache_hits"].add(1, attributes)


call_metrics = CallMetrics()
"""The process-wide instruments the pipeline records into."""
