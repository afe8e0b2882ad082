"""The embedded broker admits only holders of the per-user credentials file, and keeps its limits in
line with the node's: attacks by a local process that lacks the file, and oversized requests."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import threading
from pathlib import Path

import anyio
import msgspec
import pytest
from nats.aio.client import Client as NATS
from toolmesh._config import Settings, load_settings
from toolmesh._errors import BrokerError, ConfigError
from toolmesh._transport.broker_state import CREDENTIALS_FILE, LocalCredentials
from toolmesh._transport.mesh import Mesh, SyncMesh
from toolmesh.contracts import ErrorCode, ToolRequest, encode
from toolmesh.testing import running_node

from tests.processes import NodeProcess, free_port, toolmesh

pytestmark = pytest.mark.anyio

TOOLS = ["examples/math_tools.py"]


def _embedded(state: Path, port: int, **values: object) -> Settings:
    # No nats_url: the node starts (or joins) the embedded broker of this state directory.
    return Settings(port=port, state_dir=str(state), heartbeat=0.2, catalog_ttl=1.0, default_timeout=10.0,
                    **values)  # type: ignore[arg-type]


async def _refused(url: str, **options: object) -> Exception:
    nc = NATS()
    try:
        await nc.connect(url, allow_reconnect=False, connect_timeout=2, **options)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - the refusal is what the test looks at
        return exc
    finally:
        await nc.close()
    raise AssertionError(f"{url} admitted a client without the local credentials")


async def test_a_local_process_without_the_credentials_file_cannot_join(tmp_path: Path):
    """The attack of issue 21: a plain local client tried to answer calls before the node, read requests and
    replies, and rewrite the catalog. It cannot even connect; the node answers every call itself."""
    port = free_port()
    settings = _embedded(tmp_path / "state", port)
    async with running_node(settings, sources=TOOLS) as node:
        assert node.broker is not None and node.broker.token is not None
        url = f"nats://127.0.0.1:{port}"
        for options in ({}, {"token": "guessed-token"}, {"user": "toolmesh", "password": "toolmesh"}):
            refusal = await _refused(url, **options)
            assert "authorization" in str(refusal).lower()
        # A toolmesh client of another user (an empty state directory) is refused with a clear error.
        with pytest.raises(BrokerError, match="refused this connection"):
            await Mesh(settings=_embedded(tmp_path / "other-user", port)).connect()
        async with Mesh(settings=_embedded(tmp_path / "state", port)) as mesh:
            results = [await mesh.call("add", {"a": i, "b": 1}) for i in range(50)]
            assert [result.structured_content for result in results] == [i + 1 for i in range(50)]
            assert {result.node for result in results} == {node.name}
            tools = {spec.name: spec.description for spec in await mesh.list_tools()}
            assert tools["add"] == "Add two integers."


async def test_credentials_file_is_private_created_once_and_shared_with_local_commands(tmp_path: Path):
    """0600 file in a 0700 directory, reused by every node and client; its catalog secret reaches their settings."""
    state, port = tmp_path / "state", free_port()
    async with running_node(_embedded(state, port), sources=TOOLS) as node:
        path = state / CREDENTIALS_FILE
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        assert stat.S_IMODE((state / f"broker-{port}" / "nats.conf").stat().st_mode) == 0o600
        stored = msgspec.json.decode(path.read_bytes())
        assert node.settings.catalog_secret == stored["catalog_secret"]
        async with Mesh(settings=_embedded(state, port)) as mesh:
            assert mesh.settings.catalog_secret == stored["catalog_secret"]
            assert (await mesh.call("add", {"a": 2, "b": 3})).structured_content == 5
    # The second node on the same state directory reuses the file (same token, same secret).
    async with running_node(_embedded(state, port), sources=TOOLS):
        assert msgspec.json.decode(path.read_bytes()) == stored


def test_concurrent_first_starts_agree_on_one_credentials_file(tmp_path: Path):
    """Nodes starting at once must not each write their own token: the first file wins for everyone."""
    found: list[LocalCredentials] = []
    threads = [threading.Thread(target=lambda: found.append(LocalCredentials.load_or_create(tmp_path))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 8 and len(set(found)) == 1
    assert [p.name for p in tmp_path.iterdir()] == [CREDENTIALS_FILE]  # no temporary file left behind


def test_a_credentials_file_others_can_read_is_refused(tmp_path: Path):
    LocalCredentials.load_or_create(tmp_path)
    os.chmod(tmp_path / CREDENTIALS_FILE, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        LocalCredentials.load(tmp_path)


def test_cli_commands_and_sync_mesh_find_the_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """'toolmesh up' without a URL, then 'toolmesh call' / 'tools' / SyncMesh() with no flags at all."""
    port = free_port()
    env = {"TOOLMESH_STATE_DIR": str(tmp_path), "TOOLMESH_PORT": str(port), "TOOLMESH_PLUGINS": "python"}
    with NodeProcess(*TOOLS, env=env) as node:
        assert node.ready["embedded_broker"] is True
        done = toolmesh("call", "add", "-a", "a=20", "-a", "b=22", "--json", env=env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["structured_content"] == 42
        assert "add" in toolmesh("tools", env=env).stdout
        monkeypatch.setenv("TOOLMESH_STATE_DIR", str(tmp_path))
        monkeypatch.setenv("TOOLMESH_PORT", str(port))
        with SyncMesh() as mesh:
            assert mesh.call("add", {"a": 1, "b": 1}).structured_content == 2
        assert load_settings().catalog_secret is None  # filled in when connecting, not from the environment
        # Without the file (another user's state directory) the same command is refused.
        stranger = toolmesh("call", "add", "-a", "a=1", "-a", "b=1", env={**env, "TOOLMESH_STATE_DIR": str(tmp_path / "x")})
        assert stranger.returncode != 0 and "refused" in stranger.stderr


# ------------------------------------------------------------------ limits (issue 21, point 16)


def _raw_publish(port: int, token: str, subject: str, size: int) -> bytes:
    # A client that ignores the server's advertised max_payload (nats.py would refuse locally).
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.recv(4096)  # INFO
        connect = json.dumps({"auth_token": token, "verbose": False, "pedantic": False, "protocol": 1})
        sock.sendall(f"CONNECT {connect}\r\nPUB {subject} {size}\r\n".encode())
        try:
            sock.sendall(b"x" * size + b"\r\n")
        except OSError:
            pass  # the server may cut us before the body is through
        answer = b""
        try:
            while chunk := sock.recv(4096):
                answer += chunk
        except OSError:
            pass
        return answer


async def test_oversized_requests_are_refused_without_cutting_the_node(tmp_path: Path):
    """7 MiB requests used to reach the node's connection and get it cut as a slow consumer, silently.
    Now the broker's max_payload follows the node's: the sender is refused, the node keeps serving."""
    state, port = tmp_path / "state", free_port()
    settings = _embedded(state, port)
    async with running_node(settings, sources=TOOLS) as node:
        assert node.nc is not None and node.nc.max_payload < 2 * settings.max_payload
        credentials = LocalCredentials.load(state)
        assert credentials is not None
        subject = settings.subjects.request("add")
        big = 7 * 1024 * 1024
        answers = await asyncio.gather(
            *[anyio.to_thread.run_sync(_raw_publish, port, credentials.token, subject, big) for _ in range(6)]
        )
        assert all(b"Maximum Payload" in answer for answer in answers)
        async with Mesh(settings=_embedded(state, port, max_payload=16 * 1024 * 1024)) as mesh:
            # Larger than the broker admits: refused before it is sent, as too_large.
            huge = await mesh.call("add", {"a": 1, "b": 2}, meta={"padding": "x" * big})
            assert huge.error is not None and huge.error.code == ErrorCode.TOO_LARGE
            assert "max_payload" in huge.error.message
            # Just over the node's limit but within the broker's: the node itself answers too_large.
            over = encode(ToolRequest(id="over", tool="add", arguments={"a": 1, "b": 2},
                                      meta={"padding": "x" * settings.max_payload}))
            flood = await asyncio.gather(*[mesh.nc.request(subject, over, timeout=20) for _ in range(40)])
            assert all(b"too_large" in reply.data for reply in flood)
            for i in range(5):
                assert (await mesh.call("add", {"a": i, "b": i})).structured_content == 2 * i
        assert node.connection_log.disconnects == 0 and not node.nc.is_reconnecting


async def test_disconnects_and_reconnects_are_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """The node says when it loses its broker and when it is back: one line each."""
    state, port = tmp_path / "state", free_port()
    async with running_node(_embedded(state, port), sources=TOOLS) as node:
        assert node.broker is not None
        with caplog.at_level("INFO", logger="toolmesh"):
            node.broker.kill()
            with anyio.fail_after(20):
                while node.connection_log.reconnects == 0:
                    await anyio.sleep(0.05)
        lost = [r for r in caplog.records if "lost the NATS connection" in r.getMessage()]
        back = [r for r in caplog.records if "reconnected to NATS" in r.getMessage()]
        assert len(lost) == 1 and len(back) == 1
        async with Mesh(settings=_embedded(state, port)) as mesh:
            assert (await mesh.call("add", {"a": 1, "b": 2})).structured_content == 3
