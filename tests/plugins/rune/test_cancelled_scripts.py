"""A Rune script whose call is cancelled stops soon, long before its own deadline, on a real node.

The run is stopped cooperatively (the tick counter looks at a stop event as it looks at the
clock): no exception is injected into the worker thread.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import anyio
import pytest
import toolmesh.plugins.python as python_plugin
import toolmesh.plugins.rune as rune_plugin
from toolmesh import Mesh, Settings
from toolmesh.testing import eventually, running_node

pytestmark = pytest.mark.anyio

SPINNER = """\
#[tool(desc = "say so, then spin until stopped", timeout_ms = 60000)]
pub fn chatty() { println!("spinning"); let i = 0; loop { i = (i + 1) % 1000; } }

#[tool(desc = "answer at once")]
pub fn quick() { 42 }
"""


async def test_a_cancelled_script_stops_and_the_node_keeps_answering(
    toolmesh_settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "spin.rn").write_text(SPINNER)
    caplog.set_level(logging.DEBUG, logger="toolmesh.rune")
    async with (
        running_node(
            toolmesh_settings,
            sources=[str(tmp_path)],
            plugins=[rune_plugin, python_plugin],
            load_entrypoints=False,
        ) as node,
        Mesh(settings=toolmesh_settings) as mesh,
    ):

        async def spin() -> None:
            await mesh.call("rune_chatty", {}, timeout=60)

        async with anyio.create_task_group() as tg:
            tg.start_soon(spin)
            await eventually(lambda: node.inflight == 1, timeout=10)
            cpu = time.process_time()
            # the script is spinning in its worker thread once this process burns CPU while its loop waits
            await eventually(lambda: time.process_time() - cpu > 0.1, timeout=10, interval=0.05)
            tg.cancel_scope.cancel()  # the caller gives up: the mesh sends a cancel for the call

        def stopped() -> bool:
            # The executor logs what a run printed when the run ends, and why it stopped early.
            messages = [record.getMessage() for record in caplog.records]
            return any("rune_chatty printed" in message for message in messages) and any(
                "rune_chatty stopped early: the run was stopped: its call was cancelled" in message
                for message in messages
            )

        with anyio.fail_after(30):  # its own deadline is 60 s away; its instruction budget lasts seconds
            while not stopped():
                await anyio.sleep(0.05)
        quick = await mesh.call("rune_quick", {}, timeout=10)
        assert quick.structured_content == 42, quick
