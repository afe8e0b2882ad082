"""Real MCP peers for the tests: the fixture MCP server and ``toolmesh mcp serve`` in child processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Self

import anyio
import msgspec
from toolmesh import Mesh, Settings
from toolmesh._transport.broker import stop_process

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
FIXTURE_SERVER = str(HERE / "fixture_server.py")


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen[Any] | None = None, timeout: float = 20.0) -> None:
    """Block until something accepts connections on loopback ``port``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening on {port}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


def with_servers(settings: Settings, **servers: dict[str, Any]) -> Settings:
    """``settings`` with ``[mcp.servers.NAME]`` tables."""
    return msgspec.structs.replace(settings, plugins={"mcp": {"servers": servers}})


def stdio_fixture(*flags: str, **options: Any) -> dict[str, Any]:
    """A ``[mcp.servers.NAME]`` table starting the fixture server over stdio."""
    return {"command": sys.executable, "args": [FIXTURE_SERVER, *flags], **options}


class HttpFixtureServer:
    """The fixture MCP server on Streamable HTTP in a child process."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> HttpFixtureServer:
        self.process = subprocess.Popen(
            [sys.executable, FIXTURE_SERVER, "--http", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process)
        return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def gateway_command(settings: Settings, *args: str) -> list[str]:
    """The command line of ``toolmesh mcp serve`` for the mesh of ``settings``."""
    assert settings.nats_url is not None
    return [
        sys.executable,
        "-m",
        "toolmesh.plugins.mcp",
        "serve",
        "--nats",
        settings.nats_url,
        "--prefix",
        settings.prefix,
        *args,
    ]


class HttpGateway:
    """``toolmesh mcp serve --http`` in a child process."""

    def __init__(self, settings: Settings, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            gateway_command(settings, "--http", f"127.0.0.1:{self.port}", *args),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def __aenter__(self) -> Self:
        # In a thread: a node served by the same event loop must keep its heartbeats going meanwhile.
        await anyio.to_thread.run_sync(wait_for_port, self.port, self.process)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await anyio.to_thread.run_sync(self.stop)

    def stop(self) -> None:
        """Terminate the gateway (kill it after 10 s)."""
        stop_process(self.process, grace=10)
        if self.process.stderr:
            self.process.stderr.close()


class NodeProcess:
    """``toolmesh up SOURCES`` in a child process, joined to the mesh of ``settings``."""

    def __init__(self, settings: Settings, *sources: str, ready_tool: str) -> None:
        assert settings.nats_url is not None
        self.settings = settings
        self.ready_tool = ready_tool
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process, closed in stop()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolmesh",
                "up",
                *sources,
                "--nats",
                settings.nats_url,
                "--prefix",
                settings.prefix,
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            cwd=ROOT,
        )

    async def __aenter__(self) -> Self:
        """Wait until the mesh catalog lists ``ready_tool``: the node has started and announced its tools."""
        async with Mesh(settings=self.settings) as mesh:
            with anyio.move_on_after(30):
                while self.process.poll() is None:
                    if any(spec.name == self.ready_tool for spec in await mesh.list_tools()):
                        return self
                    await anyio.sleep(0.1)
        self.log.seek(0)
        raise RuntimeError(f"toolmesh up never served {self.ready_tool!r}: {self.log.read()[-2000:]!r}")

    async def __aexit__(self, *exc_info: object) -> None:
        await anyio.to_thread.run_sync(self.stop)

    def stop(self) -> None:
        """Terminate the node (kill it after 10 s)."""
        stop_process(self.process, grace=10)
        self.log.close()
