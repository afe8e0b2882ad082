"""``SyncToolUsage``: the lifecycle for synchronous agent code (crewAI's ``use_tool`` beside ``ause_tool``).

::

    with SyncToolUsage(model="gpt-4o") as usage:           # the configured mesh, or a URL / settings
        observation = usage.use('Action: add\\nAction Input: {"a": 1, "b": 2}', agent="researcher")

It runs a ``ToolUsage`` on its own event loop in a worker thread (an anyio
blocking portal), so it works from plain functions and from threads, but not
from inside a running event loop: there, ``await ToolUsage.use`` directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Self

import anyio.from_thread
from toolmesh import Mesh, Settings

from .events import AgentInfo, TaskInfo
from .tool_usage import Observation, ToolUsage

__all__ = ["SyncToolUsage"]


class SyncToolUsage:
    """A blocking ``ToolUsage`` over the mesh: ``with SyncToolUsage() as usage: usage.use(output)``."""

    def __init__(
        self,
        nats_url: str | None = None,
        *,
        prefix: str | None = None,
        settings: Settings | None = None,
        **options: Any,
    ) -> None:
        """``nats_url`` / ``prefix`` / ``settings`` choose the mesh (as for ``Mesh``); ``options`` go to
        ``ToolUsage.connect`` (``model``, ``only``, ``verbose``, ``cache``, ...)."""
        self._mesh = Mesh(nats_url, prefix=prefix, settings=settings)
        self._options = options
        self._portal_cm = anyio.from_thread.start_blocking_portal("asyncio")
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._usage: ToolUsage | None = None

    def __enter__(self) -> Self:
        portal = self._portal_cm.__enter__()
        try:
            self._usage = portal.call(self._open)
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        self._portal = portal
        return self

    def __exit__(self, *exc_info: object) -> None:
        portal, self._portal = self._portal, None
        if portal is None:
            return
        try:
            portal.call(self._close)
        finally:
            self._portal_cm.__exit__(None, None, None)

    async def _open(self) -> ToolUsage:
        await self._mesh.connect()
        try:
            return await ToolUsage.connect(self._mesh, **self._options)
        except BaseException:
            await self._mesh.close()
            raise

    async def _close(self) -> None:
        try:
            if self._usage is not None:
                await self._usage.close()
        finally:
            await self._mesh.close()

    @property
    def usage(self) -> ToolUsage:
        """The ``ToolUsage`` underneath (its ledger, cache, emitter and tools)."""
        if self._usage is None or self._portal is None:
            raise RuntimeError("SyncToolUsage is not open; use 'with SyncToolUsage(...) as usage:'")
        return self._usage

    def _call(self, function: Callable[[], Any]) -> Any:
        if self._portal is None:
            raise RuntimeError("SyncToolUsage is not open; use 'with SyncToolUsage(...) as usage:'")
        return self._portal.call(function)

    def use(
        self,
        output: str | Mapping[str, Any],
        *,
        agent: AgentInfo | str | None = None,
        task: TaskInfo | str | None = None,
    ) -> Observation:
        """Run one agent output through the lifecycle and block until the observation is ready."""
        usage = self.usage
        result: Observation = self._call(lambda: usage.use(output, agent=agent, task=task))
        return result

    def refresh(self) -> None:
        """Re-read the mesh's catalog."""
        usage = self.usage
        self._call(usage.refresh)

    def reset_usage(self, tool: str | None = None) -> None:
        """Forget the usage counts of ``tool`` (or of every tool); see ``ToolUsage.reset_usage``."""
        usage = self.usage

        async def reset() -> None:  # on the loop that owns the counts
            usage.reset_usage(tool)

        self._call(reset)
