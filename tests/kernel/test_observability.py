"""Traces across processes, metrics after a known sequence of calls (Prometheus and OTLP), structured logs."""

from __future__ import annotations

import contextvars
import http.server
import json
import logging
import signal
import subprocess
import sys
import threading
import urllib.request

import pytest
from toolmesh._telemetry.logs import (
    JsonFormatter,
    RedactingFormatter,
    SecretRedactor,
    hide_call_secrets,
    register_secret,
)

from tests.processes import ROOT, NodeProcess, free_port, toolmesh


def _spans(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_trace_spans_client_node_pipeline_and_nested_calls(toolmesh_broker, tmp_path):
    """A CLI call and the node serving it write spans to their own files that join into one trace."""
    node_file, client_file = tmp_path / "node.jsonl", tmp_path / "client.jsonl"
    prefix = f"o{free_port()}"
    with NodeProcess("examples/math_tools.py", "--nats", toolmesh_broker.url, "--prefix", prefix,
                     env={"TOOLMESH_TRACE_FILE": str(node_file), "TOOLMESH_TRACE_STEPS": "1"}) as node:
        done = toolmesh("call", "total", '{"values": [1, 2, 3]}', "--nats", toolmesh_broker.url,
                        "--prefix", prefix, env={"TOOLMESH_TRACE_FILE": str(client_file)})
        assert done.stdout.strip() == "6", done.stderr
        node.terminate()  # flushes the node's spans
    (client,) = [span for span in _spans(client_file) if span["kind"] == "CLIENT"]
    node_spans = _spans(node_file)
    assert client["name"] == "execute_tool total"
    assert client["attributes"] == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "total",
        "gen_ai.tool.call.id": client["attributes"]["gen_ai.tool.call.id"],
        "messaging.system": "nats", "messaging.operation.type": "send", "messaging.operation.name": "send",
        "messaging.destination.name": f"{prefix}.request.total",
    }
    assert {span["trace_id"] for span in node_spans} == {client["trace_id"]}
    by_id = {span["span_id"]: span for span in node_spans}
    (server,) = [span for span in node_spans if span["kind"] == "SERVER" and span["name"] == "execute_tool total"]
    assert server["parent_span_id"] == client["span_id"]
    assert server["attributes"]["gen_ai.tool.call.id"] == client["attributes"]["gen_ai.tool.call.id"]
    assert server["attributes"]["messaging.operation.type"] == "process"
    assert server["attributes"]["messaging.consumer.group.name"] == "toolmesh"
    assert server["attributes"]["messaging.destination.name"] == f"{prefix}.request.total"
    assert server["attributes"]["toolmesh.node"] == node.name
    steps = {span["name"]: span for span in node_spans if span["parent_span_id"] == server["span_id"]}
    assert {"toolmesh.decide total", "toolmesh.validate_arguments total", "toolmesh.execute total"} <= set(steps)
    assert steps["toolmesh.execute total"]["attributes"]["toolmesh.tool.source"] == "python"  # the plugin
    nested = [span for span in node_spans if span["name"] == "execute_tool add" and span["kind"] == "SERVER"]
    assert len(nested) == 3
    for span in nested:  # each nested call hangs under a client span inside total's execute step
        caller = by_id[span["parent_span_id"]]
        assert caller["kind"] == "CLIENT" and by_id[caller["parent_span_id"]]["name"] == "toolmesh.execute total"


SECRET_TOOL = """
from typing import Annotated

import msgspec
import toolmesh


@toolmesh.tool
def connect(user: str, api_key: Annotated[str, msgspec.Meta(extra_json_schema={"writeOnly": True})]) -> str:
    \"\"\"Fail the way careless code does: quoting the key in the exception.\"\"\"
    raise ConnectionError(f"upstream refused {user} with key {api_key}")
"""


def test_default_trace_logs_and_failures(toolmesh_broker, tmp_path):
    """Without step spans a call is two spans; a failure marks both; the node's JSON log of it carries its trace id.

    The failing tool quotes its secret argument in its exception: the log line
    and the spans must not contain it.
    """
    (tmp_path / "secret_tools.py").write_text(SECRET_TOOL)
    node_file, client_file = tmp_path / "node.jsonl", tmp_path / "client.jsonl"
    secret = "sk-live-0123456789abcdef"
    prefix = f"d{free_port()}"
    args = ("--nats", toolmesh_broker.url, "--prefix", prefix)
    with NodeProcess("examples/math_tools.py", str(tmp_path / "secret_tools.py"), *args, "--log-format", "json",
                     env={"TOOLMESH_TRACE_FILE": str(node_file)}) as node:
        failed = toolmesh("call", "connect", "-a", "user=ada", "-a", f"api_key={secret}", *args,
                          env={"TOOLMESH_TRACE_FILE": str(client_file)})
        assert failed.returncode == 1, failed.stderr
        assert toolmesh("call", "total", '{"values": [1, 2]}', *args).returncode == 0
        node.process.send_signal(signal.SIGTERM)  # drains, flushing the node's spans
        _, stderr = node.process.communicate(timeout=20)
    log_lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    (client,) = _spans(client_file)
    assert (client["status"], client["attributes"]["error.type"]) == ("ERROR", "execution_failed")
    node_spans = _spans(node_file)
    assert not [span for span in node_spans if span["name"].startswith("toolmesh.")]  # no step spans by default
    (server,) = [span for span in node_spans if span["trace_id"] == client["trace_id"]]
    assert (server["status"], server["attributes"]["error.type"]) == ("ERROR", "execution_failed")
    (logged,) = [line for line in log_lines if line["message"] == "tool connect failed"]
    assert (logged["trace_id"], logged["span_id"]) == (server["trace_id"], server["span_id"])
    assert "ConnectionError: upstream refused ada with key ***" in logged["exception"]
    assert secret not in node_file.read_text() + client_file.read_text() + json.dumps(log_lines)
    # Nested calls hang straight under the calling tool's SERVER span
    (total,) = [span for span in node_spans if span["name"] == "execute_tool total"]
    nested_clients = [span for span in node_spans if span["kind"] == "CLIENT"]
    assert len(nested_clients) == 2 and {span["parent_span_id"] for span in nested_clients} == {total["span_id"]}


def test_durable_call_keeps_one_trace(toolmesh_broker, tmp_path):
    """Through the JetStream work queue too, the node's span hangs under the caller's."""
    node_file, client_file = tmp_path / "node.jsonl", tmp_path / "client.jsonl"
    args = ("--nats", toolmesh_broker.url, "--prefix", f"j{free_port()}")
    with NodeProcess("examples/math_tools.py", *args, env={"TOOLMESH_TRACE_FILE": str(node_file)}) as node:
        done = toolmesh("call", "add", "-a", "a=1", "-a", "b=2", "--durable", *args,
                        env={"TOOLMESH_TRACE_FILE": str(client_file)})
        assert done.stdout.strip() == "3", done.stderr
        node.terminate()
    (client,) = _spans(client_file)
    (server,) = _spans(node_file)
    assert (client["kind"], server["kind"]) == ("CLIENT", "SERVER")
    assert (server["trace_id"], server["parent_span_id"]) == (client["trace_id"], client["span_id"])
    assert client["attributes"]["messaging.destination.name"].endswith(".durable.add")


def test_an_mcp_server_call_joins_the_trace(toolmesh_broker, tmp_path):
    """A tool served by an MCP server: the MCP SDK's client span hangs under the node's span, in the caller's trace."""
    config = tmp_path / "toolmesh.toml"
    server = ROOT / "tests" / "plugins" / "mcp" / "fixture_server.py"
    config.write_text(f"[mcp.servers.fx]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(server))}]\n")
    node_file, client_file = tmp_path / "node.jsonl", tmp_path / "client.jsonl"
    args = ("--nats", toolmesh_broker.url, "--prefix", f"m{free_port()}")
    with NodeProcess(*args, env={"TOOLMESH_TRACE_FILE": str(node_file), "TOOLMESH_CONFIG": str(config)}) as node:
        done = toolmesh("call", "fx_add", "-a", "a=2", "-a", "b=3", *args, env={"TOOLMESH_TRACE_FILE": str(client_file)})
        assert done.returncode == 0, done.stderr
        node.terminate()
    (client,) = _spans(client_file)
    in_trace = {span["name"]: span for span in _spans(node_file) if span["trace_id"] == client["trace_id"]}
    assert in_trace["execute_tool fx_add"]["parent_span_id"] == client["span_id"]
    mcp_call = in_trace["MCP send tools/call add"]
    assert (mcp_call["kind"], mcp_call["parent_span_id"]) == ("CLIENT", in_trace["execute_tool fx_add"]["span_id"])


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
    with NodeProcess("examples/math_tools.py", *args, "--metrics-port", str(port)) as node:
        for a in range(3):
            assert toolmesh("call", "add", "-a", f"a={a}", "-a", "b=1", *args).returncode == 0
        assert toolmesh("call", "add", "-a", "a=x", *args).returncode == 1
        for _ in range(2):
            assert toolmesh("call", "statistics", '{"values": [1, 2, 3]}', *args).returncode == 0
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert _metric(text, "toolmesh_calls_total", gen_ai_tool_name="add", toolmesh_node=node.name) == 4
    assert _metric(text, "toolmesh_errors_total", gen_ai_tool_name="add", error_type="invalid_arguments") == 1
    assert _metric(text, "toolmesh_calls_total", gen_ai_tool_name="statistics") == 2
    assert _metric(text, "toolmesh_cache_hits_total", gen_ai_tool_name="statistics") == 1
    assert _metric(text, "toolmesh_call_duration_milliseconds_count", gen_ai_tool_name="add") == 4
    assert _metric(text, "toolmesh_calls_in_flight", gen_ai_tool_name="add") == 0


class _OtlpReceiver(http.server.ThreadingHTTPServer):
    """A stand-in OpenTelemetry collector: keeps every OTLP/HTTP protobuf body it is sent, by path."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[bytes]] = {}
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.bodies.setdefault(self.path, []).append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


def test_otlp_export_from_the_standard_environment(toolmesh_broker):
    """OTEL_EXPORTER_OTLP_ENDPOINT alone makes a node send its spans and metrics over OTLP/HTTP."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    receiver = _OtlpReceiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    prefix = f"x{free_port()}"
    args = ("--nats", toolmesh_broker.url, "--prefix", prefix)
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_address[1]}",
           "OTEL_METRIC_EXPORT_INTERVAL": "500", "OTEL_SERVICE_NAME": "node-under-test"}
    try:
        with NodeProcess("examples/math_tools.py", *args, env=env) as node:
            for a in range(2):
                assert toolmesh("call", "add", "-a", f"a={a}", "-a", "b=1", *args).returncode == 0
            node.terminate()  # shuts the SDK down, which flushes both exporters
    finally:
        receiver.shutdown()
        receiver.server_close()
    spans = [span for body in receiver.bodies["/v1/traces"]
             for resource in ExportTraceServiceRequest.FromString(body).resource_spans
             for scope in resource.scope_spans for span in scope.spans]
    assert [span.name for span in spans] == ["execute_tool add"] * 2
    calls = {}  # cumulative sums: the last export holds the totals
    for body in receiver.bodies["/v1/metrics"]:
        for resource in ExportMetricsServiceRequest.FromString(body).resource_metrics:
            assert {kv.key: kv.value.string_value for kv in resource.resource.attributes}["service.name"] == "node-under-test"
            for metric in (m for scope in resource.scope_metrics for m in scope.metrics if m.name == "toolmesh.calls"):
                for point in metric.sum.data_points:
                    labels = {kv.key: kv.value.string_value for kv in point.attributes}
                    calls[(labels["gen_ai.tool.name"], labels["toolmesh.node"])] = point.as_int
    assert calls == {("add", node.name): 2}


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


def test_tracebacks_hide_the_call_secret_arguments_in_both_formats():
    """An exception quoting a writeOnly argument is logged with *** in text and JSON alike."""

    class Spec:
        def __init__(self) -> None:
            self.input_schema = {"properties": {"user": {"type": "string"}, "key": {"type": "string", "writeOnly": True}}}

    def log_failure() -> list[str]:
        hide_call_secrets(Spec(), {"user": "ada", "key": "pa55-w0rd-xyz"})
        try:
            raise ConnectionError("refused ada with pa55-w0rd-xyz")
        except ConnectionError:
            record = logging.makeLogRecord({"name": "toolmesh.test", "levelno": logging.ERROR, "levelname": "ERROR",
                                            "msg": "tool %s failed", "args": ("connect",), "exc_info": sys.exc_info()})
        SecretRedactor().filter(record)
        return [RedactingFormatter("%(message)s").format(record), JsonFormatter().format(record)]

    text, line = contextvars.copy_context().run(log_failure)  # the secrets stay with that context
    assert "ConnectionError: refused ada with ***" in text
    assert "ConnectionError: refused ada with ***" in json.loads(line)["exception"]
    assert "pa55" not in text + line


@pytest.mark.parametrize("command", [["events", "--help"], ["top", "--help"]])
def test_operator_commands_exist(command):
    """'toolmesh events' and 'toolmesh top' are available."""
    assert toolmesh(*command).returncode == 0


def test_events_command_tails_events_as_json_and_text(toolmesh_broker):
    """'toolmesh events --tool echo' prints the started/finished events of a call, as JSON lines or as text."""
    prefix = f"e{free_port()}"
    args = ("--nats", toolmesh_broker.url, "--prefix", prefix)
    with NodeProcess("examples/text_tools.py", *args) as node:
        followers = [
            subprocess.Popen([sys.executable, "-m", "toolmesh", "events", "--tool", "echo", "-n", "2", *extra, *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
            for extra in (["--json"], [])
        ]
        assert json.loads(followers[0].stdout.readline()) == {"event": "subscribed"}
        assert "watching tool events" in followers[1].stderr.readline()
        assert toolmesh("call", "shout", "-a", "text=x", *args).returncode == 0  # another tool: filtered out
        assert toolmesh("call", "echo", "-a", "message=hi", *args).returncode == 0
        (as_json, _), (as_text, _) = (follower.communicate(timeout=20) for follower in followers)
    events = [json.loads(line) for line in as_json.splitlines()]
    assert [event["kind"] for event in events] == ["started", "finished"]
    assert {event["tool"] for event in events} == {"echo"}
    lines = [line.split()[1:4] for line in as_text.splitlines()]
    assert lines[0] == ["started", "echo", f"[{node.name}]"]
    assert lines[1][:3] == ["finished", "echo", f"[{node.name}]"]


def test_bench_quick_writes_report_and_plots(tmp_path):
    """'toolmesh bench --quick --scripts DIR' writes report.md with its three PNG plots and a section per script."""
    scripts = tmp_path / "bench"
    scripts.mkdir()
    (scripts / "ratio_table.py").write_text('if __name__ == "__main__":\n    print("| series | ratio |")\n')
    (scripts / "shared_tools.py").write_text("def spin(n): return n\n")  # a helper module, not a script
    done = toolmesh("bench", "--quick", "--out", str(tmp_path / "report"), "--scripts", str(scripts), "--json",
                    timeout=240)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    folder = tmp_path / "report"
    report = (folder / "report.md").read_text()
    for plot in ("latency.png", "throughput.png", "scaling.png"):
        assert (folder / plot).read_bytes().startswith(b"\x89PNG")
        assert f"({plot})" in report
    assert set(summary["latency"]) == {"raw nats echo", "Mesh.call"}
    assert all(rate > 0 for rate in summary["throughput"]["Mesh.call"].values())
    assert [(run["script"], run["returncode"]) for run in summary["scripts"]] == [("ratio_table.py", 0)]
    assert "## bench/ratio_table.py" in report and "| series | ratio |" in report
