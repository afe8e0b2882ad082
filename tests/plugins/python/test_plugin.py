"""The plugin's hooks on a kernel: discovery, entry points, per-kernel state, ownership of calls."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import toolmesh
import toolmesh.plugins.python as python_plugin
from toolmesh.contracts import ErrorCode, ToolRequest, ToolSpec

from .conftest import TOOLS, InstallEntryPoints, KernelFor, WritePackage

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).parents[3] / "examples"


@toolmesh.tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@toolmesh.tool(name="ping")
def other_ping() -> str:
    """Another tool with the same name."""
    return "other"


async def test_discovered_specs_name_the_plugin_and_keep_state_per_kernel(kernel_for: KernelFor) -> None:
    async with kernel_for([ping]) as first, kernel_for([str(EXAMPLES / "math_tools.py")]) as second:
        assert [spec.name for spec in first.tools] == ["ping"]
        assert {spec.source for spec in second.tools} == {"python"}
        assert set(first.plugin_state["python"]) == {"ping"}
        assert "ping" not in second.plugin_state["python"]
        answer = await first.call(ToolRequest(id="1", tool="ping"))
        missing = await second.call(ToolRequest(id="2", tool="ping"))
    assert answer.structured_content == "pong"
    assert missing.error is not None and missing.error.code is ErrorCode.UNKNOWN_TOOL


async def test_a_tool_reached_twice_counts_once(kernel_for: KernelFor, tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    kernel = toolmesh.Kernel(
        plugins=[python_plugin],
        load_entrypoints=False,
        settings=toolmesh.Settings(plugins={"python": {"entry_points": False}}),
    )
    problems = await kernel.start([str(tmp_path), str(tmp_path / "tools.py"), ping, [ping]])
    assert problems == []
    assert [spec.name for spec in kernel.tools] == ["first", "ping", "second"]


async def test_two_tools_with_one_name_keep_the_first_everywhere() -> None:
    kernel = toolmesh.Kernel(
        plugins=[python_plugin],
        load_entrypoints=False,
        settings=toolmesh.Settings(plugins={"python": {"entry_points": False}}),
    )
    problems = await kernel.start([ping, other_ping])
    assert len(problems) == 1 and "'ping' is provided twice" in problems[0]
    result = await kernel.call(ToolRequest(id="1", tool="ping"))
    assert result.structured_content == "pong"


async def test_rediscovery_replaces_the_tools(kernel_for: KernelFor) -> None:
    async with kernel_for([ping]) as kernel:
        await kernel.discover_tools([str(EXAMPLES / "text_tools.py")])
        assert "ping" not in kernel.plugin_state["python"]
        result = await kernel.call(ToolRequest(id="1", tool="ping"))
    assert result.error is not None and result.error.code is ErrorCode.UNKNOWN_TOOL


async def test_broken_source_fails_the_start(kernel_for: KernelFor, tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import toolmesh\nraise ImportError('missing dependency')\n")
    with pytest.raises(toolmesh.ToolDefinitionError, match=r"broken\.py: ImportError: missing dependency"):
        async with kernel_for([str(tmp_path / "broken.py")]):
            pass


@pytest.mark.parametrize("enabled", [True, False])
async def test_entry_point_tools_follow_the_setting(
    kernel_for: KernelFor,
    install_entry_points: InstallEntryPoints,
    write_package: WritePackage,
    enabled: bool,
) -> None:
    package = write_package({"tools.py": TOOLS})
    install_entry_points({"first": f"{package}.tools:first"})
    async with kernel_for([ping], entry_points=enabled) as kernel:
        names = [spec.name for spec in kernel.tools]
        result = await kernel.call(ToolRequest(id="1", tool="first", arguments={"a": 7}))
    assert names == (["first", "ping"] if enabled else ["ping"])
    assert (result.structured_content == 7) is enabled


def test_unclaimed_sources_are_what_no_plugin_serves() -> None:
    kernel = toolmesh.Kernel(plugins=[python_plugin], load_entrypoints=False)
    sources = [
        str(EXAMPLES),
        "examples/math_tools.py",
        "json",
        "pkg.mod:attr",
        "tools.rn",
        f"absent_{uuid.uuid4().hex}",
    ]
    assert kernel.unclaimed_sources(sources) == sources[-2:]


def test_execute_answers_only_for_python_tools() -> None:
    kernel = toolmesh.Kernel(plugins=[python_plugin], load_entrypoints=False)
    context = toolmesh.CallContext(request=ToolRequest(id="1", tool="x"), kernel=kernel)
    assert python_plugin.toolmesh_execute_tool(ToolSpec(name="x", source="rune"), {}, context) is None


async def test_python_tool_unknown_to_this_kernel_is_unavailable() -> None:
    kernel = toolmesh.Kernel(plugins=[python_plugin], load_entrypoints=False)
    kernel.set_tools([ToolSpec(name="ghost", source="python")])
    result = await kernel.call(ToolRequest(id="1", tool="ghost"))
    assert result.error is not None and result.error.code is ErrorCode.UNAVAILABLE
    assert "not loaded on this kernel" in result.error.message
