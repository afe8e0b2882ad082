"""The console outlives its broker: pages keep answering through an outage, then it reconnects on its own."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import anyio.from_thread
from toolmesh.testing import eventually_sync, running_node, test_settings

from tests.nats_servers import NatsServer

from .conftest import TOOLS, start_console
from .test_console_access import fetch

OUTAGE = 7.0
"""Longer than the client's reconnect attempts (10 x 0.5 s): the console's connection closes for good."""


def test_the_console_reconnects_after_a_long_broker_outage() -> None:
    server = NatsServer().start()
    settings = test_settings(server.url)
    console = None
    try:
        with anyio.from_thread.start_blocking_portal("asyncio") as portal:
            node = portal.wrap_async_context_manager(
                running_node(settings, name="node-outage", sources=[str(TOOLS / "console_python_tools.py")])
            )
            node.__enter__()
            console = start_console(settings)
            eventually_sync(lambda: fetch(console.url + "tools/add")[0] == 200, timeout=10)
            node.__exit__(None, None, None)
            server.stop()
            time.sleep(OUTAGE)
            status, _, page = fetch(console.url)
            assert status == 200 and any(
                words in page for words in ("could not be read", "unreachable", "closed")
            )
            server.start()
            node = portal.wrap_async_context_manager(
                running_node(settings, name="node-back", sources=[str(TOOLS / "console_python_tools.py")])
            )
            node.__enter__()
            eventually_sync(
                lambda: 'data-node="node-back"' in fetch(console.url + "nodes/table")[2], timeout=15
            )
            csrf = re.search(r'name="csrf-token" content="([^"]+)"', fetch(console.url)[2]).group(1)
            status, _, text = fetch(
                console.url + "api/tools/add/calls",
                method="POST",
                body={"arguments": {"a": 2, "b": 2}},
                headers={"X-Console-CSRF": csrf},
            )
            assert status == 202
            call_id = json.loads(text)["id"]

            def done() -> Any:
                state = json.loads(fetch(f"{console.url}api/calls/{call_id}")[2])
                return state if state["status"] != "running" else None

            assert eventually_sync(done, timeout=10)["result"]["structured_content"] == 4
            # the live view follows the events of the new connection
            eventually_sync(
                lambda: 'data-kind="finished"' in fetch(f"{console.url}calls/{call_id}", limit=None)[2],
                timeout=5,
            )
            node.__exit__(None, None, None)
    finally:
        if console is not None:
            console.stop()
        server.stop()
