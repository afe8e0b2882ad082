"""``toolmesh crew replay``: a scripted agent against a real mesh, in text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
import typer
from toolmesh.plugins import crew
from toolmesh.plugins.crew import ScriptLine, parse_script
from toolmesh.testing import running_node
from typer.testing import CliRunner

SCRIPT = [
    json.dumps(
        {"output": 'Thought: add\nAction: add\nAction Input: {"a": 1, "b": 2}', "agent": "math", "task": "t1"}
    ),
    "",
    "// a comment",
    json.dumps({"name": "add", "arguments": {"a": "x", "b": 2}, "agent": "math"}),
    json.dumps("Action: nope\nAction Input: {}"),
    json.dumps({"output": {"name": "finish", "arguments": {"text": "3"}}, "agent": "math"}),
]


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """The toolmesh command line."""

    crew.toolmesh_cli(app)
    return app


def test_parse_script_shapes() -> None:
    assert parse_script(SCRIPT) == [
        ScriptLine(1, 'Thought: add\nAction: add\nAction Input: {"a": 1, "b": 2}', "math", "t1"),
        ScriptLine(4, {"name": "add", "arguments": {"a": "x", "b": 2}}, "math", None),
        ScriptLine(5, "Action: nope\nAction Input: {}"),
        ScriptLine(6, {"name": "finish", "arguments": {"text": "3"}}, "math", None),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [("{not json", "line 1: not JSON"), ("[1]", "got list"), ('{"output": 3}', "'output' must be")],
)
def test_bad_script_lines_are_named(line: str, message: str) -> None:
    with pytest.raises(crew.ScriptError, match=message):
        parse_script([line])


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(_app(), ["crew", "replay", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 2
    assert "cannot read" in result.output


@pytest.mark.anyio
@pytest.mark.parametrize("as_json", [True, False])
async def test_replay_command(toolmesh_settings, tools_plugin, tmp_path: Path, as_json: bool) -> None:
    script = tmp_path / "agent.jsonl"
    script.write_text("\n".join(SCRIPT) + "\n", encoding="utf-8")
    args = [
        "crew",
        "replay",
        str(script),
        "--nats",
        toolmesh_settings.nats_url,
        "--prefix",
        toolmesh_settings.prefix,
    ]
    if as_json:
        args.append("--json")
    async with running_node(toolmesh_settings, plugins=[tools_plugin], load_entrypoints=False):
        result = await anyio.to_thread.run_sync(lambda: CliRunner().invoke(_app(), args))
    assert result.exit_code == 0, result.output
    if as_json:
        rows = [json.loads(line) for line in result.output.splitlines()]
        assert [(row["line"], row["code"]) for row in rows] == [
            (1, None),
            (4, "invalid_arguments"),
            (5, "unknown_tool"),
            (6, None),
        ]
        assert rows[0]["observation"] == "3" and rows[0]["agent"] == "math" and rows[0]["task"] == "t1"
        assert [event["kind"] for event in rows[0]["events"]] == ["tool_usage_started", "tool_usage_finished"]
        assert rows[1]["events"][0]["kind"] == "tool_validate_input_error"
        assert rows[3]["is_answer"] is True and rows[3]["observation"] == "REPORT: 3"
    else:
        assert "--- line 1 agent=math task=t1" in result.output
        assert "observation [ok]: 3" in result.output
        assert "observation [error invalid_arguments]" in result.output
        assert "event tool_selection_error nope: Action 'nope' doesn't exist" in result.output
        assert "observation [answer]: REPORT: 3" in result.output
