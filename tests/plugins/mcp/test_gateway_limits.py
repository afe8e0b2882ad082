"""Session limits of ``toolmesh mcp serve --http`` (a child process) under a flood of ``initialize`` requests.

One client (one loopback address) floods the gateway; other clients come from
other loopback addresses (127.0.0.2, …), which Linux routes like 127.0.0.1.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from toolmesh import Settings
from toolmesh.plugins.mcp.session_admission import SESSION_LIMIT_ERROR
from toolmesh.testing import running_node

from tests.plugins.mcp.mesh_tools import standard_tools
from tests.plugins.mcp.peers import HttpGateway, gateway_command
from tests.plugins.mcp.test_gateway_http import INITIALIZE, MCP_HEADERS, RawSession

pytestmark = pytest.mark.anyio


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def client_from(address: str, **options: Any) -> httpx2.AsyncClient:
    """An HTTP client whose connections come from loopback ``address``."""
    return httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(local_address=address), timeout=30, **options
    )


async def initialize(http: httpx2.AsyncClient, url: str, request_id: int = 1) -> httpx2.Response:
    return await http.post(url, content=json.dumps({**INITIALIZE, "id": request_id}), headers=MCP_HEADERS)


async def flood(
    http: httpx2.AsyncClient, url: str, count: int, concurrency: int = 16
) -> list[httpx2.Response]:
    """``count`` initialize requests, ``concurrency`` at a time."""
    responses: list[httpx2.Response] = []
    limiter = anyio.Semaphore(concurrency)

    async def one(request_id: int) -> None:
        async with limiter:
            responses.append(await initialize(http, url, request_id))

    async with anyio.create_task_group() as tg:
        for request_id in range(count):
            tg.start_soon(one, request_id + 1000)
    return responses


async def session_answers(http: httpx2.AsyncClient, url: str, session_id: str) -> int:
    """The HTTP status of a notification on ``session_id``: 202 while the session lives, 404 once it ended.

    A notification, not a request: a request would count as using the session.
    """
    headers = {**MCP_HEADERS, "mcp-protocol-version": "2025-11-25", "mcp-session-id": session_id}
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    return (await http.post(url, content=json.dumps(notification), headers=headers)).status_code


async def test_one_client_flooding_initialize_is_limited_and_others_still_get_sessions(
    toolmesh_settings: Settings,
) -> None:
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        HttpGateway(toolmesh_settings, "--max-client-sessions", "20", "--max-sessions", "50") as gateway,
    ):
        async with client_from("127.0.0.1") as flooder:
            assert (await initialize(flooder, gateway.url)).status_code == 200  # warm up before measuring
            before = rss_mb(gateway.process.pid)
            responses = await flood(flooder, gateway.url, 400)
            grown = rss_mb(gateway.process.pid) - before

            statuses = [response.status_code for response in responses]
            assert statuses.count(200) == 19, statuses  # 20 per client, one opened before the flood
            assert statuses.count(429) == 381
            refused = next(response for response in responses if response.status_code == 429)
            assert int(refused.headers["retry-after"]) >= 1
            error = refused.json()
            assert error["jsonrpc"] == "2.0" and error["id"] >= 1000
            assert error["error"]["code"] == SESSION_LIMIT_ERROR
            assert "127.0.0.1" in error["error"]["message"] and "20" in error["error"]["message"]
            # 400 unlimited sessions hold ~16 MB more; refusals must cost next to nothing.
            assert grown < 12, f"the gateway grew by {grown:.1f} MiB"

            # The flooding client's own sessions keep working.
            opened = next(response for response in responses if response.status_code == 200)
            own = RawSession(flooder, gateway.url)
            own.session_id = opened.headers["mcp-session-id"]
            called = await own.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})
            assert called["result"]["structuredContent"] == {"result": 4}

        # Another client initializes and calls tools as if nothing happened.
        async with client_from("127.0.0.2") as other:
            assert (await initialize(other, gateway.url)).status_code == 200
        async with (
            client_from("127.0.0.3") as sdk_http,
            streamable_http_client(gateway.url, http_client=sdk_http) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}

        # The total cap still holds: two more clients fill it, a third gets 503.
        for address in ("127.0.0.4", "127.0.0.5"):
            async with client_from(address) as filler:
                statuses = [response.status_code for response in await flood(filler, gateway.url, 20)]
                assert 200 in statuses
        async with client_from("127.0.0.6") as late:
            full = await initialize(late, gateway.url)
        assert full.status_code == 503 and "retry-after" in full.headers
        assert full.json()["error"]["code"] == SESSION_LIMIT_ERROR


async def test_unused_and_idle_sessions_expire(toolmesh_settings: Settings) -> None:
    async with (
        running_node(toolmesh_settings, plugins=[standard_tools()], load_entrypoints=False),
        HttpGateway(
            toolmesh_settings,
            "--max-client-sessions",
            "4",
            "--session-unused-timeout",
            "1",
            "--session-idle-timeout",
            "3",
        ) as gateway,
        client_from("127.0.0.1") as http,
    ):
        used = RawSession(http, gateway.url)
        await used.request("initialize", INITIALIZE["params"])
        await used.notify("notifications/initialized")
        assert (await used.request("tools/list"))["result"]["tools"]
        unused = [(await initialize(http, gateway.url)).headers["mcp-session-id"] for _ in range(3)]
        refused = await initialize(http, gateway.url)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) <= 2

        with anyio.fail_after(10):  # the unused sessions end after about a second
            while await session_answers(http, gateway.url, unused[0]) != 404:
                await anyio.sleep(0.2)
        assert [await session_answers(http, gateway.url, session) for session in unused] == [404] * 3
        assert (await initialize(http, gateway.url)).status_code == 200  # room again
        assert await session_answers(http, gateway.url, used.session_id) == 202  # used: not ended

        with anyio.fail_after(15):  # left alone, the used session ends after 3 idle seconds
            while True:
                await anyio.sleep(3.5)  # each probe is activity: stay quiet longer than that
                if await session_answers(http, gateway.url, used.session_id) == 404:
                    break


async def test_sigterm_with_many_open_sessions_exits_promptly(toolmesh_settings: Settings) -> None:
    tools = standard_tools()
    async with running_node(toolmesh_settings, plugins=[tools], load_entrypoints=False):
        gateway = HttpGateway(toolmesh_settings, "--max-client-sessions", "400", "--max-sessions", "400")
        async with gateway, client_from("127.0.0.1") as http:
            statuses = [response.status_code for response in await flood(http, gateway.url, 300)]
            assert statuses.count(200) == 300
            streaming = RawSession(http, gateway.url)
            await streaming.request("initialize", INITIALIZE["params"])
            await streaming.notify("notifications/initialized")

            call = {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {
                    "name": "slow",
                    "arguments": {"steps": 200, "pause": 0.05},
                    "_meta": {"progressToken": "p9"},
                },
            }
            headers = {
                **MCP_HEADERS,
                "mcp-protocol-version": "2025-11-25",
                "mcp-session-id": streaming.session_id,
            }
            stream_headers = {
                "accept": "text/event-stream",
                "mcp-protocol-version": "2025-11-25",
                "mcp-session-id": streaming.session_id,
            }
            async with (
                http.stream("GET", gateway.url, headers=stream_headers) as listening,
                http.stream("POST", gateway.url, content=json.dumps(call), headers=headers) as calling,
            ):
                assert listening.status_code == 200 and calling.status_code == 200
                with anyio.fail_after(10):  # the tool runs: its first progress notification arrived
                    async for line in calling.aiter_lines():
                        if "notifications/progress" in line:
                            break

                gateway.process.send_signal(signal.SIGTERM)
                try:
                    returncode = await anyio.to_thread.run_sync(gateway.process.wait, 10)
                except subprocess.TimeoutExpired:
                    pytest.fail("the gateway did not exit within 10 s of SIGTERM")
                assert returncode == 0, gateway.process.stderr.read() if gateway.process.stderr else ""

            with anyio.fail_after(10):  # the call in flight was given up, so its node cancels the tool
                while "slow cancelled" not in tools.events:
                    await anyio.sleep(0.05)
            assert "slow finished" not in tools.events


def test_limits_are_checked_when_the_gateway_starts(toolmesh_settings: Settings) -> None:
    refused = subprocess.run(
        gateway_command(toolmesh_settings, "--http", "127.0.0.1:0", "--max-client-sessions", "0"),
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert refused.returncode == 2
    assert "--max-client-sessions" in refused.stderr and "got 0" in refused.stderr
