"""A traced call of a code tool shows the round trip to Deno and the phases Deno timed itself."""

from __future__ import annotations

import json

from tests.processes import NodeProcess, free_port, toolmesh

from .conftest import document

SLOW_DOUBLE = "export async function execute(i) { await new Promise(r => setTimeout(r, 30)); return i.n * 2 }"
TOLERANCE_NS = 5_000_000  # Deno's and Python's wall clocks, read in two processes


def test_a_code_tool_call_has_its_deno_phases_as_child_spans(toolmesh_broker, tool_dir, tmp_path) -> None:
    (tool_dir / "double.tool.json").write_text(json.dumps(document("double", SLOW_DOUBLE)), encoding="utf-8")
    spans_file = tmp_path / "node.jsonl"
    prefix = f"d{free_port()}"
    args = ("--nats", toolmesh_broker.url, "--prefix", prefix)
    with NodeProcess(str(tool_dir), *args, env={"TOOLMESH_TRACE_FILE": str(spans_file),
                                                "TOOLMESH_PLUGINS": "sandbox"}) as node:
        done = toolmesh("call", "double", '{"n": 21}', *args)
        assert done.stdout.strip() == "42", done.stderr
        node.terminate()  # flushes the node's spans
    spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    by_name = {span["name"]: span for span in spans}
    server = by_name["execute_tool double"]
    sandbox_call = by_name["toolmesh.sandbox.call double"]
    isolate, run = by_name["deno.isolate double"], by_name["deno.run double"]
    assert sandbox_call["parent_span_id"] == server["span_id"]
    assert isolate["parent_span_id"] == run["parent_span_id"] == sandbox_call["span_id"]
    assert {span["trace_id"] for span in (server, sandbox_call, isolate, run)} == {server["trace_id"]}
    assert isolate["attributes"]["toolmesh.sandbox.warm_isolate"] is True  # loading left one isolate idle
    assert server["start"] <= sandbox_call["start"] <= sandbox_call["end"] <= server["end"]
    for phase in (isolate, run):
        assert sandbox_call["start"] - TOLERANCE_NS <= phase["start"] <= phase["end"]
        assert phase["end"] <= sandbox_call["end"] + TOLERANCE_NS
    assert isolate["end"] <= run["start"] + TOLERANCE_NS
    assert run["end"] - run["start"] >= 25_000_000  # the tool's own 30 ms wait happened inside the run span
