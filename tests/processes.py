"""Start ``toolmesh`` command-line processes for tests and wait for them to be ready."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Self

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def toolmesh(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """Run one ``toolmesh`` command to completion."""
    return subprocess.run(
        [sys.executable, "-m", "toolmesh", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


class NodeProcess:
    """``toolmesh up ... --json`` in a child process."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "toolmesh", "up", *args, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
        )
        self.ready: dict[str, Any] = {}

    def wait_ready(self, timeout: float = 20) -> dict[str, Any]:
        """Block until the node prints its ``ready`` line; returns it."""
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                stderr = self.process.stderr.read() if self.process.stderr else ""
                raise RuntimeError(f"node exited with {self.process.wait()}: {stderr}")
            event = json.loads(line)
            if event["event"] == "ready":
                self.ready = event
                return event
        raise TimeoutError("node did not become ready")

    @property
    def name(self) -> str:
        return self.ready["node"]

    def terminate(self, timeout: float = 20) -> str:
        """SIGTERM (graceful drain); returns the rest of stdout."""
        self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=timeout)
        return out

    def kill(self) -> None:
        """SIGKILL: no drain, no goodbye."""
        self.process.kill()
        self.process.wait()

    def __enter__(self) -> Self:
        self.wait_ready()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
