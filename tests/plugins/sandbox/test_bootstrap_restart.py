"""``once`` bootstrap across restarts of the whole mesh on one persistent nats-server (JetStream on disk).

"Once" is per mesh and per version of a document: the same document never runs twice, however often the
nodes (or the broker, whose store outlives them) restart; a changed version, code or bootstrap input runs
once more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import anyio
import msgspec
import pytest
from toolmesh.contracts import ToolResult
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.bootstrap import once_key
from toolmesh.plugins.sandbox.document import check_document
from toolmesh.testing import eventually, running_node, test_settings

from tests.nats_servers import NatsServer

from .conftest import document

pytestmark = pytest.mark.anyio

INIT = "export function execute(i, ctx) { return { edition: %d, force: i.force ?? null } }"


@pytest.fixture
def persistent_nats() -> Iterator[NatsServer]:
    """A nats-server of this test's own whose JetStream store dir survives its restarts."""
    with NatsServer() as server:
        yield server


def _write(tool_dir: Path, edition: int, *, version: str = "1.0.0", force: bool = False) -> None:
    data = document("init", INIT % edition, version=version,
                    input_schema={"type": "object", "properties": {"force": {"type": "boolean"}}},
                    bootstrap={"enabled": True, "mode": "once", "input": {"force": force}})
    (tool_dir / "init.tool.json").write_text(json.dumps(data), encoding="utf-8")


async def _start_mesh(settings, tool_dir: Path, nodes: int = 1) -> list[ToolResult | None]:
    """Start ``nodes`` nodes together, wait until each decided about the once tool, stop them all."""
    outcomes: list[ToolResult | None] = []

    async def serve(index: int, ready: anyio.Event, stop: anyio.Event) -> None:
        async with running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False,
                                name=f"boot-{index}") as node:
            state = sandbox.sandbox_of(node.kernel)
            booted = await eventually(lambda: state.bootstrapper if state.bootstrapper is not None
                                      and "init" in state.bootstrapper.results else None,
                                      what="bootstrap decided")
            outcomes.append(booted.results["init"])
            ready.set()
            await stop.wait()

    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        readies = [anyio.Event() for _ in range(nodes)]
        for index, ready in enumerate(readies):
            group.start_soon(serve, index, ready, stop)
        for ready in readies:
            await ready.wait()
        stop.set()
    return outcomes


def _ran(outcomes: list[ToolResult | None]) -> list[dict]:
    for outcome in outcomes:
        assert outcome is None or not outcome.is_error, outcome
    return [outcome.structured_content for outcome in outcomes if outcome is not None]


def _settings(server: NatsServer):
    small_pool = {"sandbox": {"workers": 1, "max_idle": 1}}
    return msgspec.structs.replace(test_settings(server.url), plugins=small_pool)


async def test_unchanged_code_never_runs_twice(persistent_nats, tool_dir) -> None:
    settings = _settings(persistent_nats)
    _write(tool_dir, 1)
    assert _ran(await _start_mesh(settings, tool_dir)) == [{"edition": 1, "force": False}]
    # The whole mesh restarts with the same document: nothing runs again.
    assert _ran(await _start_mesh(settings, tool_dir, nodes=2)) == []
    # The broker restarts too (its store dir is kept): the claim is still there.
    persistent_nats.stop()
    persistent_nats.start()
    assert _ran(await _start_mesh(settings, tool_dir)) == []


async def test_changed_code_version_or_input_runs_once_more(persistent_nats, tool_dir) -> None:
    settings = _settings(persistent_nats)
    _write(tool_dir, 1)
    assert _ran(await _start_mesh(settings, tool_dir)) == [{"edition": 1, "force": False}]
    # Changed code: exactly one node of a restarted two-node mesh runs it once more, then never again.
    _write(tool_dir, 2)
    assert _ran(await _start_mesh(settings, tool_dir, nodes=2)) == [{"edition": 2, "force": False}]
    assert _ran(await _start_mesh(settings, tool_dir)) == []
    # A new version or a new bootstrap input is a change as well.
    _write(tool_dir, 2, version="1.1.0")
    assert _ran(await _start_mesh(settings, tool_dir)) == [{"edition": 2, "force": False}]
    _write(tool_dir, 2, version="1.1.0", force=True)
    assert _ran(await _start_mesh(settings, tool_dir)) == [{"edition": 2, "force": True}]
    assert _ran(await _start_mesh(settings, tool_dir)) == []


def test_once_keys_are_valid_and_distinct_for_awkward_names() -> None:
    keys = set()
    for name in ("a..b", "a_.b", "a__b", ".lead", "trail."):
        tool, problems = check_document(document(name, INIT % 1, bootstrap={"enabled": True, "mode": "once"}))
        assert problems == [] and tool is not None
        key = once_key(tool)
        assert all(token and re.fullmatch(r"[A-Za-z0-9_-]+", token) for token in key.split(".")), key
        keys.add(key)
    assert len(keys) == 5
