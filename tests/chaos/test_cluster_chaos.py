"""Chaos on a real 3-server NATS cluster (``-m chaos``): a server restart under load, a partitioned
node, a node whose tools hang.  Each run prints its figures (``-s`` shows them); docs/operations.md
quotes a run.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from toolmesh._config import Settings
from toolmesh._transport.broker import port_is_open
from toolmesh._transport.mesh import Mesh

from tests.processes import ROOT, NodeProcess

pytestmark = [pytest.mark.anyio, pytest.mark.chaos, pytest.mark.timeout(300)]

TOOLS = str(Path(__file__).with_name("chaos_tools.py"))
RECORDING_TOOLS = str(Path(__file__).parent.parent / "reliability" / "recording_tools.py")
SCRIPT = ROOT / "ops" / "cluster"


class Cluster:
    """ops/cluster on free ports, with SIGKILL for one server."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        for _ in range(50):
            self.base = random.randrange(20000, 30000, 10)
            if not any(port_is_open("127.0.0.1", self.base + off + i) for off in (0, 1000, 2000) for i in range(3)):
                break

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(SCRIPT), "--dir", str(self.dir), *args],
                              capture_output=True, text=True, timeout=60, check=False)

    def up(self, *options: str) -> None:
        done = self.run("up", "--port", str(self.base), "--cluster-port", str(self.base + 1000),
                        "--http-port", str(self.base + 2000), "--json", *options)
        assert done.returncode == 0, done.stdout + done.stderr

    def url(self, *names: str) -> str:
        index = {f"n{i + 1}": i for i in range(3)}
        chosen = names or tuple(index)
        return ",".join(f"nats://127.0.0.1:{self.base + index[name]}" for name in chosen)

    def name_of(self, url: str) -> str:
        return f"n{int(url.rsplit(':', 1)[1]) - self.base + 1}"

    def kill(self, name: str) -> None:
        os.kill(int((self.dir / f"{name}.pid").read_text()), signal.SIGKILL)

    def start(self, name: str) -> None:
        assert self.run("start", name).returncode == 0

    def stop(self, name: str) -> None:
        """SIGTERM: the server shuts down cleanly (its JetStream leaderships move to the others first)."""
        assert self.run("stop", name).returncode == 0

    def wait_ready(self) -> float:
        started = time.monotonic()
        done = self.run("up", "--json")  # 'up' on an existing cluster starts what is down and waits
        assert done.returncode == 0, done.stdout + done.stderr
        return time.monotonic() - started

    def down(self) -> None:
        self.run("down", "--purge")


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    made = Cluster(tmp_path / "cluster")
    made.up(*getattr(request, "param", ()))
    try:
        yield made
    finally:
        made.down()


def _node(url: str, name: str, *extra_sources: str, **env: str) -> NodeProcess:
    return NodeProcess(TOOLS, *extra_sources, "--nats", url, "--name", name,
                       env={"TOOLMESH_PLUGINS": "python", "TOOLMESH_NODE_NAME": name, **env})


def _settings(url: str, **values: Any) -> Settings:
    return Settings(nats_url=url, default_timeout=2.0, **values)


async def _replicated_catalog(url: str, prefix: str, ttl: float) -> None:
    from nats.js.api import KeyValueConfig, StorageType
    from toolmesh.contracts import Subjects

    async with Mesh(settings=_settings(url)) as mesh:
        await mesh.nc.jetstream().create_key_value(config=KeyValueConfig(
            bucket=Subjects(prefix).catalog_bucket, history=1, ttl=ttl, storage=StorageType.MEMORY, replicas=3,
            direct=True))


async def _durable_stream_leader(mesh: Mesh) -> str | None:
    info = await mesh.nc.jetstream().stream_info(mesh.settings.subjects.durable_stream)
    return info.cluster.leader if info.cluster is not None else None


@pytest.mark.parametrize("how", ["kill-9", "sigterm"])
async def test_restart_one_server_under_load_calls_resume_within_2s(cluster: Cluster, tmp_path: Path, how: str):
    """16 fast and 4 durable callers load the mesh; the server the client is connected to, which also leads
    the durable stream, is killed (-9, or SIGTERM as in a rolling restart) and restarted.  New fast calls
    work again within 2 s; every durable call (stream and results replicated on 3 servers) completes
    exactly once."""
    record = tmp_path / "record.log"
    # Replicated durable storage, and a short ack wait so a delivery stranded by the kill is retried soon.
    durable_env = {"TOOLMESH_DURABLE_REPLICAS": "3", "TOOLMESH_DURABLE_ACK_WAIT": "2",
                   "TOOLMESH_TEST_RECORD": str(record)}
    nodes = [_node(cluster.url(), f"chaos-n{i}", RECORDING_TOOLS, **durable_env) for i in range(2)]
    calls: list[tuple[float, float, str]] = []  # (sent, answered, outcome)
    durable_calls: dict[str, tuple[float, float, str, int]] = {}  # id -> (sent, answered, outcome, attempts)
    try:
        for node in nodes:
            node.wait_ready()
        async with Mesh(settings=_settings(cluster.url(), durable_replicas=3, durable_ack_wait=2)) as setup:
            # The nodes created the catalog with durable_replicas copies, so listing survives the kill too.
            catalog = await setup.nc.jetstream().stream_info(f"KV_{setup.subjects.catalog_bucket}")
            assert catalog.config.num_replicas == 3
            await setup.call("record", {"key": "warm-up"}, durable=True, id="warm-up")  # stream and consumer
            leader = await _durable_stream_leader(setup)
        # The worst case: the client sits on the server that leads the durable stream, and that one dies.
        # (Given one URL, the client still learns the others from the cluster and fails over to them.)
        async with Mesh(settings=_settings(cluster.url(leader), durable_replicas=3, durable_ack_wait=2)) as mesh:
            victim = cluster.name_of(mesh.nc.connected_url.geturl())
            stop = anyio.Event()
            killed_at: list[float] = []
            down_at: list[float] = []  # a SIGTERM'd server takes a moment to shut down

            async def caller() -> None:
                while not stop.is_set():
                    sent = time.monotonic()
                    result = await mesh.call("ping", {}, timeout=1.0)
                    calls.append((sent, time.monotonic(), result.error.code.value if result.is_error else "ok"))
                    if result.is_error:
                        await anyio.sleep(0.05)

            async def durable_caller(worker: int) -> None:
                # What a durable caller does with a retryable answer: ask again with the same id.
                for n in itertools.count():
                    if stop.is_set():
                        return
                    request_id = f"restart-{worker}-{n}"
                    sent, attempts = time.monotonic(), 0
                    while True:
                        attempts += 1
                        result = await mesh.call("record", {"key": request_id, "seconds": 0.01}, durable=True,
                                                 id=request_id, timeout=2.0)
                        retry = result.is_error and result.error.retryable and time.monotonic() - sent < 60
                        if not retry:
                            break
                        await anyio.sleep(0.05)
                    outcome = result.error.code.value if result.is_error else "ok"
                    durable_calls[request_id] = (sent, time.monotonic(), outcome, attempts)

            probes: list[tuple[float, float, str]] = []

            async def probe_once() -> None:
                sent = time.monotonic()
                result = await mesh.call("ping", {}, timeout=1.0)
                probes.append((sent, time.monotonic(), result.error.code.value if result.is_error else "ok"))

            async def prober() -> None:
                # A fresh call every 50 ms, never blocked by earlier ones: when do *new* calls work again?
                async with anyio.create_task_group() as probing:
                    while not stop.is_set():
                        probing.start_soon(probe_once)
                        await anyio.sleep(0.05)

            async def chaos() -> None:
                await anyio.sleep(3)
                killed_at.append(time.monotonic())
                if how == "kill-9":
                    cluster.kill(victim)
                else:
                    await anyio.to_thread.run_sync(cluster.stop, victim)
                down_at.append(time.monotonic())
                await anyio.sleep(1.0)
                await anyio.to_thread.run_sync(cluster.start, victim)
                await anyio.sleep(8)  # long enough for a JetStream leader election (up to ~9 s) to show
                stop.set()

            async with anyio.create_task_group() as tg:
                for _ in range(16):
                    tg.start_soon(caller)
                for worker in range(4):
                    tg.start_soon(durable_caller, worker)
                tg.start_soon(prober)
                tg.start_soon(chaos)
        rejoin = cluster.wait_ready()
    finally:
        for node in nodes:
            node.terminate() if node.process.poll() is None else None
            node.__exit__(None, None, None)
    kill, down = killed_at[0], down_at[0]
    after = [call for call in calls if call[0] >= kill]
    failures = [call for call in calls if call[2] != "ok"]
    last_failure = max((call[1] for call in failures), default=down)
    first_ok_after = min(call[1] for call in after if call[2] == "ok")
    successes = sorted(call[1] for call in calls if call[2] == "ok")
    longest_gap = max(b - a for a, b in itertools.pairwise(successes))
    before = [call for call in calls if call[1] < kill]
    new_after = [probe for probe in probes if probe[0] >= kill]
    first_new_ok = min(probe[0] for probe in new_after if probe[2] == "ok")

    lines = [line.split() for line in record.read_text().splitlines()]
    done = Counter(key for event, key, _ in lines if event == "done")
    durable_ok = sorted(answered for _, answered, outcome, _ in durable_calls.values() if outcome == "ok")
    durable_gap = max((b - a for a, b in itertools.pairwise([kill, *[t for t in durable_ok if t >= kill]])),
                      default=None)
    figures = {
        "how": how,
        "victim": victim,
        "victim_led_durable_stream": leader == victim,  # always: see above
        "probe_failed": dict(Counter(probe[2] for probe in probes if probe[2] != "ok")),
        "new_calls_work_again_after_s": round(first_new_ok - kill, 3),
        "calls": len(calls),
        "calls_per_s_before": round(len(before) / (kill - min(c[0] for c in calls)), 1),
        "failed": dict(Counter(call[2] for call in failures)),
        "first_success_after_kill_s": round(first_ok_after - kill, 3),
        "shutdown_took_s": round(down - kill, 3),
        "last_failure_after_server_gone_s": round(last_failure - down, 3),
        "longest_gap_between_successes_s": round(longest_gap, 3),
        "durable_calls": len(durable_calls),
        "durable_outcomes": dict(Counter(outcome for _, _, outcome, _ in durable_calls.values())),
        "durable_client_retries": sum(attempts - 1 for *_, attempts in durable_calls.values()),
        "durable_longest_gap_after_kill_s": round(durable_gap, 3) if durable_gap is not None else None,
        "durable_executed_twice": sum(1 for key in durable_calls if done[key] > 1),
        "durable_never_ran": sum(1 for key in durable_calls if done[key] == 0),
        "cluster_ready_again_s": round(rejoin, 2),
    }
    print("\nserver restart:", json.dumps(figures))
    # Fast path: calls in flight through the stopped server are lost (at most once) and end at their deadline
    # (1 s + 0.5 s grace) after it is gone; new calls work again at once; successes never stop for 2 s.
    assert figures["new_calls_work_again_after_s"] <= 2.0, figures
    assert figures["last_failure_after_server_gone_s"] <= 2.0, figures
    assert longest_gap <= 2.0, figures
    # Durable path: every call answered with its result, each executed once, and durable calls kept
    # completing after the kill (the gap includes any stream-leader election).
    assert durable_ok and durable_ok[-1] > kill, figures
    assert figures["durable_outcomes"] == {"ok": len(durable_calls)}, figures
    assert figures["durable_executed_twice"] == 0 and figures["durable_never_ran"] == 0, figures


@pytest.mark.parametrize("cluster", [("--no-advertise",), ()], ids=["partitioned", "fails-over"], indirect=True)
async def test_partitioned_node_is_isolated(cluster: Cluster, request: pytest.FixtureRequest):
    """A node whose only server dies gets no calls and leaves the catalog; it rejoins when the server returns.

    With a cluster that advertises its servers (the default) the node is not cut off at all: it
    learned the other servers' URLs and fails over, so it keeps serving.
    """
    partition = request.node.callspec.id == "partitioned"
    fast = {"TOOLMESH_HEARTBEAT": "0.5", "TOOLMESH_CATALOG_TTL": "2"}
    cut_off = _node(cluster.url("n3"), "partitioned", **fast)
    healthy = _node(cluster.url("n1"), "healthy", **fast)
    figures: dict[str, Any] = {}
    # On a cluster the catalog bucket must be replicated, or listing dies with the one server
    # holding it (docs/operations.md): create it R3 before the nodes do.
    await _replicated_catalog(cluster.url(), "tool", ttl=2.0)
    try:
        cut_off.wait_ready()
        healthy.wait_ready()
        # The client sits on n2, where no node is: NATS prefers queue subscribers on the local server.
        async with Mesh(settings=_settings(cluster.url("n2"), catalog_ttl=2.0, heartbeat=0.5)) as mesh:
            served = Counter()
            for _ in range(40):
                result = await mesh.call("work", {}, timeout=1.0)
                served[result.node or result.error.code.value] += 1
            figures["before"] = dict(served)
            killed = time.monotonic()
            cluster.kill("n3")
            served = Counter()
            worst = 0.0
            dropped: list[float] = []

            async def calls() -> None:
                nonlocal worst
                while time.monotonic() - killed < 4.0:
                    sent = time.monotonic()
                    result = await mesh.call("work", {}, timeout=1.0)
                    worst = max(worst, time.monotonic() - sent)
                    served[result.node or result.error.code.value] += 1

            listing_failures = Counter()

            async def catalog() -> None:
                while not dropped and time.monotonic() - killed < 15.0:
                    try:
                        with anyio.fail_after(1.0):
                            names = {entry.node for entry in await mesh.nodes()}
                        if "partitioned" not in names and "healthy" in names:
                            dropped.append(time.monotonic() - killed)
                    except Exception as exc:  # noqa: BLE001 - e.g. a stream leader election in progress
                        listing_failures[type(exc).__name__] += 1
                    await anyio.sleep(0.05)

            async with anyio.create_task_group() as tg:
                tg.start_soon(calls)
                tg.start_soon(catalog)
            figures["after_kill"] = dict(served)
            figures["slowest_call_after_kill_s"] = round(worst, 3)
            figures["left_catalog_after_s"] = round(dropped[0], 2) if dropped else None
            figures["listing_failures"] = dict(listing_failures)

            cluster.start("n3")
            back = time.monotonic()
            rejoined = None
            while time.monotonic() - back < 15 and rejoined is None:
                with anyio.move_on_after(0.5):
                    if "partitioned" in {entry.node for entry in await mesh.nodes()}:
                        rejoined = time.monotonic() - back
                await anyio.sleep(0.1)
            figures["rejoined_catalog_after_restart_s"] = round(rejoined, 2) if rejoined is not None else None
    finally:
        for node in (cut_off, healthy):
            node.__exit__(None, None, None)
    print(f"\n{request.node.callspec.id}:", json.dumps(figures))
    assert set(figures["before"]) == {"partitioned", "healthy"}
    if not partition:
        assert figures["after_kill"].get("partitioned", 0) > 0 and figures["after_kill"].get("timeout", 0) <= 2
        return
    # At most the calls already on their way to the cut-off node fail (timeout); then all go to the healthy one.
    assert figures["after_kill"].get("healthy", 0) >= 10 and set(figures["after_kill"]) <= {"healthy", "timeout"}
    assert figures["after_kill"].get("timeout", 0) <= 2, figures
    # catalog_ttl is 2 s; the replicated bucket may first elect a new stream leader.
    assert figures["left_catalog_after_s"] is not None and figures["left_catalog_after_s"] <= 6.0, figures
    assert figures["rejoined_catalog_after_restart_s"] is not None, figures


async def test_node_whose_tools_hang_is_isolated(cluster: Cluster):
    """One node's 'work' hangs: its calls end at their deadline, its slots are capped, callers retrying
    'unavailable'/'timeout' get through the healthy node, and its other tools still answer."""
    hung = _node(cluster.url(), "hung", TOOLMESH_TEST_HANG="1")
    good = _node(cluster.url(), "good")
    outcomes: list[tuple[str, float, int]] = []  # (final outcome, seconds, attempts)
    first_attempts: Counter[str] = Counter()
    try:
        hung.wait_ready()
        good.wait_ready()
        async with Mesh(settings=_settings(cluster.url())) as mesh:
            limiter = anyio.CapacityLimiter(8)

            async def call() -> None:
                async with limiter:
                    started = time.monotonic()
                    for attempt in range(1, 6):  # what a careful caller does with retryable errors
                        result = await mesh.call("work", {"seconds": 0.01}, timeout=1.0)
                        if attempt == 1:
                            first_attempts[result.node if not result.is_error else result.error.code.value] += 1
                        if not (result.is_error and result.error.retryable):
                            break
                        await anyio.sleep(float((result.error.details or {}).get("retry_after", 0.05)))
                    outcome = result.node if not result.is_error else result.error.code.value
                    outcomes.append((outcome, time.monotonic() - started, attempt))

            async with anyio.create_task_group() as tg:
                for _ in range(60):
                    tg.start_soon(call)
            # The hung node's other tools still answer at once.
            sent = time.monotonic()
            pings = []
            for _ in range(20):
                pings.append((await mesh.call("ping", {}, timeout=1.0)).node)
            ping_seconds = (time.monotonic() - sent) / 20
    finally:
        for node in (hung, good):
            node.__exit__(None, None, None)
    finals = Counter(outcome for outcome, _, _ in outcomes)
    figures = {
        "first_attempt": dict(first_attempts),
        "final": dict(finals),
        "mean_attempts": round(sum(a for _, _, a in outcomes) / len(outcomes), 2),
        "slowest_call_s": round(max(s for _, s, _ in outcomes), 3),
        "ping_mean_ms": round(ping_seconds * 1000, 1),
        "ping_nodes": dict(Counter(pings)),
    }
    print("\nhung tools:", json.dumps(figures))
    assert "hung" not in finals  # the hung node never produced a result
    assert finals["good"] >= 0.9 * len(outcomes), figures  # retried callers got through the healthy node
    assert figures["first_attempt"].get("timeout", 0) + figures["first_attempt"].get("unavailable", 0) > 0
    assert "hung" in figures["ping_nodes"] and figures["ping_mean_ms"] < 100, figures
    assert max(s for _, s, _ in outcomes) < 5 * 1.5, figures  # every attempt ended by its deadline
