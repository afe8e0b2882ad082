"""Traces across processes, metrics after a known sequence of calls, structured logs."""

from __future__ import annotations

import json
import logging
import urllib.request

import pytest

from tests.processes import NodeProcess, free_port, toolmesh
from toolmesh.logs import JsonFormatter, SecretRedactor, register_secret


def _spans(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_trace_spans_client_node_pipeline_and_nested_calls(toolmesh_broker, tmp_path):
    """A CLI call and the node serving it write spans to their own files that join into one trace."""
    node_file, client_file = tmp_path / "node.jsonl", tmp_path / "client.jsonl"
    prefix = f"o{free_port()}"
    with NodeProcess("examples/math_tools.py", "--nats", toolmesh_broker.url, "--prefix", prefix,
                     env={"TOOLMESH_TRACE_FILE": str(node_file)}) as node:
        done = toolmesh("call", "total", '{"values": [1, 2, 3]}', "--nats", toolmesh_broker.url,
                        "--prefix", prefix, env={"TOOLMESH_TRACE_FILE": str(client_file)})
        assert done.stdout.strip() == "6", done.stderr
        node.terminate()  # flushes the node's spans
    (client,) = [span for span in _spans(client_file) if span["kind"] == "CLIENT"]
    node_spans = _spans(node_file)
    assert client["name"] == "execute_tool total"
    assert client["attributes"]["gen_ai.tool.name"] == "total"
    assert {span["trace_id"] for span in node_spans} == {client["trace_id"]}
    by_id = {span["span_id"]: span for span in node_spans}
    (server,) = [span for span in node_spans if span["kind"] == "SERVER" and span["name"] == "execute_tool total"]
    assert server["parent_span_id"] == client["span_id"]
    assert server["attributes"]["messaging.operation.type"] == "process"
    steps = {span["name"] for span in node_spans if span["parent_span_id"] == server["span_id"]}
    assert {"toolmesh.decide total", "toolmesh.validate_arguments total", "toolmesh.execute total"} <= steps
    nested = [span for span in node_spans if span["name"] == "execute_tool add" and span["kind"] == "SERVER"]
    assert len(nested) == 3
    for span in nested:  # each nested call hangs under a client span inside total's execute step
        caller = by_id[span["parent_span_id"]]
        assert caller["kind"] == "CLIENT" and by_id[caller["parent_span_id"]]["name"] == "toolmesh.execute total"


def _metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{key}="{value}"' in line for key, value in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_prometheus_metrics_after_a_known_sequence(toolmesh_broker):
    """3 good calls, 1 invalid, 2 statistics calls (1 cache hit): the counters say exactly that."""
    port, prefix = free_port(), f"p{free_port()}"
    args = ("--nats", toolmesh_broker.url, "--prefix", prefix)
    with NodeProcess("examples/math_tools.py", *args, "--metrics-port", str(port)):
        for a in range(3):
            assert toolmesh("call", "add", "-a", f"a={a}", "-a", "b=1", *args).returncode == 0
        assert toolmesh("call", "add", "-a", "a=x", *args).returncode == 1
        for _ in range(2):
            assert toolmesh("call", "statistics", '{"values": [1, 2, 3]}', *args).returncode == 0
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert _metric(text, "toolmesh_calls_total", gen_ai_tool_name="add") == 4
    assert _metric(text, "toolmesh_errors_total", gen_ai_tool_name="add", error_type="invalid_arguments") == 1
    assert _metric(text, "toolmesh_calls_total", gen_ai_tool_name="statistics") == 2
    assert _metric(text, "toolmesh_cache_hits_total", gen_ai_tool_name="statistics") == 1
    assert _metric(text, "toolmesh_call_duration_milliseconds_count", gen_ai_tool_name="add") == 4
    assert _metric(text, "toolmesh_calls_in_flight", gen_ai_tool_name="add") == 0


def test_json_logs_carry_fields_and_redact_secrets():
    """JSON log lines keep extra fields and never contain a registered secret or a secret-named field."""
    register_secret("hunter2-very-secret")
    record = logging.makeLogRecord(
        {"name": "toolmesh.test", "levelno": logging.INFO, "levelname": "INFO",
         "msg": "connecting with %s", "args": ("hunter2-very-secret",), "tool": "add", "api_token": "abc123"}
    )
    assert SecretRedactor().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "connecting with ***"
    assert (line["tool"], line["api_token"], line["level"]) == ("add", "***", "info")
    assert "hunter2" not in json.dumps(line)


@pytest.mark.parametrize("command", [["events", "--help"], ["top", "--help"]])
def test_operator_commands_exist(command):
    """'toolmesh events' and 'toolmesh top' are available."""
    assert toolmesh(*command).returncode == 0


def test_events_command_tails_events_as_json(toolmesh_broker):
    """'toolmesh events --json' prints the started/finished events of a call."""
    import subprocess
    import sys

    from tests.processes import ROOT

    prefix = f"e{free_port()}"
    args = ("--nats", toolmesh_broker.url, "--prefix", prefix)
    with NodeProcess("examples/text_tools.py", *args):
        follower = subprocess.Popen(
            [sys.executable, "-m", "toolmesh", "events", "--tool", "echo", "-n", "2", "--json", *args],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )
        assert json.loads(follower.stdout.readline()) == {"event": "subscribed"}
        assert toolmesh("call", "echo", "-a", "message=hi", *args).returncode == 0
        out, _ = follower.communicate(timeout=20)
    events = [json.loads(line) for line in out.splitlines()]
    assert [event["kind"] for event in events] == ["started", "finished"]
    assert {event["tool"] for event in events} == {"echo"}


def test_bench_quick_writes_report_and_plots(tmp_path):
    """'toolmesh bench --quick' writes report.md with its three PNG plots."""
    done = toolmesh("bench", "--quick", "--out", str(tmp_path / "report"), "--json", timeout=240)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    folder = tmp_path / "report"
    report = (folder / "report.md").read_text()
    for plot in ("latency.png", "throughput.png", "scaling.png"):
        assert (folder / plot).read_bytes().startswith(b"\x89PNG")
        assert f"({plot})" in report
    assert set(summary["latency"]) == {"raw nats echo", "Mesh.call"}
    assert all(rate > 0 for rate in summary["throughput"]["Mesh.call"].values())
