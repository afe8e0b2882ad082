"""``RemoteCatalog``: the configured MCP servers of one kernel and the refreshes they trigger."""

from __future__ import annotations

import asyncio
import logging

import anyio
from toolmesh import Kernel
from toolmesh.contracts import ToolSpec

from .remote_tools import RemoteServer
from .server_config import ServerConfig

__all__ = ["RemoteCatalog"]

_log = logging.getLogger("toolmesh.mcp")


class RemoteCatalog:
    """Supervisors of a kernel's MCP servers; asks the kernel to refresh when their tools change."""

    def __init__(self, kernel: Kernel, configs: list[ServerConfig]) -> None:
        self.kernel = kernel
        self.servers = {config.name: RemoteServer(config, self._changed) for config in configs}
        self._discovered = False
        self._dirty = anyio.Event()
        self._refresher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start one supervisor per server and the refresher."""
        for server in self.servers.values():
            server.start()
        self._refresher = asyncio.get_running_loop().create_task(self._refresh_loop())

    async def stop(self) -> None:
        """Stop every supervisor (stdio server processes end) and the refresher."""
        if self._refresher is not None:
            self._refresher.cancel()
        for server in self.servers.values():
            await server.stop()

    async def specs(self) -> list[ToolSpec]:
        """Every remote tool; the first time, waits (bounded by each server's connect timeout) for the first listing."""
        if not self._discovered:
            self._discovered = True
            patience = max((server.config.connect_timeout for server in self.servers.values()), default=0) + 1
            with anyio.move_on_after(patience):  # one deadline for all: servers connect in parallel
                for server in self.servers.values():
                    await server.listed.wait()
        return [spec for server in self.servers.values() for spec in server.specs()]

    def server_of(self, spec: ToolSpec) -> tuple[RemoteServer, str] | None:
        """The server and remote tool name behind a mesh spec."""
        origin = (spec.meta or {}).get("toolmesh/mcp") or {}
        server = self.servers.get(origin.get("server", ""))
        if server is None:
            return None
        return server, origin.get("tool", "")

    def _changed(self) -> None:
        if self._discovered:
            self._dirty.set()

    async def _refresh_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty = anyio.Event()
            await anyio.sleep(0.05)  # one refresh for a burst of changes
            try:
                await self.kernel.refresh_tools()
            except Exception:  # noqa: BLE001 - isolation boundary around plugins' discovery hooks
                _log.exception("refreshing tools after an MCP server change failed")
