"""Usage guards: ``max_usage_count`` per tool (for the crew and per agent) and the repeated-call guard.

Counts live with the agent runtime (client side), like crewAI's per-tool
counters.  A use is claimed before the tool runs (so concurrent agents cannot
overshoot a limit) and given back when the call fails or is answered from
the cache: in the end only successful executions count.  A tool's
``meta["crew"]["max_usage_count_per_agent"]`` adds a per-agent limit on top
of the crew-wide ``max_usage_count``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from toolmesh.contracts import ToolSpec

from .errors import ToolUsageLimitExceeded
from .prompts import usage_limit_message

__all__ = ["UsageLedger", "per_agent_limit"]


def per_agent_limit(spec: ToolSpec) -> int | None:
    """The per-agent limit a spec declares in ``meta["crew"]``, or ``None``."""
    crew = (spec.meta or {}).get("crew")
    value = crew.get("max_usage_count_per_agent") if isinstance(crew, dict) else None
    return value if isinstance(value, int) and value >= 0 else None


@dataclass
class UsageLedger:
    """Counts successful uses and remembers each agent's last call."""

    total: Counter[str] = field(default_factory=Counter)
    by_agent: Counter[tuple[str, str]] = field(default_factory=Counter)
    last_call: dict[str, tuple[str, Any]] = field(default_factory=dict)

    def check(self, spec: ToolSpec, agent: str | None) -> None:
        """Raise ``ToolUsageLimitExceeded`` when ``spec`` may not run again (for ``agent``)."""
        limit = spec.max_usage_count
        if limit is not None and self.total[spec.name] >= limit:
            raise ToolUsageLimitExceeded(usage_limit_message(spec.name, limit))
        agent_limit = per_agent_limit(spec)
        if agent_limit is not None and self.by_agent[(agent or "", spec.name)] >= agent_limit:
            raise ToolUsageLimitExceeded(usage_limit_message(spec.name, agent_limit, agent or "anonymous"))

    def claim(self, spec: ToolSpec, agent: str | None) -> None:
        """Check the limits and count one use at once; raises ``ToolUsageLimitExceeded``."""
        self.check(spec, agent)
        self.total[spec.name] += 1
        self.by_agent[(agent or "", spec.name)] += 1

    def release(self, spec: ToolSpec, agent: str | None) -> None:
        """Give back a claimed use (the call failed or was answered from the cache)."""
        self.total[spec.name] -= 1
        self.by_agent[(agent or "", spec.name)] -= 1

    def remember(self, spec: ToolSpec, agent: str | None, arguments: dict[str, Any]) -> None:
        """Remember a successful call as ``agent``'s last one (for the repeated-call guard)."""
        self.last_call[agent or ""] = (spec.name, arguments)

    def record(self, spec: ToolSpec, agent: str | None, arguments: dict[str, Any]) -> None:
        """Count one successful execution and remember it (``claim`` + ``remember`` without a limit check)."""
        self.total[spec.name] += 1
        self.by_agent[(agent or "", spec.name)] += 1
        self.remember(spec, agent, arguments)

    def is_repeat(self, spec: ToolSpec, agent: str | None, arguments: dict[str, Any]) -> bool:
        """True when ``agent``'s previous executed call was this tool with equal arguments."""
        return self.last_call.get(agent or "") == (spec.name, arguments)

    def usage(self, tool: str, agent: str | None = None) -> int:
        """Successful uses of ``tool`` (by ``agent`` when given)."""
        return self.by_agent[(agent, tool)] if agent is not None else self.total[tool]

    def reset(self, tool: str | None = None) -> None:
        """Forget ``tool``'s counts (crewAI's ``reset_usage_count``); ``None``: all counts and last calls."""
        if tool is None:
            self.total.clear()
            self.by_agent.clear()
            self.last_call.clear()
            return
        self.total.pop(tool, None)
        for key in [key for key in self.by_agent if key[1] == tool]:
            del self.by_agent[key]
