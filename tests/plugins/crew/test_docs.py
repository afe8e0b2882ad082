"""docs/crew.md stays honest: its code compiles; it names every event kind, code and public name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from toolmesh.plugins import crew

DOC = (Path(__file__).resolve().parents[3] / "docs" / "crew.md").read_text(encoding="utf-8")
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{index}" for index in range(len(SNIPPETS))])
def test_python_snippets_compile(snippet: str) -> None:
    compile(snippet, "docs/crew.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize("kind", crew.EVENT_KINDS)
def test_event_kinds_are_documented(kind: str) -> None:
    assert f"`{kind}`" in DOC


@pytest.mark.parametrize(
    "code",
    [
        "parse_error",
        "unknown_tool",
        "invalid_arguments",
        "usage_limit",
        "repeated_call",
        "unavailable",
        "invalid_tool_constraint",
        "commit_missing",
        "commit_extra",
        "commit_duplicate",
        "commit_mismatched",
        "unknown_coworker",
        "coworker_unavailable",
        "path_outside_root",
        "unexpected_call_count",
        "round_closed",
        "hook_failed",
    ],
)
def test_codes_are_documented(code: str) -> None:
    assert f"`{code}`" in DOC


@pytest.mark.parametrize(
    "name",
    [
        "ToolUsage",
        "Toolset",
        "Availability",
        "Requirement",
        "Round",
        "CrewCache",
        "hit_cache_tool",
        "delegate_work_tool",
        "ask_question_tool",
        "read_file_tool",
        "add_image_tool",
        "serve_agent",
        "EnvVar",
        "with_env_vars",
        "AgentInfo",
        "TaskInfo",
        "HookSet",
        "SyncToolUsage",
        "ToolRoundError",
    ],
)
def test_public_names_are_documented_and_exported(name: str) -> None:
    assert name in crew.__all__ and hasattr(crew, name)
    assert f"`{name}" in DOC or f"{name}(" in DOC
