"""Admission control of a node: a limit per node and per tool, refused calls get a retry hint.

A node never queues a call it cannot start: at a limit the call is answered
``unavailable`` at once (fast path) or handed back to JetStream with a delay
(durable path).  So memory stays bounded by the limits, and no call waits in a
node past its deadline.  The retry hint is the tool's recent typical duration
— roughly when a slot frees up — within ``[MIN_RETRY_AFTER, MAX_RETRY_AFTER]``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_RETRY_AFTER", "MIN_RETRY_AFTER", "Admission", "Refusal"]

MIN_RETRY_AFTER = 0.05
"""Shortest retry hint in seconds: sooner would only meet the same full node."""

MAX_RETRY_AFTER = 5.0
"""Longest retry hint in seconds: a slow tool's slots still free up one at a time."""

_SMOOTHING = 0.2  # weight of the newest duration in the moving average


@dataclass(frozen=True)
class Refusal:
    """Why a call was not admitted, and when to try again."""

    message: str
    retry_after: float
    limit: int
    scope: str
    """``node`` or ``tool``."""


class Admission:
    """Counts calls in flight per tool and decides whether one more may start."""

    def __init__(self, node: str, max_concurrency: int) -> None:
        self.node = node
        self.max_concurrency = max_concurrency
        self.per_tool: dict[str, int] = {}
        self._typical: dict[str, float] = {}

    def admit(self, tool: str, inflight: int, tool_limit: int | None) -> Refusal | None:
        """``None`` (and the call counts as started) or the ``Refusal`` to answer with."""
        if inflight >= self.max_concurrency:
            return Refusal(
                f"node {self.node} is at its limit of {self.max_concurrency} concurrent calls;"
                " retry shortly or add nodes",
                self.retry_after(tool),
                self.max_concurrency,
                "node",
            )
        running = self.per_tool.get(tool, 0)
        if tool_limit is not None and running >= tool_limit:
            return Refusal(
                f"tool {tool!r} is at its limit of {tool_limit} concurrent calls on node {self.node};"
                " retry after the hinted delay, or raise the tool's max_concurrency",
                self.retry_after(tool),
                tool_limit,
                "tool",
            )
        self.per_tool[tool] = running + 1
        return None

    def release(self, tool: str, seconds: float) -> None:
        """A call admitted by :meth:`admit` ended after ``seconds``."""
        running = self.per_tool.get(tool, 0) - 1
        if running > 0:
            self.per_tool[tool] = running
        else:
            self.per_tool.pop(tool, None)
        previous = self._typical.get(tool)
        self._typical[tool] = seconds if previous is None else previous + _SMOOTHING * (seconds - previous)

    def retry_after(self, tool: str) -> float:
        """Seconds after which a retry of ``tool`` has a fair chance of a free slot."""
        typical = self._typical.get(tool, MIN_RETRY_AFTER)
        return round(min(MAX_RETRY_AFTER, max(MIN_RETRY_AFTER, typical)), 3)
