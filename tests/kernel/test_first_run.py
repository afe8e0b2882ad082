"""A newcomer's first run: `toolmesh up examples/` starts clean, and a wrong --nats says what to do."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.processes import ROOT, NodeProcess, free_port, toolmesh


def test_up_examples_starts_without_a_warning(tmp_path: Path) -> None:
    """Every example tool is served; the one missing its secret is listed as unavailable, not warned about."""
    node = NodeProcess("examples/", "--port", "0", env={"TOOLMESH_STATE_DIR": str(tmp_path / "state")})
    try:
        ready = node.wait_ready(timeout=60)
    finally:
        node.process.send_signal(signal.SIGTERM)
        _, stderr = node.process.communicate(timeout=60)
    assert ready["problems"] == []
    assert {"add", "echo", "rune_word_count", "add_numbers", "signed_greeting"} <= set(ready["tools"])
    assert list(ready["unavailable"]) == ["signed_greeting"]
    assert "GREETING_KEY" in ready["unavailable"]["signed_greeting"]
    assert [line for line in stderr.splitlines() if "WARNING" in line or "warning:" in line] == []


def test_up_with_a_url_where_nothing_listens_says_what_to_do() -> None:
    """The advice is not 'start a mesh with toolmesh up' (the command that just failed): it names the two fixes."""
    url = f"nats://127.0.0.1:{free_port()}"
    run = toolmesh("up", "examples/math_tools.py", "--nats", url)
    assert run.returncode != 0
    assert f"cannot reach NATS at {url}" in run.stderr
    assert "start nats-server there" in run.stderr and "leave out --nats" in run.stderr
    assert "start a mesh with 'toolmesh up'" not in run.stderr


def test_a_client_where_nothing_listens_is_told_to_start_a_mesh() -> None:
    """A caller (not a node) is still told how to start one."""
    run = toolmesh("call", "add", "-a", "a=1", "-a", "b=2", "--nats", f"nats://127.0.0.1:{free_port()}")
    assert run.returncode != 0
    assert "start a mesh with 'toolmesh up'" in run.stderr


def test_up_prints_reasons_with_their_brackets(tmp_path: Path) -> None:
    """Text from tools reaches the screen as written: Rich markup does not eat `[sandbox]` in a reason."""
    process = subprocess.Popen(
        [sys.executable, "-m", "toolmesh", "up", "examples/sandbox/", "--port", "0"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=ROOT,
        env={**os.environ, "TOOLMESH_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "400"},
    )
    assert process.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line or "Ctrl-C drains and stops" in line:
                break
            lines.append(line)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    (listed,) = [line for line in lines if "signed_greeting" in line]
    assert "(unavailable: required secret(s) GREETING_KEY not set" in listed
    assert "[sandbox] secrets_file" in listed
