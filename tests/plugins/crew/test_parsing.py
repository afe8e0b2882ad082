"""Every parse form of an agent's tool call, including broken ones."""

from __future__ import annotations

from typing import Any

import pytest
from toolmesh.plugins.crew import FinalAnswer, ParsedCall, ParseError, parse_agent_output, parse_arguments


@pytest.mark.parametrize(
    ("output", "tool", "arguments", "form"),
    [
        ({"name": "add", "arguments": {"a": 1, "b": 2}}, "add", {"a": 1, "b": 2}, "function"),
        ({"name": "add", "arguments": '{"a": 1, "b": 2}'}, "add", {"a": 1, "b": 2}, "function"),
        (
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}},
            "add",
            {"a": 1},
            "function",
        ),
        ({"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}}, "add", {"a": 1}, "function"),
        ({"tool_name": "add", "arguments": {"a": 1}}, "add", {"a": 1}, "function"),
        ('{"name": "add", "arguments": {"a": 1, "b": 2}}', "add", {"a": 1, "b": 2}, "json"),
        ('```json\n{"name": "add", "arguments": {"a": 1}}\n```', "add", {"a": 1}, "json"),
        ("{'name': 'add', 'arguments': {'a': 1, 'b': True}}", "add", {"a": 1, "b": True}, "python"),
        ('{"name": "add", "arguments": {"a": 1, "b": 2', "add", {"a": 1, "b": 2}, "repaired"),
        ('{"name": "add", "arguments": "{\'a\': 1}"}', "add", {"a": 1}, "json"),
        (
            'Thought: I should add\nAction: add\nAction Input: {"a": 1, "b": 2}',
            "add",
            {"a": 1, "b": 2},
            "react",
        ),
        ("Action: **add**\nAction Input: {'a': 1}", "add", {"a": 1}, "react"),
        ('Action: add\nAction Input: {"a": 1, "b": 2}\nObservation: 3', "add", {"a": 1, "b": 2}, "react"),
        ('Action 1: add\nAction 1 Input: ```json\n{"a": 1}\n```', "add", {"a": 1}, "react"),
        ('Action: add\nAction Input: {a: 1, "b": 2', "add", {"a": 1, "b": 2}, "repaired"),
        ("Action: Search the web\nAction Input: ", "Search the web", {}, "react"),
    ],
)
def test_parse_forms(output: Any, tool: str, arguments: dict[str, Any], form: str) -> None:
    parsed = parse_agent_output(output)
    assert isinstance(parsed, ParsedCall)
    assert (parsed.tool, parsed.arguments, parsed.form) == (tool, arguments, form)


def test_final_answer_keeps_thought_and_closes_fence() -> None:
    parsed = parse_agent_output("Thought: done\nFinal Answer: 42 apples\n```")
    assert parsed == FinalAnswer(output="42 apples", thought="Thought: done")


@pytest.mark.parametrize(
    ("output", "message", "tool"),
    [
        ("", "missed the 'Action:'", None),
        ("Thought: I am thinking", "missed the 'Action:'", None),
        ("Thought: x\nAction: add", "missed the 'Action Input:'", None),
        ("Action: add\nAction Input: definitely not json", "valid dictionary", "add"),
        ("Action: add\nAction Input: [1, 2]", "valid dictionary", "add"),
        ('{"arguments": {"a": 1}}', "no tool name", None),
        ({"name": "add", "arguments": 7}, "valid dictionary", "add"),
        (
            'Action: add\nAction Input: {"a": 1}\nFinal Answer: 3',
            "both perform Action and give a Final Answer",
            None,
        ),
    ],
)
def test_broken_forms_explain_the_format(output: Any, message: str, tool: str | None) -> None:
    with pytest.raises(ParseError) as caught:
        parse_agent_output(output)
    assert message in caught.value.message
    assert caught.value.tool == tool
    assert caught.value.code == "parse_error"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(None, {}), ("", {}), ('{"x": 1}', {"x": 1}), ("{'x': (1, 2)}", {"x": (1, 2)}), ('{"x": 1,', {"x": 1})],
)
def test_parse_arguments(raw: Any, expected: dict[str, Any]) -> None:
    assert parse_arguments(raw) == expected
