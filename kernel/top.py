"""``toolmesh top``: live per-tool and per-node figures computed from ``tool.event.*``."""

from __future__ import annotations

import statistics
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field

from rich.console import Group
from rich.table import Table

from toolmesh.contracts import ToolEvent

__all__ = ["TopModel", "render_top"]

WINDOW_SECONDS = 10.0
"""Rates and percentiles cover the events of the last this-many seconds."""


@dataclass
class _Figures:
    finished: deque[tuple[float, float, bool, bool]] = field(default_factory=deque)  # (at, ms, error, cached)
    in_flight: int = 0
    total: int = 0
    errors: int = 0
    nodes: set[str] = field(default_factory=set)


class TopModel:
    """Aggregates events into the figures ``toolmesh top`` shows."""

    def __init__(self, window: float = WINDOW_SECONDS) -> None:
        self.window = window
        self.tools: dict[str, _Figures] = defaultdict(_Figures)
        self.nodes: dict[str, _Figures] = defaultdict(_Figures)

    def add(self, event: ToolEvent, now: float | None = None) -> None:
        """Account for one event."""
        node = event.node or "?"
        for figures in (self.tools[event.tool], self.nodes[node]):
            figures.nodes.add(node)
            if event.kind == "started":
                figures.in_flight += 1
            elif event.kind in ("finished", "failed"):
                figures.in_flight = max(0, figures.in_flight - 1)
                figures.total += 1
                failed = event.kind == "failed"
                figures.errors += failed
                cached = bool(event.attributes and event.attributes.get("cached"))
                figures.finished.append((event.timestamp or time.time(), event.duration_ms or 0.0, failed, cached))
        self._expire(now if now is not None else time.time())

    def _expire(self, now: float) -> None:
        horizon = now - self.window
        for figures in (*self.tools.values(), *self.nodes.values()):
            while figures.finished and figures.finished[0][0] < horizon:
                figures.finished.popleft()

    def row(self, figures: _Figures) -> tuple[str, ...]:
        """Formatted calls/s, p50, p99, errors, cache hit rate, in flight."""
        recent = list(figures.finished)
        durations = sorted(ms for _, ms, _, _ in recent)
        rate = len(recent) / self.window
        p50 = f"{statistics.median(durations):.1f}" if durations else "-"
        p99 = f"{durations[max(0, int(len(durations) * 0.99) - 1)]:.1f}" if durations else "-"
        hits = sum(cached for *_, cached in recent)
        hit_rate = f"{100 * hits / len(recent):.0f}%" if recent else "-"
        return (f"{rate:.1f}", p50, p99, str(figures.errors), hit_rate, str(figures.in_flight), str(figures.total))


def render_top(model: TopModel) -> Group:
    """Two tables: tools and nodes."""
    columns = ("calls/s", "p50 ms", "p99 ms", "errors", "cache hits", "in flight", "total")
    tools = Table("tool", *columns, title="tools", box=None, header_style="bold", title_justify="left")
    for name in sorted(model.tools):
        tools.add_row(name, *model.row(model.tools[name]))
    nodes = Table("node", *columns, title="nodes", box=None, header_style="bold", title_justify="left")
    for name in sorted(model.nodes):
        nodes.add_row(name, *model.row(model.nodes[name]))
    return Group(tools, nodes)
