"""An MCP server over stdio that behaves until ``tools/call``, then answers with malformed JSON-RPC."""

from __future__ import annotations

import json
import sys


def reply(message_id: object, result: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        reply(
            message["id"],
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "garbage", "version": "1"},
            },
        )
    elif method == "tools/list":
        reply(message["id"], {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
    elif method == "ping":
        reply(message["id"], {})
    elif method == "tools/call":
        sys.stdout.write('{"jsonrpc": "2.0", "id": ' + json.dumps(message["id"]) + ', "result": {oops\n')
        sys.stdout.flush()
