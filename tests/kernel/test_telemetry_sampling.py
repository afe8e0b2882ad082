"""Span work is skipped for an always-off sampler only, recognised through the SDK's public API."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    ALWAYS_ON,
    ParentBased,
    Sampler,
    TraceIdRatioBased,
)
from toolmesh._telemetry import tracing as telemetry


@pytest.mark.parametrize(
    ("sampler", "never"),
    [
        (ALWAYS_OFF, True),
        (ParentBased(ALWAYS_OFF), True),
        (ALWAYS_ON, False),
        (ParentBased(ALWAYS_ON), False),
        (ParentBased(TraceIdRatioBased(0.1)), False),
        # A sampled remote parent is dropped too, but a local one is sampled: not "never".
        (ParentBased(ALWAYS_OFF, local_parent_sampled=ALWAYS_OFF, remote_parent_sampled=ALWAYS_ON), False),
    ],
    ids=lambda value: value.get_description()[:40] if isinstance(value, Sampler) else str(value),
)
def test_never_samples_only_for_an_always_off_root(sampler: Sampler, never: bool) -> None:
    assert telemetry._never_samples(TracerProvider(sampler=sampler)) is never


@pytest.mark.parametrize("name", ["always_off", "parentbased_always_off"])
def test_always_off_from_the_environment(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_TRACES_SAMPLER as the SDK reads it (the way a deployment turns sampling off)."""
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", name)
    assert telemetry._never_samples(TracerProvider())  # the SDK picks the sampler from the environment


def test_a_provider_without_a_sampler_gets_spans() -> None:
    assert telemetry._never_samples(object()) is False
