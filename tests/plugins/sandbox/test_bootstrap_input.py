"""``bootstrap.input`` is checked against the input schema at load; all problems of a document reported."""

from __future__ import annotations

import json

import msgspec
import pytest
from toolmesh import Mesh
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.cli import sandbox_app
from toolmesh.plugins.sandbox.document import check_document
from toolmesh.testing import eventually, running_node
from typer.testing import CliRunner

from .conftest import document

pytestmark = pytest.mark.anyio

COUNT = {"type": "object", "properties": {"count": {"type": "integer", "minimum": 1}}, "required": ["count"]}
INPUT = "$.context.bootstrap.input"
ECHO = "export function execute(i) { return { count: i.count } }"


def _once(**bootstrap: object) -> dict:
    return {"bootstrap": {"enabled": True, "mode": "once", **bootstrap}}


@pytest.mark.parametrize(
    ("bootstrap", "path", "fragment"),
    [
        pytest.param(_once(input={"count": "three"}), f"{INPUT}.count", "integer", id="wrong-type"),
        pytest.param(_once(input={"count": 0}), f"{INPUT}.count", "minimum", id="out-of-range"),
        pytest.param(_once(), INPUT, "count", id="absent-but-required"),
        pytest.param({"bootstrap": {"enabled": True, "mode": "continuous", "input": {}}},
                     INPUT, "count", id="continuous"),
    ],
)
def test_bootstrap_input_that_does_not_match_is_refused(bootstrap: dict, path: str, fragment: str) -> None:
    tool, problems = check_document(document("counter", ECHO, input_schema=COUNT, **bootstrap), "c.tool.json")
    assert tool is None
    assert [problem.path for problem in problems] == [path]
    assert "does not match input_schema" in problems[0].reason and fragment in problems[0].reason


def test_a_bootstrap_that_never_runs_needs_no_input() -> None:
    off = {"bootstrap": {"enabled": False, "mode": "disabled"}}
    tool, problems = check_document(document("counter", ECHO, input_schema=COUNT, **off))
    assert problems == [] and tool is not None
    given = _once(input={"count": 2})
    tool, problems = check_document(document("counter", ECHO, input_schema=COUNT, **given))
    assert problems == [] and tool is not None


def _many_problems() -> dict:
    data = document("messy", "export const run = 1", input_schema=COUNT,
                    examples=[{"input": {"count": 1}, "output": {"count": 1}}, {"input": {"count": "x"}}],
                    **_once(input={"count": -1}, priority=500))
    data["title"] = ""
    return data


EVERY_PROBLEM = {
    "$.title",
    "$.context.bootstrap.priority",
    "$.context.code.source",
    "$.context.examples[1].input.count",
    "$.context.bootstrap.input.count",
}


def test_every_problem_of_a_document_is_reported_at_once() -> None:
    tool, problems = check_document(_many_problems(), "messy.tool.json")
    assert tool is None
    assert {problem.path for problem in problems} == EVERY_PROBLEM


def test_sandbox_check_lists_every_problem(tool_dir) -> None:
    (tool_dir / "messy.tool.json").write_text(json.dumps(_many_problems()))
    (tool_dir / "fine.tool.json").write_text(json.dumps(document("fine", ECHO, input_schema=COUNT)))
    result = CliRunner().invoke(sandbox_app, ["check", str(tool_dir), "--json"])
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert report["tools"] == ["fine"]
    assert {problem["path"] for problem in report["problems"]} == EVERY_PROBLEM
    text = CliRunner().invoke(sandbox_app, ["check", str(tool_dir)])
    assert "1 conform, 1 refused (5 problem(s))" in text.stdout
    assert "messy.tool.json: $.context.bootstrap.input.count: does not match input_schema" in text.stdout
    fine = CliRunner().invoke(sandbox_app, ["check", str(tool_dir / "fine.tool.json")])
    assert fine.exit_code == 0 and "ok   fine" in fine.stdout


async def test_a_node_refuses_the_document_and_never_runs_its_bootstrap(
    write_tool, tool_dir, toolmesh_settings
) -> None:
    write_tool("counter", ECHO, input_schema=COUNT, **_once(input={"count": "three"}))
    write_tool("starter", ECHO, input_schema=COUNT, **_once(input={"count": 3}))
    settings = msgspec.structs.replace(toolmesh_settings, plugins={"sandbox": {"workers": 1, "max_idle": 1}})
    async with (
        running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False) as node,
        Mesh(settings=settings) as mesh,
    ):
        listed = {spec.name: spec for spec in await mesh.list_tools()}
        refused = await mesh.call("counter", {"count": 1}, timeout=10)
        served = await mesh.call("starter", {"count": 4}, timeout=10)
        state = sandbox.sandbox_of(node.kernel)
        booted = await eventually(lambda: state.bootstrapper if state.bootstrapper is not None
                                  and "starter" in state.bootstrapper.results else None, what="booted")
    assert not listed["counter"].available
    assert f"{INPUT}.count: does not match input_schema" in listed["counter"].unavailable_reason
    assert refused.error is not None and refused.error.code == "unavailable"
    assert served.structured_content == {"count": 4}
    assert booted.runs == {"starter": 1}
