"""The kernel outside the call pipeline: discovery and refreshes."""

from __future__ import annotations

import anyio
import pytest
from toolmesh import Kernel, hookimpl
from toolmesh.contracts import ToolSpec
from toolmesh.testing import eventually

pytestmark = pytest.mark.anyio


class SlowDiscovery:
    """Discovers one tool per generation, slowly; records how many discoveries overlap."""

    def __init__(self) -> None:
        self.generation = 0
        self.running = 0
        self.most_at_once = 0

    @hookimpl
    async def toolmesh_discover_tools(self) -> list[ToolSpec]:
        self.generation += 1
        generation = self.generation
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        # The first discovery is the slowest: unserialised, it would finish last and win.
        await anyio.sleep(0.05 if generation == 2 else 0.01)
        self.running -= 1
        return [ToolSpec(name=f"gen{generation}", input_schema={"type": "object"}, source="slow")]


async def test_concurrent_refreshes_run_one_at_a_time_and_the_newest_wins() -> None:
    """Plugins asking for refreshes at once never overlap, so the last requested discovery is what is served."""
    plugin = SlowDiscovery()
    kernel = Kernel([plugin], load_entrypoints=False)
    async with kernel, anyio.create_task_group() as tg:
        tg.start_soon(kernel.refresh_tools)
        await eventually(lambda: plugin.running == 1, timeout=5)  # the first refresh is discovering
        tg.start_soon(kernel.refresh_tools)
    assert plugin.most_at_once == 1
    assert [spec.name for spec in kernel.tools] == [f"gen{plugin.generation}"]
