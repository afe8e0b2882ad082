"""``BrokerKeeper``: a node's side of the embedded broker — start or join it, and bring it back.

Every node configured without a NATS URL shares one embedded broker per port.
The node holding the port's claim (``toolmesh._transport.broker_state.BrokerClaim``) runs
it; the others join. The keeper then watches:

* the running node waits on the broker process itself (a pidfd on Linux), so
  it learns of the broker's death at once, reaps it, and starts it again on
  the same port with the same store;
* a joined node, on losing its connection, finds the port silent when the
  running node died with its broker: whichever node takes the claim first
  starts a new broker on the same port and store, and the others reconnect.

Queued durable calls survive because the JetStream store lives in the state
directory, not in a temporary one. A broker that cannot be brought back within
:data:`RESTORE_TIMEOUT` (or that keeps dying) stops the node with a
``BrokerError``, so ``toolmesh up`` exits non-zero instead of idling.
"""

from __future__ import annotations

import logging
import socket
import time
from collections import deque
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
import msgspec
from toolmesh._errors import BrokerError
from toolmesh._transport.broker import EmbeddedBroker, broker_max_payload, nats_reachable
from toolmesh._transport.broker_state import BrokerClaim, LocalCredentials, state_dir

if TYPE_CHECKING:
    from toolmesh._config import Settings

__all__ = ["MAX_RESTARTS", "RESTART_WINDOW", "RESTORE_TIMEOUT", "BrokerKeeper"]

RESTORE_TIMEOUT = 30.0
"""Seconds a node tries to get the embedded broker back before it gives up and exits."""

MAX_RESTARTS = 5
"""Broker deaths within :data:`RESTART_WINDOW` after which a node stops restarting it (it keeps crashing)."""

RESTART_WINDOW = 60.0

_RETRY = 0.1

_log = logging.getLogger("toolmesh.broker")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class BrokerKeeper:
    """Start or join the embedded broker of ``settings.port`` and keep it running while the node serves."""

    def __init__(self, settings: Settings) -> None:
        # Port 0 asks for a free port: pick it now, so a restart reuses it and others can find it.
        self.port = settings.port or _free_port()
        self.settings = settings if settings.port else msgspec.structs.replace(settings, port=self.port)
        self.url = f"nats://127.0.0.1:{self.port}"
        self.directory = state_dir(settings)
        self.claim = BrokerClaim(self.directory, self.port)
        self.credentials: LocalCredentials | None = None
        self.broker: EmbeddedBroker | None = None
        self._lost = anyio.Event()
        self._closing = False
        self._deaths: deque[float] = deque(maxlen=MAX_RESTARTS)

    async def open(self) -> str:
        """Make sure the broker runs (starting it when this node gets the claim); returns its URL."""
        self.credentials = LocalCredentials.load_or_create(self.directory)
        await self._restore(reason="start")
        return self.url

    def connection_lost(self) -> None:
        """Tell the keeper the node's NATS connection dropped (``disconnected_cb``)."""
        self._lost.set()

    async def watch(self) -> None:
        """Run beside the node: restart the broker it runs, take over one that vanished."""
        while not self._closing:
            if self.broker is not None:
                broker = self.broker
                status = await broker.wait_exited()
                if self._closing:
                    return
                self._record_death(status, broker)
            else:
                await self._lost.wait()
                self._lost = anyio.Event()
                if self._closing:
                    return
            await self._restore(reason="restore")

    def _record_death(self, status: int, broker: EmbeddedBroker) -> None:
        now = time.monotonic()
        self._deaths.append(now)
        _log.warning(
            "embedded broker (pid %s) on port %s exited with status %s; restarting it with the store in %s",
            broker.pid, self.port, status, self.claim.store,
        )
        if len(self._deaths) == MAX_RESTARTS and now - self._deaths[0] < RESTART_WINDOW:
            raise BrokerError(
                f"the embedded broker on port {self.port} died {MAX_RESTARTS} times within {RESTART_WINDOW:g}s;"
                f" see its log {broker.log_path} (a full disk or a foreign process on the port?)"
            )

    async def _restore(self, *, reason: str) -> None:
        # Until the port answers: serve it ourselves when we can take the claim, else wait for
        # whoever holds it (a node starting its broker, or a dying broker still flushing its store).
        deadline = time.monotonic() + RESTORE_TIMEOUT
        problem = "another process holds the broker's claim and nothing listens on the port"
        while not self._closing:
            if await nats_reachable(self.url, timeout=0.5):
                if reason != "start":
                    _log.info("embedded broker on port %s is back; reconnecting", self.port)
                return
            if self.claim.acquire():
                try:
                    await self._launch(reason)
                    return
                except BrokerError as exc:  # e.g. the port still held by a broker shutting down
                    problem = str(exc)
            if time.monotonic() > deadline:
                self.claim.release()
                raise BrokerError(
                    f"no embedded broker on 127.0.0.1:{self.port} and none could be started within"
                    f" {RESTORE_TIMEOUT:g}s ({problem}); stop whatever uses the port or pick another with --port"
                )
            await anyio.sleep(_RETRY)

    async def _launch(self, reason: str) -> None:
        assert self.credentials is not None
        broker = EmbeddedBroker(
            self.port,
            max_payload=broker_max_payload(self.settings.max_payload),
            token=self.credentials.token,
            store_dir=self.claim.store,
            inherit_fd=self.claim.fd,  # the server keeps the claim until it has really exited
        )
        await broker.launch()
        self.broker = broker
        if reason != "start":
            _log.warning(
                "started the embedded broker (pid %s) on port %s with the store in %s",
                broker.pid, self.port, self.claim.store,
            )

    async def close(self) -> None:
        """Stop the broker this node runs (if any) and give up the claim; other nodes may take over."""
        self._closing = True
        self._lost.set()
        if self.broker is not None:
            await anyio.to_thread.run_sync(self.broker.stop)
        self.claim.release()
