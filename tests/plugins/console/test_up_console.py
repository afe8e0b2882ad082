"""``toolmesh up --console``: a node and its console in one process; stopping the node stops the console."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request
import uuid

from toolmesh.testing import eventually_sync

from .conftest import TOOLS, spawn_toolmesh
from .test_console_access import fetch


def up_with_console(
    url: str, *sources: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``toolmesh up SOURCES --console --console-port 0 --json`` and the console URL it printed."""
    command = [
        sys.executable,
        "-m",
        "toolmesh",
        "up",
        *sources,
        "--nats",
        url,
        "--prefix",
        f"t{uuid.uuid4().hex[:12]}",
    ]
    command += ["--name", "node-up", "--console", "--console-port", "0", "--json"]
    process = spawn_toolmesh(command, env)
    assert process.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            process.wait()
            raise AssertionError(process.stderr.read() if process.stderr else "toolmesh up exited")
        event = json.loads(line)
        if event["event"] == "console":
            return process, event["url"]
    process.kill()
    raise TimeoutError("toolmesh up --console printed no console URL")


def test_up_serves_its_console_and_stops_it_on_drain(toolmesh_broker) -> None:
    process, url = up_with_console(toolmesh_broker.url, str(TOOLS / "scale.rn"))
    try:

        def catalog() -> str:
            with urllib.request.urlopen(url, timeout=5) as answer:
                return answer.read().decode()

        deadline = time.monotonic() + 10
        while 'data-tool="rune_scale"' not in catalog():
            assert time.monotonic() < deadline, "the console never listed the node's tool"
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
        assert process.returncode == 0
        assert '"event": "stopped"' in out
        try:
            urllib.request.urlopen(url, timeout=2)
        except OSError:
            pass  # the console is gone with its node
        else:
            raise AssertionError("the console still answers after its node stopped")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_console_call_links_to_its_trace_and_the_node_joins_it(toolmesh_broker, tmp_path) -> None:
    traces = tmp_path / "spans.jsonl"
    process, url = up_with_console(
        toolmesh_broker.url,
        str(TOOLS / "scale.rn"),
        env={
            "TOOLMESH_TRACE_FILE": str(traces),
            "TOOLMESH_CONSOLE_TRACE_URL": "https://traces.example/t/{trace_id}",
        },
    )
    try:
        eventually_sync(lambda: fetch(url + "tools/rune_scale")[0] == 200, timeout=10)
        csrf = re.search(r'name="csrf-token" content="([^"]+)"', fetch(url)[2]).group(1)
        status, _, text = fetch(
            url + "api/tools/rune_scale/calls",
            method="POST",
            body={"arguments": {"x": 2, "factor": 3}},
            headers={"X-Console-CSRF": csrf},
        )
        assert status == 202
        call_id = json.loads(text)["id"]
        state = eventually_sync(
            lambda: (
                (found := json.loads(fetch(f"{url}api/calls/{call_id}")[2]))["status"] != "running" and found
            ),
            timeout=10,
        )
        assert state["result"]["structured_content"] == 6 and state["trace_id"]
        page = eventually_sync(
            lambda: (detail := fetch(f"{url}calls/{call_id}")[2]) and "traces.example" in detail and detail,
            timeout=5,
        )
        assert f"https://traces.example/t/{state['trace_id']}" in page
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    spans = [json.loads(line) for line in traces.read_text().splitlines() if line.strip()]
    assert any(state["trace_id"] in json.dumps(span) and "rune_scale" in json.dumps(span) for span in spans)
