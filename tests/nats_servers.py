"""Real ``nats-server`` processes with a configuration of the test's own (auth, TLS, clusters)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Self

from toolmesh._transport.broker import find_nats_server, port_is_open, stop_process

from tests.processes import free_port


class NatsServer:
    """``nats-server -c <config>`` on a free loopback port; ``config`` is the body after ``listen``."""

    def __init__(self, config: str = "", *, env: dict[str, str] | None = None, files: dict[str, str] | None = None,
                 port: int | None = None, workdir: Path | None = None) -> None:
        self.port = port or free_port()
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="toolmesh-test-nats-"))
        self._owns_workdir = workdir is None
        for name, text in (files or {}).items():
            (self.workdir / name).write_text(text, encoding="utf-8")
        self.config = self.workdir / "server.conf"
        self.config.write_text(
            f'listen: "127.0.0.1:{self.port}"\njetstream {{ store_dir: "{self.workdir / "js"}" }}\n{config}\n',
            encoding="utf-8",
        )
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> NatsServer:
        """Start the server and wait until it accepts TCP connections."""
        log = (self.workdir / "server.log").open("ab")
        self.process = subprocess.Popen(
            [str(find_nats_server()), "-c", str(self.config)], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env=self.env,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server exited: {self.log()[-2000:]}")
            if port_is_open("127.0.0.1", self.port):
                return self
            time.sleep(0.02)
        raise TimeoutError(f"nats-server did not listen on {self.port}: {self.log()[-2000:]}")

    def log(self) -> str:
        path = self.workdir / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 s."""
        if self.process is not None:
            stop_process(self.process, grace=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        if self._owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
