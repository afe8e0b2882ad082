"""Loading tool.code.v1 documents: what conforms, and every problem of what does not."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
import toolmesh
from toolmesh.contracts.tool_code import ToolCodeDocument
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.document import check_document, load_file

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "sandbox"


def _good() -> dict:
    return json.loads((EXAMPLES / "add.tool.json").read_text())


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.tool.json")), ids=lambda p: p.name)
def test_every_example_conforms(path: Path) -> None:
    tool, problems = load_file(path)
    assert problems == []
    assert tool is not None and f"tool:{tool.name}" in tool.document.tags


def _without(data: dict, *keys: str) -> dict:
    target = data
    for key in keys[:-1]:
        target = target[key]
    del target[keys[-1]]
    return data


def _with(data: dict, value: object, *keys: str) -> dict:
    target = data
    for key in keys[:-1]:
        target = target[key]
    target[keys[-1]] = value
    return data


BAD_DOCUMENTS = [
    pytest.param(_with(_good(), "tool.v2", "schema_name"), {("$.schema_name", "tool.code.v1")}, id="schema-name"),
    pytest.param(_without(_good(), "context", "code"), {("$.context", "code")}, id="missing-code"),
    pytest.param(_with(_good(), "rust", "context", "code", "language"), {("$.context.code.language", "rust")},
                 id="language"),
    pytest.param(_with(_good(), 0, "context", "limits", "memory_mb"), {("$.context.limits.memory_mb", "16")},
                 id="memory-too-small"),
    pytest.param(_with(_good(), "yes", "context", "permissions", "network"),
                 {("$.context.permissions.network", "")}, id="network-type"),
    pytest.param(_with(_good(), ["tool"], "tags"), {("$.tags", "workspace:tools")}, id="missing-tags"),
    pytest.param(_with(_good(), "export const run = 1", "context", "code", "source"),
                 {("$.context.code.source", "execute")}, id="no-execute-export"),
    pytest.param(_with(_good(), {"type": "nonsense"}, "context", "input_schema"),
                 {("$.context.input_schema", "")}, id="bad-input-schema"),
    pytest.param(_with(_good(), [{"input": {"a": "x"}}], "context", "examples"),
                 {("$.context.examples[0].input.a", "input_schema")}, id="example-input"),
    pytest.param(_with(_good(), {"enabled": True, "mode": "sometimes", "priority": 101}, "context", "bootstrap"),
                 {("$.context.bootstrap.mode", ""), ("$.context.bootstrap.priority", "100")}, id="bootstrap"),
]


@pytest.mark.parametrize(("data", "expected"), BAD_DOCUMENTS)
def test_a_bad_document_is_refused_with_path_and_reason(data: dict, expected: set) -> None:
    tool, problems = check_document(data, "x.tool.json")
    assert tool is None
    for path, fragment in expected:
        assert any(p.path == path and fragment in p.reason for p in problems), (path, fragment, problems)
    assert all(str(p).startswith("x.tool.json: $") for p in problems)


def test_every_problem_is_listed_at_once() -> None:
    data = _good()
    data["title"] = ""
    data["context"]["version"] = 3
    data["context"]["limits"]["timeout_ms"] = -1
    data["context"]["permissions"]["network"] = [""]
    _, problems = check_document(data, "x.tool.json")
    paths = {problem.path for problem in problems}
    assert {"$.title", "$.context.version", "$.context.limits.timeout_ms", "$.context.permissions.network"} <= paths


def test_contract_round_trips() -> None:
    document = msgspec.convert(_good(), ToolCodeDocument)
    again = msgspec.json.decode(msgspec.json.encode(document), type=ToolCodeDocument)
    assert again == document
    assert document.context.limits.memory_mb == 64
    assert document.context.bootstrap is None


def test_claims_tool_files_and_folders_holding_them(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    claimed = sandbox.toolmesh_claim_sources(
        [str(EXAMPLES), str(EXAMPLES / "add.tool.json"), str(tmp_path / "empty"), "examples/math_tools.py", "pkg:attr"]
    )
    assert claimed == [str(EXAMPLES), str(EXAMPLES / "add.tool.json")]


async def test_refused_document_is_served_as_unavailable_with_every_reason(write_tool, tool_dir, kernel_for) -> None:
    write_tool("fine", "export function execute() { return 1 }")
    bad = tool_dir / "broken.tool.json"
    bad.write_text(json.dumps({"schema_name": "tool.code.v1", "title": "", "tags": [], "context": {"name": "broken"}}))
    (tool_dir / "garbage.tool.json").write_text("{not json")
    async with kernel_for([str(tool_dir)]) as kernel:
        broken = kernel.get_tool("broken")
        garbage = kernel.get_tool("garbage")
        fine = kernel.get_tool("fine")
        result = await kernel.call(toolmesh.contracts.ToolRequest(id="1", tool="broken"))
    assert fine is not None and fine.available
    assert broken is not None and not broken.available
    for fragment in ("$.title", "$.tags", "$.context", "description", "code"):
        assert fragment in broken.unavailable_reason
    assert garbage is not None and "not valid JSON" in garbage.unavailable_reason
    assert result.error is not None and result.error.code == "unavailable"


async def test_strict_mode_refuses_to_start(tool_dir, kernel_for) -> None:
    (tool_dir / "broken.tool.json").write_text(json.dumps({"schema_name": "tool.code.v1"}))
    with pytest.raises(toolmesh.ToolDefinitionError) as caught:
        async with kernel_for([str(tool_dir)], strict=True):
            pass
    assert "broken.tool.json: $: " in str(caught.value) and "title" in str(caught.value)


async def test_code_that_does_not_compile_is_unavailable_with_the_error(write_tool, tool_dir, kernel_for) -> None:
    write_tool("typo", "export function execute( { return 1 }")
    async with kernel_for([str(tool_dir)]) as kernel:
        spec = kernel.get_tool("typo")
    assert spec is not None and not spec.available
    assert "SyntaxError" in spec.unavailable_reason and "base64" not in spec.unavailable_reason


async def test_spec_carries_the_document(kernel_for) -> None:
    async with kernel_for([str(EXAMPLES / "add.tool.json")]) as kernel:
        spec = kernel.get_tool("add_numbers")
    assert spec is not None
    assert (spec.source, spec.title, spec.version) == ("sandbox", "Add Tool", "1.0.0")
    assert spec.timeout == pytest.approx(2.5)
    assert spec.examples[0].output == {"sum": 5}
    assert spec.meta["permissions"]["network"] is False


async def test_without_a_usable_deno_tools_are_unavailable_not_fatal(write_tool, tool_dir, kernel_for) -> None:
    write_tool("fine", "export function execute() { return 1 }")
    async with kernel_for([str(tool_dir)], deno="/nonexistent/deno") as kernel:
        spec = kernel.get_tool("fine")
        result = await kernel.call(toolmesh.contracts.ToolRequest(id="1", tool="fine"))
    assert spec is not None and not spec.available
    assert "cannot run Deno at /nonexistent/deno" in spec.unavailable_reason
    assert result.error is not None and result.error.code == "unavailable"
