"""``toolmesh health``: is a node alive / ready?  Made for container probes (exec).

A node has no HTTP port; it answers the NATS service protocol instead.  The
check sends ``$SRV.PING.toolmesh.<node>`` and reads the catalog:

* ``--live`` (liveness): fails when the node does not answer its ping — a wedged
  node — and when the embedded broker (no NATS URL configured) cannot be
  reached: the local nodes run that broker and bring it back when it dies, so a
  node left without one is broken.  An outage of an external NATS (a URL is
  configured) is not the node's fault, and restarting every node for it would
  only add load when NATS comes back, so then the check passes.
* default (readiness): the node answers its ping *and* its catalog entry is
  present and not draining — it takes calls.

Exit code 0 when healthy, 1 when not, 2 on bad usage; ``--json`` prints the facts.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import nats.errors
import typer
from nats.micro.service import ServiceVerb, control_subject
from toolmesh._cli.options import error_console, fail
from toolmesh._config import load_settings
from toolmesh._errors import BrokerError, CallTimeout, ToolmeshError, ToolUnavailable
from toolmesh._transport.mesh import Mesh
from toolmesh._transport.nats_errors import nats_error
from toolmesh._transport.service_protocol import SERVICE_NAME

__all__ = ["check_node", "health"]

PING_TIMEOUT = 2.0
"""Seconds a node has to answer its ping."""


async def check_node(mesh: Mesh, node: str, *, timeout: float = PING_TIMEOUT) -> dict[str, Any]:
    """Ping ``node`` and look it up in the catalog; returns ``answered``, ``in_catalog``, ``draining``, ``tools``."""
    facts: dict[str, Any] = {"node": node, "answered": False, "in_catalog": False, "draining": None, "tools": 0}
    assert mesh.nc is not None
    subject = control_subject(ServiceVerb.PING, SERVICE_NAME, node)
    try:
        await mesh.nc.request(subject, b"", timeout=timeout)
        facts["answered"] = True
    except nats.errors.Error as exc:
        error = nats_error(exc, subject, f"the ping of node {node!r}")
        if not isinstance(error, (ToolUnavailable, CallTimeout)):  # silence is an answer, the rest fails
            raise error from exc
    for entry in await mesh.nodes():
        if entry.node == node:
            facts.update(in_catalog=True, draining=entry.draining, tools=len(entry.tools))
    return facts


def health(*, node: str | None, live: bool, nats_url: str | None, prefix: str | None, as_json: bool) -> None:
    """Run ``toolmesh health`` (its options are declared in toolmesh._cli.commands): exit 0 when healthy, 1 when not."""
    try:
        settings = load_settings({"nats_url": nats_url, "prefix": prefix})
    except ToolmeshError as exc:
        raise fail(str(exc)) from None
    name = node or settings.node_name
    if not name:
        raise fail("name the node with --node NAME or TOOLMESH_NODE_NAME (start it with 'toolmesh up --name NAME')")

    async def probe() -> dict[str, Any]:
        try:
            async with Mesh(settings=settings, name="toolmesh-health") as mesh:
                return await check_node(mesh, name)
        except BrokerError as exc:
            return {"node": name, "nats": False, "error": str(exc)}

    facts = anyio.run(probe)
    facts["broker"] = "embedded" if settings.nats_url is None else "external"
    if facts.get("nats") is False:
        # An external NATS outage: do not restart the node for it (but it is not ready). No embedded
        # broker: the nodes that run it are gone or could not restart it.
        healthy = live and settings.nats_url is not None
    else:
        facts["nats"] = True
        healthy = facts["answered"] and (live or (facts["in_catalog"] and not facts["draining"]))
    facts["healthy"] = healthy
    if as_json:
        print(json.dumps(facts))
    else:
        error_console.print(f"node {name}: {'healthy' if healthy else 'unhealthy'} {facts}", highlight=False,
                            markup=False)
    raise typer.Exit(0 if healthy else 1)
