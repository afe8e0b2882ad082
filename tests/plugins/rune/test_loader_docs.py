"""docs/rune-tools.md stays honest: its Rune examples pass ``rune check`` and run, its Python example runs."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
import toolmesh
import toolmesh.plugins.python as python_plugin
import toolmesh.plugins.rune as rune_plugin
from toolmesh.contracts import ToolRequest
from toolmesh.plugins.rune.loader import check_paths
from toolmesh.plugins.rune.tool_format import PARAM_KEYS, TOOL_KEYS

DOC_PATH = Path(__file__).resolve().parents[3] / "docs" / "rune-tools.md"
EXAMPLES = DOC_PATH.parents[1] / "examples"
DOC = DOC_PATH.read_text(encoding="utf-8")
RUNE_BLOCKS = re.findall(r"```rune\n(.*?)```", DOC, re.DOTALL)
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)


def test_rune_examples_pass_check(tmp_path: Path) -> None:
    assert len(RUNE_BLOCKS) >= 4
    for block in RUNE_BLOCKS:
        name = re.match(r"// file: (\S+)\n", block)
        assert name, f"every rune block names its file:\n{block}"
        (tmp_path / name.group(1)).write_text(block)
    report = check_paths([str(tmp_path)])
    assert [str(problem) for problem in report.problems] == []
    assert {tool.name for tool in report.tools} == {
        "rune_search_notes",
        "rune_make_note",
        "rune_add_twice",
        "rune_word_count",
    }
    make_note = next(tool for tool in report.tools if tool.name == "rune_make_note")
    arguments = make_note.call_arguments({"title": "T", "body": "a b c", "tags": ["x"], "pinned": True})
    assert arguments == [["T", "a b c", ["x"], True, {"None": None}]]  # as the page says


@pytest.mark.anyio
async def test_rune_examples_run(tmp_path: Path) -> None:
    for block in RUNE_BLOCKS:
        (tmp_path / re.match(r"// file: (\S+)\n", block).group(1)).write_text(block)  # type: ignore[union-attr]
    kernel = toolmesh.Kernel([rune_plugin, python_plugin], load_entrypoints=False)
    await kernel.start([str(tmp_path), str(EXAMPLES / "math_tools.py")])
    try:
        calls = [
            ("rune_search_notes", {"query": "RUNE", "max_results": 1}, ["Rune basics"]),
            (
                "rune_make_note",
                {"title": "T", "body": "a b c", "tags": ["x"], "pinned": True},
                {"title": "T", "words": 3, "tags": ["x"], "pinned": True, "meta": {}},
            ),
            ("rune_add_twice", {"a": 1, "b": 2}, 5),
            ("rune_word_count", {"text": "a bb ccc", "min_length": 2}, 2),
        ]
        for tool, arguments, expected in calls:
            result = await kernel.call(ToolRequest(id=tool, tool=tool, arguments=arguments))
            assert result.structured_content == expected, result
    finally:
        await kernel.stop()


def test_python_example_runs() -> None:
    (block,) = PYTHON_BLOCKS
    module = types.ModuleType("rune_tools_docs_example")
    sys.modules[module.__name__] = module
    try:
        exec(compile(block, str(DOC_PATH), "exec"), module.__dict__)  # noqa: S102 - our own docs
    finally:
        del sys.modules[module.__name__]


def test_every_attribute_key_is_documented() -> None:
    for key in (*TOOL_KEYS, *PARAM_KEYS):
        assert f"| `{key}` |" in DOC, key
