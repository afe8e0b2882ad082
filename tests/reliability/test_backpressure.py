"""Per-tool and per-node limits: fast ``unavailable`` with a retry hint, never a wait past the deadline."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import anyio
import pytest
from toolmesh._config import Settings
from toolmesh._pipeline.backpressure import MAX_RETRY_AFTER, MIN_RETRY_AFTER, Admission
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ErrorCode
from toolmesh.testing import running_node, test_settings

from tests.processes import NodeProcess

TOOLS = str(Path(__file__).with_name("recording_tools.py"))


def _python() -> list[object]:
    from toolmesh.plugins import python

    return [python]


@pytest.mark.anyio
async def test_tool_limit_answers_unavailable_with_retry_hint(toolmesh_broker):
    """A node process runs two calls of a max_concurrency=2 tool; the others are refused at once with a hint."""
    prefix = f"bp{uuid.uuid4().hex[:8]}"
    settings = Settings(nats_url=toolmesh_broker.url, prefix=prefix)
    args = (TOOLS, "--nats", toolmesh_broker.url, "--prefix", prefix)
    with NodeProcess(*args, env={"TOOLMESH_PLUGINS": "python"}):
        async with Mesh(settings=settings) as mesh:
            await mesh.call("narrow", {"seconds": 0.3})  # teaches the node the tool's typical duration
            answered: list[tuple[float, object]] = []

            async def one() -> None:
                started = time.monotonic()
                result = await mesh.call("narrow", {"seconds": 0.3})
                answered.append((time.monotonic() - started, result))

            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(one)
            other = await mesh.call("pause", {"seconds": 0.0})  # the node itself is not full
    refused = [(elapsed, result) for elapsed, result in answered if result.is_error]
    assert len(refused) == 4
    for elapsed, result in refused:
        assert result.error.code == ErrorCode.UNAVAILABLE
        assert result.error.retryable
        assert result.error.details["scope"] == "tool" and result.error.details["limit"] == 2
        assert 0.25 <= result.error.details["retry_after"] <= 0.4  # about one call's duration
        assert "narrow" in result.error.message and "max_concurrency" in result.error.message
        assert elapsed < 0.2  # refused at once, not queued
    assert not other.is_error


@pytest.mark.anyio
async def test_overload_answers_every_call_within_its_deadline(toolmesh_broker):
    """40 concurrent calls at a node limit of 4: every caller hears back before its deadline."""
    settings = test_settings(toolmesh_broker.url, max_concurrency=4)
    async with (
        running_node(settings, sources=[TOOLS], load_entrypoints=False, plugins=_python()),
        Mesh(settings=settings) as mesh,
    ):
        outcomes = []

        async def one() -> None:
            started = time.monotonic()
            result = await mesh.call("pause", {"seconds": 0.5}, timeout=1.0)
            outcomes.append((time.monotonic() - started, result))

        async with anyio.create_task_group() as tg:
            for _ in range(40):
                tg.start_soon(one)
    assert len(outcomes) == 40
    assert all(elapsed < 1.0 for elapsed, _ in outcomes)
    codes = sorted("ok" if not result.is_error else result.error.code.value for _, result in outcomes)
    assert codes.count("ok") == 4 and codes.count("unavailable") == 36
    assert all(result.error.details["scope"] == "node" for _, result in outcomes if result.is_error)


def test_admission_counts_and_bounds_the_hint() -> None:
    """Admission frees a slot on release; the retry hint follows durations within its bounds."""
    admission = Admission("n1", max_concurrency=10)
    assert admission.admit("t", 0, 1) is None
    refusal = admission.admit("t", 1, 1)
    assert refusal is not None and refusal.scope == "tool" and refusal.retry_after == MIN_RETRY_AFTER
    admission.release("t", 60.0)
    assert admission.per_tool == {}
    assert admission.retry_after("t") == MAX_RETRY_AFTER
    assert admission.admit("t", 10, None).scope == "node"
