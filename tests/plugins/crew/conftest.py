"""Node-side tools for the crew tests: a tiny plugin that serves Python callables and counts runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import toolmesh
from toolmesh.contracts import CachePolicy, ToolSpec

SOURCE = "crew-test-tools"


class ToolsPlugin:
    """Serves ``(spec, function)`` pairs; ``runs`` counts executions per tool on this node."""

    def __init__(self, tools: list[tuple[ToolSpec, Callable[..., Any]]]) -> None:
        self.tools = {spec.name: (spec, function) for spec, function in tools}
        self.runs: Counter[str] = Counter()
        self.callers: list[Any] = []
        self.metas: list[Any] = []

    @toolmesh.hookimpl
    def toolmesh_discover_tools(self) -> list[ToolSpec]:
        return [spec for spec, _ in self.tools.values()]

    @toolmesh.hookimpl
    def toolmesh_execute_tool(
        self, spec: ToolSpec, arguments: dict[str, Any], context: toolmesh.CallContext
    ) -> Any:
        if spec.source != SOURCE:
            return None
        self.runs[spec.name] += 1
        self.callers.append(context.caller)
        self.metas.append(context.request.meta)
        return self.tools[spec.name][1](**arguments)


def _schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
        "additionalProperties": False,
    }


def _fail(reason: str) -> Any:
    raise RuntimeError(reason)


def standard_tools() -> list[tuple[ToolSpec, Callable[..., Any]]]:
    """add, search (cached), lookup (cached, limited), finish (result_as_answer), flaky (fails)."""
    return [
        (
            ToolSpec(
                name="add",
                description="Add two integers.",
                source=SOURCE,
                input_schema=_schema(a="integer", b="integer"),
            ),
            lambda a, b: a + b,
        ),
        (
            ToolSpec(
                name="search_web",
                description="Search the web.",
                source=SOURCE,
                input_schema=_schema(query="string"),
                cache=CachePolicy(ttl=60),
            ),
            lambda query: f"results for {query}",
        ),
        (
            ToolSpec(
                name="lookup",
                description="Look a word up.",
                source=SOURCE,
                max_usage_count=2,
                input_schema=_schema(word="string"),
                cache=CachePolicy(ttl=60),
            ),
            lambda word: word.upper(),
        ),
        (
            ToolSpec(
                name="finish",
                description="Write the final report.",
                source=SOURCE,
                result_as_answer=True,
                input_schema=_schema(text="string"),
            ),
            lambda text: f"REPORT: {text}",
        ),
        (
            ToolSpec(
                name="flaky",
                description="Always fails.",
                source=SOURCE,
                input_schema=_schema(reason="string"),
            ),
            _fail,
        ),
    ]


@pytest.fixture
def tools_plugin() -> ToolsPlugin:
    return ToolsPlugin(standard_tools())
