"""``toolmesh sandbox test`` and ``toolmesh sandbox run``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.cli import sandbox_app
from typer.testing import CliRunner

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "sandbox"


def test_examples_pass_as_self_tests(monkeypatch) -> None:
    monkeypatch.setenv("GREETING_KEY", "k3y-for-tests")
    result = CliRunner().invoke(sandbox_app, ["test", str(EXAMPLES), "--json"])
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert (result.exit_code, report["failed"], report["passed"]) == (0, 0, 5)


def test_a_mismatching_example_is_reported(write_tool, tool_dir) -> None:
    write_tool("off_by_one", "export function execute(i) { return i.n + 2 }",
               examples=[{"input": {"n": 1}, "output": 2, "description": "adds one"},
                         {"input": {"n": 1.5}, "output": 3.5}])
    result = CliRunner().invoke(sandbox_app, ["test", str(tool_dir)])
    assert result.exit_code == 1
    assert "FAIL off_by_one example 0: expected 2, got 3" in result.stdout
    assert "ok   off_by_one example 1" in result.stdout
    assert "1 passed, 1 failed" in result.stdout


def test_run_prints_the_result_and_console_output(write_tool, tool_dir) -> None:
    path = write_tool("hello", "export function execute(i) { console.log('greeting', i.who); return { hi: i.who } }")
    result = CliRunner().invoke(sandbox_app, ["run", str(path), "--input", '{"who": "ann"}'])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"hi": "ann"}
    assert "log INFO hello: greeting ann" in result.stderr


def test_run_reports_a_failure_with_its_code(write_tool, tool_dir) -> None:
    path = write_tool("nosy", "export function execute() { return Deno.env.get('HOME') }")
    result = CliRunner().invoke(sandbox_app, ["run", str(path)])
    assert result.exit_code == 1
    assert "sandbox_violation:" in result.stderr


def test_bad_input_json_is_reported() -> None:
    result = CliRunner().invoke(sandbox_app, ["run", str(EXAMPLES / "add.tool.json"), "--input", "{oops"])
    assert result.exit_code == 2 and "--input is not valid JSON" in result.stderr


def test_the_plugin_adds_the_sandbox_command() -> None:
    app = typer.Typer()
    sandbox.toolmesh_cli(app)
    assert [group.name for group in app.registered_groups] == ["sandbox"]
