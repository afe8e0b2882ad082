"""The crewAI adapter, when crewai is installed: mesh tools as crewAI tools and crewAI tools on the mesh."""

from __future__ import annotations

import pytest

crewai = pytest.importorskip("crewai")

import anyio  # noqa: E402
from crewai.tools import BaseTool, EnvVar  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

import toolmesh.plugins.crew as crew  # noqa: E402
from toolmesh import Mesh, SyncMesh  # noqa: E402
from toolmesh.plugins.crew.crewai_adapter import CrewAIToolsPlugin, args_model, crewai_tools, mesh_spec  # noqa: E402
from toolmesh.testing import running_node  # noqa: E402

from .conftest import standard_tools  # noqa: E402


class ShoutInput(BaseModel):
    text: str = Field(..., description="What to shout")


class ShoutTool(BaseTool):
    name: str = "Shout Text"
    description: str = "Shout the text back."
    args_schema: type[BaseModel] = ShoutInput
    max_usage_count: int | None = 5

    def _run(self, text: str) -> str:
        return text.upper() + "!"


class NeedsKey(ShoutTool):
    name: str = "Needs Key"
    env_vars: list[EnvVar] = [EnvVar(name="CREW_ADAPTER_KEY", description="the key", required=True)]


def test_args_model_from_schema() -> None:
    spec = next(spec for spec, _ in standard_tools() if spec.name == "add")
    model = args_model(spec)
    assert model(a=1, b=2).model_dump() == {"a": 1, "b": 2}
    with pytest.raises(Exception, match="b"):
        model(a=1)


def test_mesh_spec_of_a_crewai_tool(monkeypatch) -> None:
    monkeypatch.delenv("CREW_ADAPTER_KEY", raising=False)
    spec = mesh_spec(ShoutTool())
    assert (spec.name, spec.title, spec.max_usage_count) == ("shout_text", "Shout Text", 5)
    assert spec.input_schema["required"] == ["text"]
    keyed = mesh_spec(NeedsKey())
    assert keyed.required_env == ("CREW_ADAPTER_KEY",)
    assert "CREW_ADAPTER_KEY (the key)" in crew.check_env(keyed)


@pytest.mark.anyio
async def test_both_directions_over_a_real_mesh(toolmesh_settings, tools_plugin) -> None:
    served = CrewAIToolsPlugin([ShoutTool()])
    async with running_node(toolmesh_settings, plugins=[tools_plugin, served, crew], load_entrypoints=False):
        async with Mesh(settings=toolmesh_settings) as mesh:
            shouted = await mesh.call("shout_text", {"text": "hi"})

        def use_from_crewai() -> tuple[str, str, bool, list[bool], str]:
            with SyncMesh(toolmesh_settings.nats_url, prefix=toolmesh_settings.prefix) as sync:
                names = ["add", "finish", "shout_text", "search_web", "flaky"]
                tools = {tool.name: tool for tool in crewai_tools(sync, only=names)}
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
    assert caching == [False, True]
    assert failed.startswith("Error (execution_failed):") and "boom" in failed
