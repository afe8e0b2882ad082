"""Fixtures of the console tests: two real nodes (Python + Rune, sandbox), a console process, Chromium.

Chromium is Debian's package, driven by Playwright through ``executable_path``
(Playwright cannot download browsers here; ``.ci/run`` installs the package).
Screenshots of every page go to ``<basetemp>/console-screenshots``, printed at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.from_thread
import msgspec
import pytest
from toolmesh import Settings
from toolmesh.testing import eventually_sync, running_node, test_settings

from tests.processes import ROOT

TOOLS = Path(__file__).parent / "tools"
SCREENSHOT_DIR_NAME = "console-screenshots"
_screenshot_dirs: list[Path] = []


def chromium_path() -> str | None:
    """The system's Chromium, if installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class ConsoleProcess:
    """``toolmesh console`` in a child process, and the URL it printed."""

    process: subprocess.Popen[str]
    url: str
    token: str | None = None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()


def console_command(settings: Settings, *args: str) -> list[str]:
    """``python -m toolmesh console --port 0`` on the mesh of ``settings``, then ``args``."""
    assert settings.nats_url is not None
    return [
        sys.executable,
        "-m",
        "toolmesh",
        "console",
        "--nats",
        settings.nats_url,
        "--prefix",
        settings.prefix,
        "--port",
        "0",
        *args,
    ]


def spawn_toolmesh(command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``command`` in the repository, output piped as text, no console token unless ``env`` sets one."""
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TOOLMESH_CONSOLE_TOKEN": "", **(env or {})},
    )


def start_console(
    settings: Settings, *args: str, env: dict[str, str] | None = None, timeout: float = 20
) -> ConsoleProcess:
    """Start ``toolmesh console --port 0`` on the mesh of ``settings`` and wait for its URL."""
    process = spawn_toolmesh(console_command(settings, *args), env)
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            stderr = process.stderr.read() if process.stderr else ""
            raise RuntimeError(f"toolmesh console exited with {process.wait()}: {stderr}")
        if line.startswith("toolmesh console on "):
            return ConsoleProcess(process, line.removeprefix("toolmesh console on ").strip())
    process.kill()
    raise TimeoutError("toolmesh console did not print its URL")


@dataclass
class ConsoleMesh:
    """Two nodes serving the test tools, the settings to reach them, and the portal running them."""

    settings: Settings
    portal: Any
    nodes: dict[str, Any]


@pytest.fixture(scope="module")
def console_mesh(toolmesh_broker: Any) -> Iterator[ConsoleMesh]:
    """node-a serves Python and Rune tools, node-b a sandbox tool; both on a prefix of their own."""
    settings = test_settings(toolmesh_broker.url)
    settings = msgspec.structs.replace(settings, plugins={"sandbox": {"workers": 1, "max_idle": 1}})
    with anyio.from_thread.start_blocking_portal("asyncio") as portal:
        managers = {
            "node-a": portal.wrap_async_context_manager(
                running_node(
                    settings,
                    name="node-a",
                    sources=[str(TOOLS / "console_python_tools.py"), str(TOOLS / "scale.rn")],
                )
            ),
            "node-b": portal.wrap_async_context_manager(
                running_node(
                    settings,
                    name="node-b",
                    sources=[str(TOOLS / "shout.tool.json")],
                )
            ),
        }
        nodes = {name: manager.__enter__() for name, manager in managers.items()}
        try:
            yield ConsoleMesh(settings, portal, nodes)
        finally:
            for manager in managers.values():
                manager.__exit__(None, None, None)


@pytest.fixture(scope="module")
def console(console_mesh: ConsoleMesh) -> Iterator[ConsoleProcess]:
    """A console on the two nodes' mesh, once it lists all their tools."""
    started = start_console(console_mesh.settings)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module.

    Not per session: between its calls Playwright's sync API marks its event loop as running in the
    main thread, so while it lives no other test could start an event loop there (anyio.run refuses).
    """
    executable = chromium_path()
    if executable is None:
        message = "no system Chromium: apt-get install -y chromium (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI installs it: a missing browser there is a broken setup, not a reason to skip
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (own cookies) that fails the test on any script error."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.set_default_timeout(10_000)
    try:
        yield opened
    finally:
        context.close()
    assert not errors, f"script errors on the page: {errors}"


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests save screenshots of the pages (printed at the end of the run)."""
    folder = tmp_path_factory.getbasetemp() / SCREENSHOT_DIR_NAME
    folder.mkdir(exist_ok=True)
    _screenshot_dirs.append(folder)
    return folder


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for folder in _screenshot_dirs:
        terminalreporter.write_line(f"console screenshots: {folder}")


def wait_for_tools(page: Any, url: str, names: list[str]) -> None:
    """Reload the catalog until it lists every tool of ``names`` (nodes announce themselves each beat)."""

    def listed() -> bool:
        page.goto(url)
        return all(page.locator(f'#catalog tr[data-tool="{name}"]').count() for name in names)

    eventually_sync(listed, timeout=15, interval=0.3, what=f"the catalog listing {names}")
