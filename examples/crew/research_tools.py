"""Tools for the crew example: lifecycle settings on ``@toolmesh.tool``.

Serve them with ``toolmesh up examples/crew/research_tools.py`` and replay the
scripted agent with ``toolmesh crew replay examples/crew/research_agent.jsonl``.
"""

from __future__ import annotations

import toolmesh

_PAGES = {
    "nats": "NATS is a connective technology for distributed systems.",
    "crewai": "crewAI orchestrates role-playing autonomous agents.",
}


@toolmesh.tool(cache=300)
def search_web(query: str) -> str:
    """Search the web; results are cached for five minutes, shared by every agent of the mesh."""
    return _PAGES.get(query.lower().strip(), f"no results for {query!r}")


@toolmesh.tool(max_usage_count=2)
def expensive_lookup(term: str) -> str:
    """A paid API: at most two calls per crew run."""
    return f"definition of {term}"


@toolmesh.tool(result_as_answer=True)
def write_report(summary: str) -> str:
    """Write the final report; its output is the agent's final answer."""
    return f"REPORT\n======\n{summary}"
