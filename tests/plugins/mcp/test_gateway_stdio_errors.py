"""Malformed JSON-RPC and requests before ``initialize`` on ``toolmesh mcp serve --stdio`` (a child process).

Raw lines go to the gateway's stdin; every one that is not a valid message
gets its JSON-RPC error, and the same process then serves a normal session.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.abc import Process
from toolmesh import Settings
from toolmesh.testing import running_node

from tests.plugins.mcp.mesh_tools import standard_tools
from tests.plugins.mcp.peers import gateway_command

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}

# (line sent, expected error code, expected reply id)
MALFORMED: list[tuple[str, int, Any]] = [
    ("this is not json", types.PARSE_ERROR, None),
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping"', types.PARSE_ERROR, None),  # cut short
    ('[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]', types.INVALID_REQUEST, None),  # a batch
    ("42", types.INVALID_REQUEST, None),
    ('"ping"', types.INVALID_REQUEST, None),
    ("null", types.INVALID_REQUEST, None),
    ('{"jsonrpc": "1.0", "id": 3, "method": "ping"}', types.INVALID_REQUEST, 3),
    ('{"id": 4, "method": "ping"}', types.INVALID_REQUEST, 4),  # no jsonrpc at all
    ('{"jsonrpc": "2.0", "id": 5}', types.INVALID_REQUEST, 5),  # no method
    ('{"jsonrpc": "2.0", "id": "six", "params": {}}', types.INVALID_REQUEST, "six"),
    ('{"jsonrpc": "2.0", "id": 7, "method": 7}', types.INVALID_REQUEST, 7),
    ('{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": [1]}', types.INVALID_REQUEST, 8),
    ('{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}', types.INVALID_REQUEST, None),  # unreadable id
    ('{"jsonrpc": "2.0", "id": null, "method": "ping"}', types.INVALID_REQUEST, None),
    ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', types.INVALID_REQUEST, None),
]


class RawStdio:
    """Newline-delimited JSON-RPC over a child process's stdin/stdout."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.buffered = b""

    async def send_line(self, line: str) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(line.encode() + b"\n")

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_line(json.dumps(message))

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self.buffered:
            self.buffered += await self.process.stdout.receive()
        line, self.buffered = self.buffered.split(b"\n", 1)
        return json.loads(line)

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` and return the reply with its id (notifications in between are skipped)."""
        await self.send(message)
        while True:
            reply = await self.receive()
            if "method" not in reply and reply.get("id") == message["id"]:
                return reply


async def test_malformed_messages_get_errors_and_the_server_keeps_serving(
    toolmesh_settings: Settings,
) -> None:
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        await anyio.open_process(gateway_command(toolmesh_settings, "--stdio")) as process,
    ):
        raw = RawStdio(process)
        with anyio.fail_after(30):
            for line, code, reply_id in MALFORMED:
                await raw.send_line(line)
                reply = await raw.receive()
                assert reply["jsonrpc"] == "2.0" and "result" not in reply, (line, reply)
                assert reply["error"]["code"] == code, (line, reply)
                assert reply["id"] == reply_id, (line, reply)
                assert reply["error"]["message"], line

            # Before initialize: ping is answered, everything else refused.
            assert (await raw.request({"jsonrpc": "2.0", "id": 20, "method": "ping"}))["result"] == {}
            early = await raw.request({"jsonrpc": "2.0", "id": 21, "method": "tools/list"})
            assert early["error"]["code"] == types.INVALID_REQUEST
            assert "initialize" in early["error"]["message"]
            early_call = await raw.request(
                {
                    "jsonrpc": "2.0",
                    "id": 22,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
                }
            )
            assert early_call["error"]["code"] == types.INVALID_REQUEST

            # The same process now serves a normal session.
            hello = await raw.request(INITIALIZE)
            assert hello["result"]["protocolVersion"] == "2025-11-25"
            await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            listed = await raw.request({"jsonrpc": "2.0", "id": 23, "method": "tools/list"})
            assert {tool["name"] for tool in listed["result"]["tools"]} >= {"add", "slow"}

            await raw.send_line("{oops")  # malformed lines stay answered after the handshake
            late = await raw.receive()
            assert late["id"] is None and late["error"]["code"] == types.PARSE_ERROR
            assert late["error"]["message"].startswith("Parse error")
            called = await raw.request(
                {
                    "jsonrpc": "2.0",
                    "id": 24,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 20, "b": 22}},
                }
            )
            assert called["result"]["structuredContent"] == {"result": 42}
        assert process.stdin is not None
        await process.stdin.aclose()
        with anyio.fail_after(10):
            assert await process.wait() == 0
