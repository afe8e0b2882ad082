"""The crew example: its script parses, and replaying it over the example tools tells the documented story."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from toolmesh import Mesh
from toolmesh.plugins import crew
from toolmesh.plugins.crew import ToolUsage, read_script, replay
from toolmesh.testing import running_node

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "crew"


def _python_plugin():
    try:
        from toolmesh.plugins import python
    except ImportError:
        return None
    return python if hasattr(python, "toolmesh_execute_tool") else None


def test_script_parses() -> None:
    script = read_script(EXAMPLES / "research_agent.jsonl")
    assert len(script) == 9
    assert {line.agent for line in script} == {"researcher", "writer"}


def test_tools_declare_lifecycle_settings() -> None:
    spec = importlib.util.spec_from_file_location("crew_example_tools", EXAMPLES / "research_tools.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.search_web.cache is not None and module.search_web.cache.ttl == 300
    assert module.expensive_lookup.max_usage_count == 2
    assert module.write_report.result_as_answer is True


@pytest.mark.anyio
async def test_replay_example(toolmesh_settings) -> None:
    python = _python_plugin()
    if python is None:
        pytest.skip("the python plugin is not installed")
    sources = [str(EXAMPLES / "research_tools.py")]
    async with running_node(
        toolmesh_settings, sources=sources, plugins=[python, crew], load_entrypoints=False
    ), Mesh(settings=toolmesh_settings) as mesh:
        usage = await ToolUsage.connect(mesh)
        steps = [step async for step in replay(usage, read_script(EXAMPLES / "research_agent.jsonl"))]
        await usage.close()
    codes = [step.observation.code for step in steps]
    assert codes == [None, "repeated_call", None, None, "unknown_tool", None, None, "usage_limit", None]
    assert steps[0].observation.text.startswith("NATS is a connective technology")
    assert (
        steps[3].observation.from_cache is True
    )  # the writer misspelt the tool and its JSON, got the cached page
    assert steps[-1].observation.is_answer and steps[-1].observation.text.startswith("REPORT")
