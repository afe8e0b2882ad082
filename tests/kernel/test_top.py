"""``toolmesh top``'s figures and rendering, headless."""

from __future__ import annotations

from rich.console import Console

from toolmesh.contracts import ErrorCode, ToolEvent
from toolmesh.top import TopModel, render_top


def _events(now: float) -> list[ToolEvent]:
    events = []
    for i, (ms, failed, cached) in enumerate([(1.0, False, False), (3.0, False, True), (5.0, True, False)]):
        events.append(ToolEvent(kind="started", tool="add", node="n1", timestamp=now - 1 + i / 10))
        events.append(
            ToolEvent(
                kind="failed" if failed else "finished",
                tool="add",
                node="n1",
                timestamp=now - 1 + i / 10,
                duration_ms=ms,
                error_code=ErrorCode.EXECUTION_FAILED if failed else None,
                attributes={"cached": True} if cached else None,
            )
        )
    events.append(ToolEvent(kind="started", tool="echo", node="n2", timestamp=now))
    return events


def test_model_computes_rates_percentiles_errors_and_hits():
    """Three finished calls in a 10 s window: 0.3 calls/s, p50 3 ms, 1 error, 33 % cache hits; one in flight."""
    now = 1_000_000.0
    model = TopModel(window=10)
    for event in _events(now):
        model.add(event, now=now)
    assert model.row(model.tools["add"]) == ("0.3", "3.0", "3.0", "1", "33%", "0", "3")
    assert model.row(model.tools["echo"])[5] == "1"
    assert set(model.nodes) == {"n1", "n2"}


def test_old_events_leave_the_window():
    """Finished calls older than the window no longer count toward the rate."""
    model = TopModel(window=10)
    for event in _events(1000.0):
        model.add(event, now=1000.0)
    model.add(ToolEvent(kind="started", tool="add", node="n1", timestamp=1100.0), now=1100.0)
    assert model.row(model.tools["add"])[0] == "0.0"
    assert model.row(model.tools["add"])[6] == "3"


def test_render_shows_a_row_per_tool_and_node():
    """The rendered view lists every tool and node with their figures."""
    model = TopModel(window=10)
    for event in _events(500.0):
        model.add(event, now=500.0)
    console = Console(record=True, width=120)
    console.print(render_top(model))
    text = console.export_text()
    assert "tools" in text and "nodes" in text
    add_line = next(line for line in text.splitlines() if line.strip().startswith("add"))
    assert add_line.split()[1:] == ["0.3", "3.0", "3.0", "1", "33%", "0", "3"]
    assert any(line.strip().startswith("n2") for line in text.splitlines())
