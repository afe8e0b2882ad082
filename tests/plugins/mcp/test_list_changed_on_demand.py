"""On-demand stdio servers that announce ``notifications/tools/list_changed`` while they are being listed.

The server is built on the official SDK and registers its tools lazily (see
``lazy_tools_server.py``): every process announces a change during its first
listing.  The announcement must lead to one re-list in the same session, not
to a probe that ends "broken" and a server started again and again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
import toolmesh.plugins.mcp as mcp_plugin
from toolmesh import Kernel, Settings
from toolmesh.contracts import ToolRequest
from toolmesh.testing import eventually

from tests.plugins.mcp.peers import with_servers

pytestmark = pytest.mark.anyio

LAZY_SERVER = str(Path(__file__).with_name("lazy_tools_server.py"))

OBSERVED = 3.0
"""Seconds the supervisor is watched: a restart loop starts the server about twice a second."""


def _starts(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


async def test_a_list_change_during_the_probe_is_one_relist_not_a_restart(tmp_path: Path) -> None:
    starts = tmp_path / "starts.log"
    lazy = {"command": sys.executable, "args": [LAZY_SERVER, "--starts", str(starts)], "mode": "on-demand"}
    settings = with_servers(Settings(), lazy=lazy)
    async with Kernel([mcp_plugin], settings=settings, load_entrypoints=False) as kernel:
        await anyio.sleep(OBSERVED)
        lookup = kernel.get_tool("lazy_lookup")
        assert lookup is not None, [spec.name for spec in kernel.tools]
        assert lookup.available, lookup.unavailable_reason
        assert _starts(starts) == 1  # the probe only: the change was answered by listing again

        result = await kernel.call(ToolRequest(id="1", tool="lazy_lookup", arguments={"word": "mesh"}))
        assert not result.is_error and result.text == "mesh: found"
        assert _starts(starts) == 2  # one process per on-demand call, no more
        await anyio.sleep(1.0)
        assert _starts(starts) == 2


async def test_a_native_session_relists_a_lazy_server_without_restarting_it(tmp_path: Path) -> None:
    starts = tmp_path / "starts.log"
    lazy = {"command": sys.executable, "args": [LAZY_SERVER, "--starts", str(starts)]}
    async with Kernel([mcp_plugin], settings=with_servers(Settings(), lazy=lazy), load_entrypoints=False) as kernel:
        await eventually(lambda: kernel.get_tool("lazy_lookup") is not None)
        result = await kernel.call(ToolRequest(id="1", tool="lazy_lookup", arguments={"word": "mesh"}))
        assert result.text == "mesh: found"
        await anyio.sleep(1.0)
        assert _starts(starts) == 1
