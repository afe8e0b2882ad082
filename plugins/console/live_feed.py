"""The calls of the whole mesh as the console shows them: recent rows, per-tool figures, per-call timelines.

Everything is bounded, whatever the call rate: the recent rows are a ring with a
sequence number (each live stream reads past its own position, so a slow browser
skips rows instead of making the console buffer them), the figures cover a sliding
window with a cap on the samples kept, and timelines are kept for the latest calls only.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, TypeVar

from toolmesh.contracts import ToolEvent

__all__ = ["CallRow", "LiveFeed", "ToolFigures"]

ENDS = frozenset({"finished", "failed", "cancelled"})
"""Event kinds that end a call: each becomes one row of the live view."""

RECENT_ROWS = 5000
"""Rows kept for live streams to read; a stream further behind than this skips ahead."""

WINDOW_SECONDS = 10.0
"""Calls/s, percentiles and error rate cover the calls that ended in the last this-many seconds."""

WINDOW_SAMPLES = 20000
"""Most samples kept per tool in the window (20 s of 1,000 calls/s): memory stays bounded under any load."""

TIMELINES = 2000
"""Calls whose events the console keeps for the call detail page (the latest ones)."""

EVENTS_PER_TIMELINE = 200
"""Events kept per call: a long call reporting progress keeps its first and latest ones."""


@dataclass(frozen=True, slots=True)
class CallRow:
    """One ended call, as a row of the live view."""

    seq: int
    at: float
    tool: str
    request_id: str
    node: str
    caller: str
    duration_ms: float | None
    outcome: str
    cached: bool

    def as_dict(self) -> dict[str, Any]:
        """The row as the page's script reads it."""
        return {
            "seq": self.seq,
            "at": self.at,
            "tool": self.tool,
            "id": self.request_id,
            "node": self.node,
            "caller": self.caller,
            "ms": None if self.duration_ms is None else round(self.duration_ms, 2),
            "outcome": self.outcome,
            "cached": self.cached,
        }


@dataclass(slots=True)
class ToolFigures:
    """A tool's ended calls in the window: (ended at, duration ms, failed)."""

    samples: deque[tuple[float, float, bool]] = field(default_factory=lambda: deque(maxlen=WINDOW_SAMPLES))
    total: int = 0


_Item = TypeVar("_Item")


def _percentile(ordered: list[float], fraction: float) -> float:
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def _caller(attributes: dict[str, Any]) -> str:
    """Who made a call, as its events name it: the verified identity, the agent, or both."""
    identity, agent = attributes.get("caller"), attributes.get("agent")
    if identity and agent:
        return f"{identity} ({agent})"
    return str(identity or agent or "")


def _outcome(event: ToolEvent) -> str:
    if event.kind == "finished":
        return "ok"
    if event.kind == "cancelled":
        return "cancelled"
    return event.error_code.value if event.error_code is not None else "failed"


def _kept_list(table: OrderedDict[str, list[_Item]], key: str) -> list[_Item]:
    """The list ``table`` keeps under ``key``; a new one drops the oldest keys past ``TIMELINES``."""
    found = table.get(key)
    if found is None:
        found = table[key] = []
        while len(table) > TIMELINES:
            table.popitem(last=False)
    return found


class LiveFeed:
    """Takes every ``tool.event.*`` message and keeps what the live, nodes and call pages show."""

    def __init__(self, *, window: float = WINDOW_SECONDS, recent: int = RECENT_ROWS) -> None:
        self.window = window
        self.rows: deque[CallRow] = deque(maxlen=recent)
        self.seq = 0
        self.tools: dict[str, ToolFigures] = defaultdict(ToolFigures)
        # node -> request id -> (started at, caller named by the start event)
        self.in_flight: dict[str, dict[str, tuple[float, str]]] = defaultdict(dict)
        self.timelines: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self.children: OrderedDict[str, list[str]] = OrderedDict()  # request id -> its nested calls' ids
        self.events_seen = 0

    def add(self, event: ToolEvent) -> None:
        """Account for one event."""
        self.events_seen += 1
        node = event.node or "?"
        request_id = event.request_id or ""
        if request_id:
            self._remember(request_id, event)
        if event.kind == "started" and request_id and event.attributes and event.attributes.get("parent"):
            self._adopt(str(event.attributes["parent"]), request_id)
        if event.kind == "started" and request_id:
            self.in_flight[node][request_id] = (
                event.timestamp or time.time(),
                _caller(event.attributes or {}),
            )
            return
        if event.kind not in ENDS:
            return
        _, caller = self.in_flight[node].pop(request_id, (0.0, ""))
        attributes = event.attributes or {}
        at = event.timestamp or time.time()
        self.seq += 1
        self.rows.append(
            CallRow(
                seq=self.seq,
                at=at,
                tool=event.tool,
                request_id=request_id,
                node=node,
                caller=_caller(attributes) or caller,
                duration_ms=event.duration_ms,
                outcome=_outcome(event),
                cached=bool(attributes.get("cached")),
            )
        )
        if event.kind != "cancelled":
            figures = self.tools[event.tool]
            figures.total += 1
            figures.samples.append((at, event.duration_ms or 0.0, event.kind == "failed"))

    def _adopt(self, parent: str, request_id: str) -> None:
        children = _kept_list(self.children, parent)
        if len(children) < EVENTS_PER_TIMELINE:
            children.append(request_id)

    def nested(self, request_id: str) -> list[dict[str, Any]]:
        """The calls ``request_id`` made (as far as their events were seen): id, tool, node, outcome, ms."""
        found = []
        for child in self.children.get(request_id, ()):
            timeline = self.timelines.get(child, [])
            end = next((step for step in reversed(timeline) if step["kind"] in ENDS), None)
            found.append(
                {
                    "id": child,
                    "tool": timeline[0]["tool"] if timeline else "?",
                    "node": timeline[0]["node"] if timeline else None,
                    "outcome": (end["error_code"] or end["kind"]) if end else "running",
                    "duration_ms": end["duration_ms"] if end else None,
                }
            )
        return found

    def _remember(self, request_id: str, event: ToolEvent) -> None:
        timeline = _kept_list(self.timelines, request_id)
        if len(timeline) >= EVENTS_PER_TIMELINE:
            del timeline[1]  # keep the first event (the start) and the latest ones
        timeline.append(
            {
                "kind": event.kind,
                "tool": event.tool,
                "node": event.node,
                "at": event.timestamp,
                "duration_ms": event.duration_ms,
                "error_code": event.error_code.value if event.error_code is not None else None,
                "attributes": event.attributes or {},
            }
        )

    def since(self, seq: int, limit: int) -> tuple[list[CallRow], int]:
        """Rows after ``seq`` (at most ``limit``, the latest ones) and how many were skipped."""
        if not self.rows or seq >= self.seq:
            return [], 0
        first = self.rows[0].seq
        start = max(seq + 1, first, self.seq - limit + 1)
        skipped = start - (seq + 1)
        offset = start - first
        return [self.rows[index] for index in range(offset, len(self.rows))], skipped

    def summary(self, now: float | None = None) -> list[dict[str, Any]]:
        """Per-tool calls/s, p50 and p99 (ms) and error rate over the window, busiest tool first."""
        horizon = (now if now is not None else time.time()) - self.window
        rows: list[dict[str, Any]] = []
        for name, figures in self.tools.items():
            samples = figures.samples
            while samples and samples[0][0] < horizon:
                samples.popleft()
            if not samples:
                continue
            durations = sorted(ms for _, ms, _ in samples)
            errors = sum(failed for *_, failed in samples)
            rows.append(
                {
                    "tool": name,
                    "calls_per_s": round(len(samples) / self.window, 1),
                    "p50_ms": round(_percentile(durations, 0.5), 2),
                    "p99_ms": round(_percentile(durations, 0.99), 2),
                    "error_rate": round(errors / len(samples), 4),
                    "total": figures.total,
                }
            )
        rows.sort(key=lambda row: (-float(row["calls_per_s"]), str(row["tool"])))
        return rows

    def in_flight_on(self, node: str, *, older_than: float = 3600.0) -> int:
        """Calls started on ``node`` and not ended (a start never seen ending expires after an hour)."""
        running = self.in_flight.get(node)
        if not running:
            return 0
        horizon = time.time() - older_than
        for request_id in [rid for rid, (started, _) in running.items() if started < horizon]:
            del running[request_id]
        return len(running)

    def forget_node(self, node: str) -> None:
        """Drop the in-flight calls of a node that left the catalog."""
        self.in_flight.pop(node, None)

    def timeline(self, request_id: str) -> list[dict[str, Any]]:
        """The events seen for one call, oldest first (empty when unknown or forgotten)."""
        return list(self.timelines.get(request_id, ()))
