"""``toolmesh top``'s figures and rendering, headless: the model, rich's recording console, the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from rich.console import Console
from toolmesh._cli.top import TopModel, percentile, render_top
from toolmesh._transport.mesh import SyncMesh
from toolmesh.contracts import ErrorCode, ToolEvent

from tests.processes import ROOT, NodeProcess, free_port


def _events(now: float) -> list[ToolEvent]:
    events = []
    for i, (ms, failed, cached) in enumerate([(1.0, False, False), (3.0, False, True), (5.0, True, False)]):
        events.append(ToolEvent(kind="started", tool="add", node="n1", request_id=f"r{i}", timestamp=now - 1 + i / 10))
        events.append(
            ToolEvent(
                kind="failed" if failed else "finished",
                tool="add",
                node="n1",
                request_id=f"r{i}",
                timestamp=now - 1 + i / 10,
                duration_ms=ms,
                error_code=ErrorCode.EXECUTION_FAILED if failed else None,
                attributes={"cached": True} if cached else None,
            )
        )
    events.append(ToolEvent(kind="started", tool="echo", node="n2", request_id="e1", timestamp=now))
    return events


def test_model_computes_rates_percentiles_errors_and_hits():
    """Three finished calls in a 10 s window: 0.3 calls/s, p50 3 ms, p99 5 ms, 1 error, 33 % cache hits."""
    now = 1_000_000.0
    model = TopModel(window=10)
    for event in _events(now):
        model.add(event, now=now)
    assert model.row(model.tools["add"]) == ("0.3", "3.0", "5.0", "1", "33%", "0", "3")
    assert model.row(model.tools["echo"])[5] == "1"
    assert set(model.nodes) == {"n1", "n2"}


def test_p99_is_nearest_rank():
    """p99 of 100 samples is the 99th; of 200 samples the 198th; of 1 sample that sample."""
    assert percentile(list(range(1, 101)), 0.99) == 99
    assert percentile(list(range(1, 201)), 0.99) == 198
    assert percentile([7.0], 0.99) == 7.0


def test_in_flight_follows_request_ids():
    """A call refused before it starts does not hide another call in flight; a cancelled call leaves without counting."""
    model = TopModel(window=10)
    model.add(ToolEvent(kind="started", tool="slow", node="n1", request_id="a", timestamp=100.0), now=100.0)
    model.add(ToolEvent(kind="started", tool="slow", node="n1", request_id="b", timestamp=100.0), now=100.0)
    model.add(ToolEvent(kind="failed", tool="nope", node="n1", request_id="c", timestamp=100.0,
                        error_code=ErrorCode.UNKNOWN_TOOL), now=100.0)
    assert model.row(model.nodes["n1"])[5] == "2"
    model.add(ToolEvent(kind="cancelled", tool="slow", node="n1", request_id="a", timestamp=101.0), now=101.0)
    assert model.row(model.tools["slow"])[5:] == ("1", "0")
    assert model.row(model.nodes["n1"])[3:] == ("1", "0%", "1", "1")  # the refused call is the node's one error


def test_old_events_leave_the_window():
    """Finished calls older than the window no longer count toward the rate."""
    model = TopModel(window=10)
    for event in _events(1000.0):
        model.add(event, now=1000.0)
    model.add(ToolEvent(kind="started", tool="add", node="n1", request_id="x", timestamp=1100.0), now=1100.0)
    assert model.row(model.tools["add"])[0] == "0.0"
    assert model.row(model.tools["add"])[6] == "3"


def _line(text: str, first: str) -> list[str]:
    return next(line.split() for line in text.splitlines() if line.split()[:1] == [first])


def _rendered(now: float) -> str:
    """The view of the events of ``_events(500.0)`` as drawn at ``now``."""
    model = TopModel(window=10)
    for event in _events(500.0):
        model.add(event, now=500.0)
    console = Console(record=True, width=120)
    console.print(render_top(model, now=now))
    return console.export_text()


def test_render_shows_a_row_per_tool_and_node():
    """The rendered view lists every tool and node with their figures."""
    text = _rendered(now=500.0)
    assert "tools" in text and "nodes" in text
    assert _line(text, "add")[1:] == ["0.3", "3.0", "5.0", "1", "33%", "0", "3"]
    assert _line(text, "n2")[1:] == ["0.0", "-", "-", "0", "-", "1", "0"]


def test_an_idle_view_falls_to_zero():
    """Redrawn after the window with no new events, the rate and percentiles clear; totals stay."""
    assert _line(_rendered(now=520.0), "add")[1:] == ["0.0", "-", "-", "1", "-", "0", "3"]


def test_top_command_shows_the_calls_it_saw(toolmesh_broker):
    """'toolmesh top' against a real node: its headless screen and its --json agree with the calls made."""
    prefix = f"top{free_port()}"
    args = ["--nats", toolmesh_broker.url, "--prefix", prefix]
    with NodeProcess("examples/math_tools.py", *args) as node:
        watchers = [
            subprocess.Popen([sys.executable, "-m", "toolmesh", "top", "--duration", "8", *extra, *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                             env={**os.environ, "COLUMNS": "120"})
            for extra in (["--json"], [])
        ]
        assert json.loads(watchers[0].stdout.readline()) == {"event": "subscribed"}
        assert "watching tool events" in watchers[1].stderr.readline()
        with SyncMesh(toolmesh_broker.url, prefix=prefix) as mesh:
            assert not mesh.call("add", {"a": 1, "b": 2}).is_error
            assert not mesh.call("add", {"a": 2, "b": 2}).is_error
            assert mesh.call("add", {"a": "x"}).is_error
            assert not mesh.call("statistics", {"values": [1, 2, 3]}).cached
            assert mesh.call("statistics", {"values": [1, 2, 3]}).cached
        (figures_out, _), (screen, _) = (watcher.communicate(timeout=60) for watcher in watchers)
    figures = json.loads(figures_out.splitlines()[-1])
    add, statistics = figures["tools"]["add"], figures["tools"]["statistics"]
    assert (add["total"], add["errors"], add["in_flight"]) == ("3", "1", "0")
    assert (statistics["total"], statistics["cache_hit_rate"]) == ("2", "50%")
    assert (figures["nodes"][node.name]["total"], figures["nodes"][node.name]["errors"]) == ("5", "1")
    # The screen's last four columns: errors, cache hits, in flight, total (rates and times vary)
    assert _line(screen, "add")[-4:] == ["1", "0%", "0", "3"]
    assert _line(screen, "statistics")[-4:] == ["0", "50%", "0", "2"]
    assert _line(screen, node.name)[-4:] == ["1", "20%", "0", "5"]
