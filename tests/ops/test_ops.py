"""ops/: the files parse and say what the docs promise; ops/cluster runs a real 3-server cluster."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml
from toolmesh._config import load_settings
from toolmesh._pipeline.authorization import AuthorizationPolicy
from toolmesh._transport.broker import find_nats_server, port_is_open

from tests.processes import ROOT, NodeProcess, toolmesh

OPS = ROOT / "ops"


def values_replicas(path: Path) -> int:
    """The number of NATS servers the Helm values ask for."""
    return yaml.safe_load(path.read_text())["config"]["cluster"]["replicas"]


def _documents(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def test_compose_file_has_a_nats_cluster_and_scalable_nodes():
    """compose.yaml: three routed JetStream servers and a toolmesh service with a health check and no fixed name."""
    compose = yaml.safe_load((OPS / "compose.yaml").read_text())
    services = compose["services"]
    nats = [services[f"nats-{i}"] for i in (1, 2, 3)]
    assert all("--js" in server["command"] and "--routes" in server["command"] for server in nats)
    node = services["toolmesh"]
    assert "container_name" not in node  # scaling needs generated names
    assert node["environment"]["TOOLMESH_NATS_URL"].count("nats://") == 3
    replicas = {"TOOLMESH_DURABLE_REPLICAS": node["environment"]["TOOLMESH_DURABLE_REPLICAS"]}
    assert load_settings(env=replicas, config_file=OPS / "no-such.toml").durable_replicas == len(nats)
    assert "toolmesh health" in " ".join(node["healthcheck"]["test"])
    assert (ROOT / node["build"]["dockerfile"]).is_file()


def test_dockerfile_builds_from_existing_paths_and_drains_on_stop():
    """The Dockerfile copies folders that exist, runs 'toolmesh up' as a non-root user and checks health."""
    text = (OPS / "docker" / "Dockerfile").read_text()
    copied = [line.split()[1] for line in text.splitlines() if line.startswith("COPY ") and "--from" not in line]
    assert copied and all((ROOT / path).exists() for path in copied), copied
    assert 'ENTRYPOINT ["toolmesh", "up"]' in text and "USER toolmesh" in text
    assert "HEALTHCHECK" in text and "toolmesh health --live" in text and "STOPSIGNAL SIGTERM" in text


def test_kubernetes_manifests_have_probes_autoscaler_and_valid_config(tmp_path: Path):
    """Deployment with startup/readiness/liveness exec probes, an HPA on it, and a toolmesh.toml that loads."""
    docs = {doc["kind"]: doc for doc in _documents(OPS / "k8s" / "toolmesh.yaml")}
    assert {"ConfigMap", "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget"} <= set(docs)
    container = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    probes = {name: container[name]["exec"]["command"] for name in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert probes["livenessProbe"] == ["toolmesh", "health", "--live"]
    assert probes["readinessProbe"] == ["toolmesh", "health"]
    assert docs["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]["name"] == docs["Deployment"]["metadata"]["name"]
    toml_text = docs["ConfigMap"]["data"]["toolmesh.toml"]
    config = tmp_path / "toolmesh.toml"
    config.write_text(toml_text)
    settings = load_settings(env={}, config_file=config)
    assert settings.nats_url == "nats://nats:4222"
    assert settings.durable_replicas == values_replicas(OPS / "k8s" / "nats-values.yaml")  # one per server
    assert AuthorizationPolicy.from_settings(settings).allows("admin", "anything")
    grace = docs["Deployment"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert settings.drain_timeout < grace
    values = yaml.safe_load((OPS / "k8s" / "nats-values.yaml").read_text())
    assert values["config"]["cluster"] == {"enabled": True, "replicas": 3}
    assert values["config"]["jetstream"]["enabled"] is True
    tomllib.loads(toml_text)


def test_nats_permissions_config_is_valid_for_nats_server():
    """nats-server -t accepts ops/nats/permissions.conf (passwords from the environment)."""
    env = {**os.environ, "TOOLMESH_NODE_PASSWORD": "a", "TOOLMESH_ALICE_PASSWORD": "b", "TOOLMESH_BOB_PASSWORD": "c"}
    checked = subprocess.run([str(find_nats_server()), "-t", "-c", str(OPS / "nats" / "permissions.conf")],
                             capture_output=True, text=True, env=env, timeout=20, check=False)
    assert checked.returncode == 0, checked.stderr + checked.stdout


def _cluster(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(OPS / "cluster"), "--dir", str(directory), *args],
                          capture_output=True, text=True, timeout=60, check=False)


def _free_base(count: int = 3) -> int:
    for _ in range(50):
        base = random.randrange(20000, 30000, 10)
        if not any(port_is_open("127.0.0.1", base + offset + i) for offset in (0, 1000, 2000) for i in range(count)):
            return base
    raise RuntimeError("no free port range")


def test_cluster_script_up_status_stop_start_down(tmp_path: Path):
    """ops/cluster: up forms a routed cluster with a JetStream leader; a node serves through it; down stops it."""
    base = _free_base()
    state = tmp_path / "cluster"
    up = _cluster(state, "up", "--port", str(base), "--cluster-port", str(base + 1000), "--http-port", str(base + 2000),
                  "--json")
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        report = json.loads(up.stdout)
        assert report["ready"] and {server["routes"] >= 2 for server in report["servers"]} == {True}
        url = _cluster(state, "url").stdout.strip()
        assert url.count("nats://") == 3
        with NodeProcess("examples/security/secured_tools.py", "--nats", url, "--name", "ops-node",
                         env={"TOOLMESH_PLUGINS": "python"}):
            answer = toolmesh("call", "echo", '{"message": "through the cluster"}', "--nats", url)
            health = toolmesh("health", "--node", "ops-node", "--json", "--nats", url)
            missing = toolmesh("health", "--node", "no-such-node", "--json", "--nats", url)
        assert answer.stdout.strip() == "through the cluster", answer.stderr
        assert health.returncode == 0 and json.loads(health.stdout)["healthy"], health.stdout + health.stderr
        assert missing.returncode == 1 and json.loads(missing.stdout)["answered"] is False

        assert _cluster(state, "stop", "n2").returncode == 0
        degraded = _cluster(state, "status", "--json")
        assert degraded.returncode == 1
        assert [server["pid"] is None for server in json.loads(degraded.stdout)["servers"]] == [False, True, False]
        assert _cluster(state, "start", "n2").returncode == 0
        healed = _cluster(state, "up", "--json")  # 'up' on a running cluster waits for it to be ready again
        assert healed.returncode == 0, healed.stdout + healed.stderr
    finally:
        down = _cluster(state, "down", "--purge")
    assert down.returncode == 0 and not state.exists()
    assert not any(port_is_open("127.0.0.1", base + i) for i in range(3))


def test_health_passes_liveness_but_fails_readiness_without_nats():
    """toolmesh health: a NATS outage is no reason to restart a node (--live passes) but it is not ready."""
    from tests.processes import free_port

    url = f"nats://127.0.0.1:{free_port()}"
    live = toolmesh("health", "--live", "--node", "n", "--json", "--nats", url)
    ready = toolmesh("health", "--node", "n", "--json", "--nats", url)
    assert live.returncode == 0 and json.loads(live.stdout)["nats"] is False
    assert ready.returncode == 1
