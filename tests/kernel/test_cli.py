"""The command line end to end: ``toolmesh up`` with an embedded broker, ``call``, ``tools``, ``plugins``."""

from __future__ import annotations

import json

import anyio
import pytest

from tests.processes import NodeProcess, free_port, toolmesh


@pytest.fixture(scope="module")
def embedded_node():
    """``toolmesh up examples/`` starting its own broker on a free port."""
    port = free_port()
    with NodeProcess("examples/", "--port", str(port)) as node:
        yield node, f"nats://127.0.0.1:{port}"


def test_up_starts_an_embedded_broker_and_serves_examples(embedded_node):
    """The ready line reports the embedded broker and the example tools."""
    node, url = embedded_node
    assert node.ready["embedded_broker"] is True
    assert node.ready["url"] == url
    assert {"add", "echo", "word_count"} <= set(node.ready["tools"])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["add", '{"a": 2, "b": 3}'], "5"),
        (["add", "-a", "a=2", "-a", "b=40"], "42"),
        (["echo", "-a", "message=hello world"], "hello world"),
        (["word_count", "-a", "text=one two three"], "3"),
    ],
)
def test_call_prints_the_result(embedded_node, args, expected):
    """Sync and async tools answer through the CLI."""
    _, url = embedded_node
    done = toolmesh("call", *args, "--nats", url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


def test_call_json_prints_the_whole_result(embedded_node):
    """--json prints the ToolResult with the public field names."""
    node, url = embedded_node
    done = toolmesh("call", "add", "-a", "a=1", "-a", "b=1", "--json", "--nats", url)
    result = json.loads(done.stdout)
    assert {"id", "tool", "is_error", "content", "structured_content", "error", "node"} <= set(result)
    assert (result["structured_content"], result["node"]) == (2, node.name)


def test_call_exits_non_zero_with_code_and_message_on_tool_error(embedded_node):
    """A failing tool makes 'call' exit 1 and print the error code and message."""
    _, url = embedded_node
    done = toolmesh("call", "divide", "-a", "a=1", "-a", "b=0", "--nats", url)
    assert done.returncode == 1
    assert "execution_failed" in done.stderr and "ZeroDivisionError" in done.stderr
    as_json = json.loads(toolmesh("call", "nope", "--json", "--nats", url).stdout)
    assert as_json["error"]["code"] == "unknown_tool"


def test_tools_lists_the_catalog(embedded_node):
    """'tools --json' lists every served tool with the node serving it."""
    node, url = embedded_node
    done = toolmesh("tools", "--json", "--nats", url)
    listing = {tool["name"]: tool for tool in json.loads(done.stdout)}
    assert listing["add"]["nodes"] == [node.name]
    assert listing["add"]["input_schema"]["properties"]["a"]["type"] == "integer"
    human = toolmesh("tools", "--nats", url)
    assert "add" in human.stdout and human.returncode == 0


def test_second_up_joins_the_running_broker(embedded_node):
    """A second 'toolmesh up' on the same port joins the broker instead of failing, and shares load."""
    _, url = embedded_node
    port = url.rsplit(":", 1)[1]
    with NodeProcess("examples/text_tools.py", "--port", port) as second:
        assert second.ready["embedded_broker"] is False
        nodes = {json.loads(toolmesh("call", "echo", "-a", "message=x", "--json", "--nats", url).stdout)["node"]
                 for _ in range(12)}
    assert second.name in nodes and len(nodes) == 2


def test_unreachable_broker_gives_one_clear_line():
    """No NATS at the URL: exit 2, one line that says what to do, no traceback."""
    done = toolmesh("call", "add", "--nats", f"nats://127.0.0.1:{free_port()}")
    assert done.returncode == 2
    assert "cannot reach NATS" in done.stderr and "toolmesh up" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_arguments_json_is_reported():
    """Arguments that are not a JSON object are refused before connecting."""
    done = toolmesh("call", "add", "[1, 2]")
    assert done.returncode == 2 and "JSON object" in done.stderr


def test_unknown_source_is_reported():
    """'toolmesh up' with a source no plugin serves exits 1 naming it."""
    done = toolmesh("up", "no/such/path.txt", "--port", str(free_port()))
    assert done.returncode == 1 and "no/such/path.txt" in done.stderr


def test_plugins_and_version():
    """'plugins --json' lists first-party plugins and defaults; '--version' prints it."""
    plugins = {plugin["name"] for plugin in json.loads(toolmesh("plugins", "--json").stdout)}
    assert {"python", "toolmesh.default_validation", "toolmesh.memory_cache"} <= plugins
    assert toolmesh("--version").stdout.startswith("toolmesh ")


def test_ctrl_c_to_the_terminal_group_drains_before_the_embedded_broker_stops():
    """SIGINT to the node's whole process group (as a terminal's Ctrl-C does) still finishes accepted calls."""
    import os
    import signal
    import subprocess
    import sys
    import threading

    import nats
    from toolmesh._config import Settings
    from toolmesh._transport.nats_auth import connect_options

    from tests.processes import ROOT

    port = free_port()
    node = subprocess.Popen(
        [sys.executable, "-m", "toolmesh", "up", "examples/slow_tools.py", "--port", str(port), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, start_new_session=True,
    )
    url = f"nats://127.0.0.1:{port}"

    async def wait_until_the_node_started_the_call(caller: threading.Thread) -> None:
        # The caller is a fresh interpreter; Ctrl-C must arrive after the node accepted its call.
        # The embedded broker admits holders of the local credentials only (toolmesh._transport.broker_state).
        nc = await nats.connect(url, **connect_options(Settings(nats_url=url)))
        try:
            started = await nc.subscribe("tool.event.started.sleep", max_msgs=1)
            caller.start()
            await started.next_msg(timeout=30)
        finally:
            await nc.close()

    try:
        assert json.loads(node.stdout.readline())["event"] == "ready"
        results: list[subprocess.CompletedProcess[str]] = []
        caller = threading.Thread(
            target=lambda: results.append(toolmesh("call", "sleep", "-a", "seconds=1.0", "--json", "--nats", url))
        )
        anyio.run(wait_until_the_node_started_the_call, caller)
        os.killpg(node.pid, signal.SIGINT)
        caller.join(timeout=30)
        out, _ = node.communicate(timeout=30)
    finally:
        if node.poll() is None:
            node.kill()
    assert json.loads(results[0].stdout)["structured_content"] == 1.0
    assert node.returncode == 0 and '"event": "stopped"' in out


def test_error_paths_with_brackets_print_verbatim(embedded_node):
    """A JSON path such as $.values[0] reaches the terminal unchanged (no markup eaten)."""
    _, url = embedded_node
    done = toolmesh("call", "statistics", '{"values": ["x"]}', "--nats", url)
    assert done.returncode == 1
    assert "invalid_arguments" in done.stderr and "$.values[0]" in done.stderr


@pytest.mark.parametrize(
    ("argv", "kernel_only"),
    [
        (["call", "add"], True),
        (["--version"], True),
        (["up", "examples/"], True),
        (["rune", "run", "x.rn"], False),
        (["mcp", "serve", "--stdio"], False),
        (["--help"], False),
        ([], False),
    ],
)
def test_plugin_commands_load_only_when_the_command_line_may_need_them(argv: list[str], kernel_only: bool):
    """A kernel command skips importing every plugin for its commands; anything else (help included) loads them."""
    from toolmesh._cli.commands import _names_a_kernel_command

    assert _names_a_kernel_command(argv) is kernel_only


def test_help_lists_the_plugins_commands():
    """'toolmesh --help' shows the commands plugins add."""
    shown = toolmesh("--help").stdout
    assert all(name in shown for name in ("rune", "mcp", "crew", "sandbox"))
