"""The blocking-call detector used by the node tests catches a tool that blocks the node's event loop."""

from __future__ import annotations

import time

import pytest
import toolmesh
from toolmesh._transport.mesh import Mesh
from toolmesh.testing import running_node

from tests.blocking_calls import watching_the_loop

pytestmark = pytest.mark.anyio


async def test_an_async_tool_that_sleeps_on_the_loop_is_caught_and_the_node_still_answers(toolmesh_settings):
    @toolmesh.tool
    async def nap() -> str:
        time.sleep(0.01)  # noqa: ASYNC251 - the blocking call under test
        return "rested"

    @toolmesh.tool
    async def awake() -> str:
        return "awake"

    watcher = watching_the_loop()
    next(watcher)
    try:
        async with running_node(toolmesh_settings, sources=[nap, awake]), Mesh(settings=toolmesh_settings) as mesh:
            blocked = await mesh.call("nap", {})
            answered = await mesh.call("awake", {})
    finally:
        with pytest.raises((StopIteration, AssertionError)):
            next(watcher)
    assert blocked.is_error and "Blocking call to time.sleep" in blocked.error.message, blocked
    assert answered.structured_content == "awake"
