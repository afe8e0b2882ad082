"""The embedded broker's lifetime: it outlives the death of the node running it, and of itself.

Real ``toolmesh up`` processes, killed with SIGKILL; the JetStream store lives in
the state directory, so calls queued in it survive.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import anyio
import pytest
from toolmesh._config import Settings
from toolmesh._transport.broker_keeper import MAX_RESTARTS
from toolmesh._transport.mesh import Mesh
from toolmesh.testing import eventually, running_node

from tests.processes import NodeProcess, free_port, toolmesh

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop


def _env(state: Path, port: int, **extra: str) -> dict[str, str]:
    return {"TOOLMESH_STATE_DIR": str(state), "TOOLMESH_PORT": str(port), "TOOLMESH_PLUGINS": "python",
            "TOOLMESH_HEARTBEAT": "0.2", "TOOLMESH_CATALOG_TTL": "1", **extra}


def _children(pid: int) -> dict[int, str]:
    """Child processes of ``pid`` and their state letter (``Z`` = zombie)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found[int(entry.name)] = fields[0]
    return found


def _broker_pid(node_pid: int) -> int:
    brokers = [pid for pid, state in _children(node_pid).items() if state != "Z"]
    assert len(brokers) == 1, _children(node_pid)
    return brokers[0]


def _watching_a_broker(node_pid: int) -> bool:
    """Whether the node holds a pidfd: its keeper opens one on the broker once that broker started."""
    fds = Path(f"/proc/{node_pid}/fd")
    links = []
    for fd in fds.iterdir() if fds.exists() else ():
        with contextlib.suppress(OSError):  # an fd closed meanwhile
            links.append(os.readlink(fd))
    return "anon_inode:[pidfd]" in links


async def _wait_for_new_broker(node_pid: int, old: int | None) -> int:
    """The new broker's pid, once the node's keeper has started it and watches it (a kill before that would
    be a failed start, not a death)."""

    def started() -> int | None:
        alive = [pid for pid, state in _children(node_pid).items() if state != "Z" and pid != old]
        return alive[0] if alive and _watching_a_broker(node_pid) else None

    return await eventually(started, timeout=20, interval=0.02)


async def _queued(mesh: Mesh, settings: Settings, calls: int) -> bool:
    """Whether ``calls`` durable calls reached the stream (sequence numbers only grow)."""
    stream = await mesh.nc.jetstream().stream_info(settings.subjects.durable_stream)
    return stream.state.last_seq >= calls


async def test_killed_broker_is_restarted_and_reaped_by_its_node(tmp_path: Path):
    """kill -9 the broker: its node notices at once, reaps it, starts it again on the same port and store."""
    state, port = tmp_path / "state", free_port()
    env = _env(state, port)
    with NodeProcess("examples/math_tools.py", env=env) as node:
        pid = node.process.pid
        first = _broker_pid(pid)
        os.kill(first, signal.SIGKILL)
        second = await _wait_for_new_broker(pid, first)
        assert second != first and "Z" not in _children(pid).values()  # no defunct broker left behind
        settings = Settings(port=port, state_dir=str(state))
        async with Mesh(settings=settings) as mesh:
            with anyio.fail_after(20):
                while (result := await mesh.call("add", {"a": 2, "b": 3}, timeout=2)).is_error:
                    await anyio.sleep(0.1)  # the node's own reconnect may take a moment
            assert result.structured_content == 5
        live = toolmesh("health", "--live", "--node", node.name, "--json", env=env)
        assert live.returncode == 0 and json.loads(live.stdout)["healthy"] is True
        # Ready too: its catalog entry, written again on the new broker and signed with the local secret.
        ready = toolmesh("health", "--node", node.name, "--json", env=env)
        assert ready.returncode == 0, ready.stdout
        node.process.send_signal(signal.SIGTERM)
        _, err = node.process.communicate(timeout=30)
    assert node.process.returncode == 0
    assert err.count("exited with status -9") == 1 and err.count("lost the NATS connection") == 1
    assert not (state / f"broker-{port}" / f"nats-server_{second}.ports").exists()  # stopped cleanly


async def test_killing_the_node_that_runs_the_broker_loses_no_queued_durable_call(tmp_path: Path):
    """kill -9 the node running the broker while another node serves and durable calls wait in the queue:
    the other node starts the broker again on the same port with the same store and answers every call."""
    state, port = tmp_path / "state", free_port()
    env = _env(state, port, TOOLMESH_DURABLE_ACK_WAIT="1")
    with NodeProcess("examples/math_tools.py", env=env) as owner:
        assert owner.ready["embedded_broker"] is True
        with NodeProcess("examples/slow_tools.py", "--max-concurrency", "1", env=env) as survivor:
            assert survivor.ready["embedded_broker"] is False
            settings = Settings(port=port, state_dir=str(state), default_timeout=30)
            ids = [f"queued-{i}" for i in range(3)]
            async with Mesh(settings=settings) as mesh:
                results: dict[str, object] = {}

                async def call(request_id: str) -> None:
                    # A reply sent while this client was reconnecting is lost; the stored result is not.
                    results[request_id] = await mesh.call(
                        "sleep", {"seconds": 0.5}, durable=True, id=request_id, timeout=8
                    )

                async with anyio.create_task_group() as tg:
                    for request_id in ids:
                        tg.start_soon(call, request_id)
                    await eventually(lambda: _queued(mesh, settings, 3), timeout=20)  # one runs, two wait
                    owner.kill()
            # Whatever the caller heard while the broker was down, each call has its result in the store.
            async with Mesh(settings=settings) as mesh:
                with anyio.fail_after(60):
                    for request_id in ids:
                        while (stored := await mesh.durable_result(request_id)) is None:
                            await anyio.sleep(0.2)
                        assert stored.structured_content == 0.5, stored
            live = toolmesh("health", "--live", "--node", survivor.name, "--json", env=env)
            assert live.returncode == 0, live.stdout
            survivor.process.send_signal(signal.SIGTERM)
            _, err = survivor.process.communicate(timeout=30)
            assert "started the embedded broker" in err
    assert sorted(results) == ids  # every caller got an answer (the result, or "still queued")


async def test_a_broker_that_keeps_dying_stops_its_node_with_an_error(tmp_path: Path):
    """Restarting has limits: after MAX_RESTARTS deaths in a minute the node exits non-zero, naming the log."""
    env = _env(tmp_path / "state", free_port())
    with NodeProcess("examples/math_tools.py", env=env) as node:
        pid = node.process.pid
        broker = _broker_pid(pid)
        for _ in range(MAX_RESTARTS - 1):
            os.kill(broker, signal.SIGKILL)
            broker = await _wait_for_new_broker(pid, broker)
        os.kill(broker, signal.SIGKILL)
        _, err = node.process.communicate(timeout=30)
    assert node.process.returncode == 1
    assert f"died {MAX_RESTARTS} times" in err and "nats.log" in err


def test_health_live_fails_when_the_embedded_broker_is_gone(tmp_path: Path):
    """Nothing runs the embedded broker: a node cannot be alive on it, whatever it thinks."""
    live = toolmesh("health", "--live", "--node", "n", "--json", env=_env(tmp_path, free_port()))
    assert live.returncode == 1 and json.loads(live.stdout) == {**json.loads(live.stdout), "healthy": False,
                                                                 "broker": "embedded"}


async def test_in_process_node_restarts_its_broker_with_the_same_store(tmp_path: Path):
    """The store is the per-user directory: a restarted broker still has the durable stream."""
    state, port = tmp_path / "state", free_port()
    settings = Settings(port=port, state_dir=str(state), heartbeat=0.2, catalog_ttl=1.0)
    async with running_node(settings, sources=["examples/math_tools.py"]) as node:
        assert node.broker is not None
        store = state / f"broker-{port}" / "jetstream"
        assert store.is_dir()
        first = node.broker.pid
        node.broker.kill()
        with anyio.fail_after(20):
            while node.broker is None or node.broker.pid == first or not node.broker.running:
                await anyio.sleep(0.05)
        async with Mesh(settings=settings) as mesh:
            with anyio.fail_after(20):
                while (result := await mesh.call("add", {"a": 1, "b": 1}, durable=True, timeout=2)).is_error:
                    await anyio.sleep(0.1)
            assert result.structured_content == 2
        assert node.broker.store_dir == state / f"broker-{port}"
