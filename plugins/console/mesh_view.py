"""The console's connection to the mesh: the catalog it keeps fresh, the events it follows, its calls.

The console outlives its broker connection: when NATS goes away for longer than
the client's reconnect attempts, the view shows the failure and connects again.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import msgspec
import nats.errors
from toolmesh import BrokerError, Mesh, Settings, ToolmeshError
from toolmesh.contracts import decode_event

from .catalog_view import CatalogSnapshot
from .console_calls import ConsoleCalls
from .live_feed import LiveFeed

__all__ = ["CATALOG_REFRESH", "RECONNECT_PAUSE", "MeshView", "open_mesh_view"]

CATALOG_REFRESH = 1.0
"""Seconds between two reads of the catalog (a node that left is gone within its TTL plus this)."""

RECONNECT_PAUSE = 1.0
"""Seconds between two attempts to reach the mesh again after the connection was lost."""

_log = logging.getLogger("toolmesh.console")
_NATS_FAILURES = (ToolmeshError, nats.errors.Error, OSError, TimeoutError)


class MeshView:
    """What the pages read: the latest catalog snapshot, the live feed, and the console's own calls."""

    def __init__(self, settings: Settings, calls: ConsoleCalls) -> None:
        self.settings = settings
        self.mesh: Mesh | None = None
        self.catalog = CatalogSnapshot()
        self.feed = LiveFeed()
        self.calls = calls
        self.catalog_error: str | None = None
        self._stopping = anyio.Event()

    def stop(self) -> None:
        """Close the connection and end the console's running calls (their nodes are told to cancel them)."""
        self._stopping.set()
        for call in self.calls.calls.values():
            call.scope.cancel()

    async def refresh_catalog(self) -> CatalogSnapshot:
        """Read the catalog now (tools the console's identity may see, when a policy is configured)."""
        mesh = self.mesh
        if mesh is None:
            return self.catalog
        try:
            nodes = await mesh.nodes()
            # With an [authorization] policy in the console's settings, only what its identity may use
            policy = "authorization" in self.settings.plugins
            visible = {spec.name for spec in await mesh.list_tools()} if policy else None
        except _NATS_FAILURES as exc:
            self.catalog_error = (
                f"the catalog could not be read ({type(exc).__name__}: {exc}); showing the last one read"
            )
            return self.catalog
        self.catalog_error = None
        before = {entry.node for entry in self.catalog.nodes}
        self.catalog = CatalogSnapshot.build(nodes, visible)
        for gone in before - {entry.node for entry in nodes}:
            self.feed.forget_node(gone)
        return self.catalog

    async def keep_catalog_fresh(self, interval: float = CATALOG_REFRESH) -> None:
        """Re-read the catalog every ``interval`` seconds until cancelled."""
        while True:
            await self.refresh_catalog()
            await anyio.sleep(interval)

    async def follow_events(self, mesh: Mesh, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Feed every ``tool.event.*`` message of the mesh to :attr:`feed` until the connection closes."""
        nc = mesh.nc
        if nc is None:
            raise BrokerError("the console's mesh connection is not open")

        async def on_message(message: Any) -> None:
            try:
                self.feed.add(decode_event(message.data))
            except (msgspec.DecodeError, msgspec.ValidationError):
                return  # an observer must not stop on one foreign message

        subscription = await nc.subscribe(mesh.subjects.events(), cb=on_message, pending_msgs_limit=200_000)
        await nc.flush()  # the broker holds the subscription: no event published from now on is missed
        task_status.started()
        try:
            while not nc.is_closed:
                await anyio.sleep(0.25)
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await subscription.unsubscribe()
                except nats.errors.Error as exc:  # the connection is already gone: nothing to undo
                    _log.debug("unsubscribing from events failed: %r", exc)

    async def stopped(self) -> None:
        """Wait until :meth:`stop` was called and the connection is closed."""
        await self._stopping.wait()
        while self.mesh is not None:  # stay_connected clears it once the connection is closed
            await anyio.sleep(0.05)

    async def stay_connected(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect; follow events and catalog; reconnect when the connection is lost (first try raises)."""
        first = True
        while not self._stopping.is_set():
            try:
                async with Mesh(settings=self.settings, name="toolmesh-console") as mesh:
                    self.mesh = self.calls.mesh = mesh
                    async with anyio.create_task_group() as tg:
                        await tg.start(self.follow_events, mesh)
                        await self.refresh_catalog()
                        if first:
                            first = False
                            task_status.started()
                        tg.start_soon(self.keep_catalog_fresh)
                        while mesh.nc is not None and not mesh.nc.is_closed and not self._stopping.is_set():
                            await anyio.sleep(0.1)
                        tg.cancel_scope.cancel()
            except _NATS_FAILURES as exc:
                if first:
                    raise
                self.catalog_error = f"the mesh is unreachable ({type(exc).__name__}: {exc}); reconnecting"
                _log.warning("console lost the mesh: %r", exc)
            else:
                if self._stopping.is_set():
                    return  # the connection closed above, drained and outside any cancellation
                self.catalog_error = "the connection to the mesh closed; reconnecting"
            finally:
                self.mesh = self.calls.mesh = None
            await anyio.sleep(RECONNECT_PAUSE)


@asynccontextmanager
async def open_mesh_view(settings: Settings) -> AsyncIterator[MeshView]:
    """Connect to the mesh and keep the view current for the duration of the block."""
    async with anyio.create_task_group() as tg:
        view = MeshView(settings, ConsoleCalls(tg))
        await tg.start(view.stay_connected)
        try:
            yield view
        finally:
            view.stop()
            with anyio.move_on_after(5):
                await view.stopped()
            tg.cancel_scope.cancel()
