"""The crewAI adapter against the real crewai package: mesh tools as crewAI tools, crewAI tools on the mesh.

Marked ``crewai`` and deselected by default: crewai>=1 cannot share an environment with the mcp extra (see
the ``crewai`` extra in pyproject.toml). Run in an environment with ``pip install -e '.[crewai]' pytest
pytest-timeout hypothesis blockbuster``:
``python -m pytest -m crewai tests/plugins/crew/test_crewai_adapter.py``.
Nothing here is skipped when crewai is missing: a run that selects these tests fails instead.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import anyio
import pytest
from toolmesh import Mesh, SyncMesh
from toolmesh.contracts import CachePolicy, ToolSpec
from toolmesh.plugins import crew
from toolmesh.testing import running_node

from .conftest import SOURCE, ToolsPlugin, _schema, standard_tools

pytestmark = pytest.mark.crewai


@pytest.fixture(scope="module")
def samples() -> ModuleType:
    """The crewAI tools of these tests (importing them imports crewai)."""
    return importlib.import_module("tests.plugins.crew.crewai_samples")


@pytest.fixture(scope="module")
def adapter(samples: ModuleType) -> ModuleType:
    """The adapter module, imported after ``samples`` turned crewai's reporting off."""
    return importlib.import_module("toolmesh.plugins.crew.crewai_adapter")


def scripted_crew_answer(
    samples: ModuleType, tools: list[Any], *, role: str, goal: str, task: str, expected_output: str, max_iter: int
) -> str:
    """The answer of a crew of one tool-only agent, driven by the scripted LLM, given one task."""
    from crewai import Agent, Crew, Task

    agent = Agent(
        role=role,
        goal=goal,
        backstory="Uses tools only.",
        llm=samples.ScriptedLLM(model="scripted"),
        tools=tools,
        max_iter=max_iter,
        verbose=False,
    )
    work = Task(description=task, expected_output=expected_output, agent=agent)
    return str(Crew(agents=[agent], tasks=[work], verbose=False).kickoff())


def test_args_model_from_schema(adapter: ModuleType) -> None:
    spec = next(spec for spec, _ in standard_tools() if spec.name == "add")
    model = adapter.args_model(spec)
    assert model(a=1, b=2).model_dump() == {"a": 1, "b": 2}
    with pytest.raises(Exception, match="b"):
        model(a=1)


def test_cache_function_is_crewais_default_unless_the_spec_opts_out(adapter: ModuleType) -> None:
    plain = ToolSpec(name="plain", source=SOURCE)
    off = ToolSpec(name="off", source=SOURCE, cache=CachePolicy(enabled=False))
    never = ToolSpec(name="never", source=SOURCE, meta={"crew": {"should_cache": "never"}})
    caching = [adapter.to_crewai(spec, None).cache_function({}, "x") for spec in (plain, off, never)]
    assert caching == [True, False, False]


def test_mesh_spec_of_a_crewai_tool(
    monkeypatch, adapter: ModuleType, samples: ModuleType
) -> None:
    monkeypatch.delenv("CREW_ADAPTER_KEY", raising=False)
    spec = adapter.mesh_spec(samples.ShoutTool())
    assert (spec.name, spec.title, spec.max_usage_count) == ("shout_text", "Shout Text", 5)
    assert spec.input_schema["required"] == ["text"]
    keyed = adapter.mesh_spec(samples.NeedsKey())
    assert keyed.required_env == ("CREW_ADAPTER_KEY",)
    assert "CREW_ADAPTER_KEY (the key)" in crew.check_env(keyed)


@pytest.mark.anyio
async def test_both_directions_over_a_real_mesh(
    toolmesh_settings, tools_plugin, adapter: ModuleType, samples: ModuleType
) -> None:
    served = adapter.CrewAIToolsPlugin([samples.ShoutTool()])
    async with running_node(toolmesh_settings, plugins=[tools_plugin, served, crew], load_entrypoints=False):
        async with Mesh(settings=toolmesh_settings) as mesh:
            shouted = await mesh.call("shout_text", {"text": "hi"})

        def use_from_crewai() -> tuple[str, str, bool, list[bool], str]:
            with SyncMesh(toolmesh_settings.nats_url, prefix=toolmesh_settings.prefix) as sync:
                names = ["add", "finish", "shout_text", "search_web", "flaky"]
                tools = {tool.name: tool for tool in adapter.crewai_tools(sync, only=names)}
                caching = [tools[name].cache_function({}, "x") for name in ("add", "search_web")]
                return (
                    tools["add"].run(a=2, b=3),
                    tools["shout_text"].run(text="yo"),
                    tools["finish"].result_as_answer,
                    caching,
                    tools["flaky"].run(reason="boom"),
                )

        added, shout_via_crewai, answer, caching, failed = await anyio.to_thread.run_sync(use_from_crewai)
    assert shouted.structured_content == "HI!"
    assert (added, shout_via_crewai, answer) == ("5", "YO!", True)
    assert caching == [True, True]  # crewAI's default cache_function caches every tool
    assert failed.startswith("Error (execution_failed):") and "boom" in failed


@pytest.mark.anyio
@pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai")  # crewai reading its own deprecated fields
async def test_a_crewai_agent_runs_mesh_tools_in_a_real_crew(
    toolmesh_settings, tools_plugin, adapter: ModuleType, samples: ModuleType
) -> None:
    """crewAI's own agent loop (prompt, parse, tool run, observation) drives mesh tools through the adapter,
    and a result_as_answer tool's output becomes the crew's answer.

    Two tool uses only: crewAI appends its tool list to every third observation (its format reminder), and
    that text would become part of a result_as_answer answer.
    """
    samples.SCRIPT[:] = [
        'Thought: add first\nAction: add\nAction Input: {"a": 20, "b": 22}',
        'Thought: write it up\nAction: finish\nAction Input: {"text": "sum is 42"}',
    ]
    samples.PROMPTS.clear()
    async with running_node(toolmesh_settings, plugins=[tools_plugin, crew], load_entrypoints=False):

        def kickoff() -> str:
            with SyncMesh(toolmesh_settings.nats_url, prefix=toolmesh_settings.prefix) as sync:
                return scripted_crew_answer(
                    samples,
                    adapter.crewai_tools(sync, only=["add", "finish"]),
                    role="Adder",
                    goal="Add numbers with the mesh's tools",
                    task="Add 20 and 22, then report.",
                    expected_output="a report",
                    max_iter=5,
                )

        answer = await anyio.to_thread.run_sync(kickoff)
    assert answer == "REPORT: sum is 42"
    assert samples.SCRIPT == []  # every scripted step was asked for
    assert tools_plugin.runs == {"add": 1, "finish": 1}
    assert "42" not in samples.PROMPTS[0] and "42" in samples.PROMPTS[1]  # the mesh's answer, observed


@pytest.mark.anyio
@pytest.mark.filterwarnings("ignore::DeprecationWarning:crewai")  # crewai reading its own deprecated fields
async def test_max_usage_count_is_the_limit_the_user_set(
    toolmesh_settings, adapter: ModuleType, samples: ModuleType
) -> None:
    """crewAI's own agent loop counts each use of a tool twice (its structured tool's invoke, then its
    ToolUsage); a mesh tool with max_usage_count=4 still runs four times, and the fifth call is refused."""
    spec = ToolSpec(name="shout_word", source=SOURCE, max_usage_count=4, input_schema=_schema(word="string"))
    plugin = ToolsPlugin([(spec, lambda word: word.upper())])
    samples.SCRIPT[:] = [
        f'Thought: next word\nAction: shout_word\nAction Input: {{"word": "w{n}"}}' for n in range(6)
    ] + ["Thought: done\nFinal Answer: shouted"]
    samples.PROMPTS.clear()
    async with running_node(toolmesh_settings, plugins=[plugin, crew], load_entrypoints=False):

        def kickoff() -> tuple[str, list[str]]:
            with SyncMesh(toolmesh_settings.nats_url, prefix=toolmesh_settings.prefix) as sync:
                answer = scripted_crew_answer(
                    samples,
                    adapter.crewai_tools(sync, only=["shout_word"]),
                    role="Shouter",
                    goal="Shout words with the mesh's tools",
                    task="Shout six words.",
                    expected_output="done",
                    max_iter=10,
                )
                # BaseTool.run (crewAI's function-calling loop) counted once already, and still does
                direct = adapter.crewai_tools(sync, only=["shout_word"])[0]
                return answer, [str(direct.run(word=f"d{n}")) for n in range(5)]

        answer, direct = await anyio.to_thread.run_sync(kickoff)
    assert answer == "shouted" and samples.SCRIPT == []
    assert plugin.runs["shout_word"] == 4 + 4
    assert "W3" in samples.PROMPTS[4] and "usage limit of 4" not in samples.PROMPTS[4]
    assert "usage limit of 4" in samples.PROMPTS[5]  # the fifth call: refused by crewAI, at the user's limit
    assert direct[:4] == ["D0", "D1", "D2", "D3"] and "usage limit of 4" in direct[4]
