"""The crew plugin as a kernel plugin: valid hooks, env checks on load, importable without its extras."""

from __future__ import annotations

import subprocess
import sys

import pytest
import toolmesh
from toolmesh.contracts import ToolSpec
from toolmesh.plugins import crew

BLOCK_EXTRAS = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("json_repair", "rapidfuzz", "crewai"):
            raise ImportError(name)
sys.meta_path.insert(0, Block())
import toolmesh.plugins.crew as crew
call = crew.parse_agent_output('Action: add\\nAction Input: {"a": 1}')
assert call.arguments == {"a": 1}, call
try:
    crew.parse_agent_output('Action: add\\nAction Input: {"a": 1,')
except crew.ParseError:
    print("ok")
"""


def test_importable_without_extras() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_EXTRAS], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@pytest.mark.parametrize(
    ("spec", "available"),
    [
        (ToolSpec(name="plain"), True),
        (ToolSpec(name="keyed", required_env=("CREW_PLUGIN_TEST_KEY",)), False),
        (
            ToolSpec(
                name="defaulted",
                meta={"crew": {"env_vars": [{"name": "CREW_PLUGIN_TEST_KEY", "default": "x"}]}},
            ),
            True,
        ),
        (
            ToolSpec(
                name="optional",
                meta={"crew": {"env_vars": [{"name": "CREW_PLUGIN_TEST_KEY", "required": False}]}},
            ),
            True,
        ),
    ],
)
@pytest.mark.anyio
async def test_kernel_marks_tools_missing_env_unavailable(
    spec: ToolSpec, available: bool, monkeypatch
) -> None:
    monkeypatch.delenv("CREW_PLUGIN_TEST_KEY", raising=False)

    class Provider:
        @toolmesh.hookimpl
        def toolmesh_discover_tools(self) -> list[ToolSpec]:
            return [spec]

    kernel = toolmesh.Kernel([Provider(), crew], load_entrypoints=False)
    await kernel.start()
    registered = kernel.get_tool(spec.name)
    assert registered.available is available
    if not available:
        assert "CREW_PLUGIN_TEST_KEY" in registered.unavailable_reason
