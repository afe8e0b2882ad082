"""``toolmesh top``: live per-tool and per-node figures computed from ``tool.event.*``."""

from __future__ import annotations

import math
import statistics
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from toolmesh.contracts import ToolEvent

__all__ = ["TopModel", "render_top"]

WINDOW_SECONDS = 10.0
"""Rates and percentiles cover the events of the last this-many seconds."""

_ENDS = ("finished", "failed", "cancelled")


@dataclass
class _Figures:
    finished: deque[tuple[float, float, bool, bool]] = field(default_factory=deque)  # (at, ms, error, cached)
    in_flight: set[str] = field(default_factory=set)  # request ids started and not yet ended
    total: int = 0
    errors: int = 0


def percentile(ordered: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list (p99 of 3 samples is the largest)."""
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


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
            if event.kind == "started" and event.request_id:
                figures.in_flight.add(event.request_id)
            elif event.kind in _ENDS:
                # Calls refused before they start (unknown tool, unavailable) end without a start.
                figures.in_flight.discard(event.request_id or "")
                if event.kind == "cancelled":
                    continue
                figures.total += 1
                failed = event.kind == "failed"
                figures.errors += failed
                cached = bool(event.attributes and event.attributes.get("cached"))
                figures.finished.append((event.timestamp or time.time(), event.duration_ms or 0.0, failed, cached))
        self.expire(now if now is not None else time.time())

    def expire(self, now: float) -> None:
        """Forget finished calls older than the window (called on every event and before every redraw)."""
        horizon = now - self.window
        for figures in (*self.tools.values(), *self.nodes.values()):
            while figures.finished and figures.finished[0][0] < horizon:
                figures.finished.popleft()

    def row(self, figures: _Figures) -> tuple[str, ...]:
        """Formatted calls/s, p50, p99, errors, cache hit rate, in flight, total."""
        recent = list(figures.finished)
        durations = sorted(ms for _, ms, _, _ in recent)
        rate = len(recent) / self.window
        p50 = f"{statistics.median(durations):.1f}" if durations else "-"
        p99 = f"{percentile(durations, 0.99):.1f}" if durations else "-"
        hits = sum(cached for *_, cached in recent)
        hit_rate = f"{100 * hits / len(recent):.0f}%" if recent else "-"
        return (f"{rate:.1f}", p50, p99, str(figures.errors), hit_rate, str(len(figures.in_flight)), str(figures.total))

    def as_dict(self) -> dict[str, dict[str, dict[str, str]]]:
        """The figures of every tool and node, keyed like ``toolmesh top --json`` prints them."""
        keys = ("calls_per_s", "p50_ms", "p99_ms", "errors", "cache_hit_rate", "in_flight", "total")
        return {
            "tools": {name: dict(zip(keys, self.row(figures))) for name, figures in sorted(self.tools.items())},
            "nodes": {name: dict(zip(keys, self.row(figures))) for name, figures in sorted(self.nodes.items())},
        }


def render_top(model: TopModel, now: float | None = None) -> Group:
    """Two tables, tools and nodes, with the figures as of ``now`` (so idle rates fall to zero)."""
    model.expire(now if now is not None else time.time())
    columns = ("calls/s", "p50 ms", "p99 ms", "errors", "cache hits", "in flight", "total")
    tools = Table("tool", *columns, title="tools", box=None, header_style="bold", title_justify="left")
    for name in sorted(model.tools):
        tools.add_row(escape(name), *model.row(model.tools[name]))
    nodes = Table("node", *columns, title="nodes", box=None, header_style="bold", title_justify="left")
    for name in sorted(model.nodes):
        nodes.add_row(escape(name), *model.row(model.nodes[name]))
    return Group(tools, nodes)
