"""Stored durable results answer only the call that made them: same tool, arguments and caller.

Request ids are not secret (events and callbacks carry them), so a replayed id
must never fetch another caller's stored result.  Attacked on real nats-server
processes: the shipped ``ops/nats/permissions.conf`` with a node holding an
``identity_secret`` and an ``[authorization]`` table, and an open broker where
clients use JetStream themselves.
"""

from __future__ import annotations

import msgspec
import nats.errors
import pytest
import toolmesh
from toolmesh._config import Settings
from toolmesh._pipeline.identity import sign_request
from toolmesh._transport.durable import ensure_durable_storage, result_key
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ErrorCode, ToolRequest, ToolResult, decode_result, encode
from toolmesh.testing import running_node, test_settings

from tests.nats_servers import NatsServer
from tests.processes import ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop

SECRET = "durable-results-secret-0123456789"
TOOLS = ["examples/security/secured_tools.py"]
POLICY = {"authorization": {"identities": {"alice": ["*"], "bob": ["echo", "math.*"]}}}
PASSWORDS = {"TOOLMESH_NODE_PASSWORD": "node-pw-0123", "TOOLMESH_ALICE_PASSWORD": "alice-pw-0123",
             "TOOLMESH_BOB_PASSWORD": "bob-pw-0123"}


class Revocable:
    """An authorization plugin that can withdraw a grant after a call was made."""

    def __init__(self) -> None:
        self.revoked: set[tuple[str | None, str]] = set()

    @toolmesh.hookimpl
    def toolmesh_authorize(self, identity: str | None, spec: toolmesh.contracts.ToolSpec) -> bool | None:
        return False if (identity, spec.name) in self.revoked else None


def _permissions_server() -> NatsServer:
    permissions = (ROOT / "ops" / "nats" / "permissions.conf").read_text()
    return NatsServer("include ./permissions.conf", env=PASSWORDS, files={"permissions.conf": permissions})


def _user(url: str, user: str, **values: object) -> Settings:
    # The ops permissions file is written for the default prefix "tool".
    return msgspec.structs.replace(
        test_settings(url), prefix="tool", nats_user=user, nats_password=PASSWORDS[f"TOOLMESH_{user.upper()}_PASSWORD"],
        **values,
    )


async def _durable(mesh: Mesh, identity: str, tool: str, arguments: dict, request_id: str) -> ToolResult:
    """A durable call the way a permissioned caller makes it: through a node, on the tool's request subject."""
    subject = mesh.subjects.request(tool)
    body = encode(ToolRequest(id=request_id, tool=tool, arguments=arguments, durable=True, timeout=10))
    reply = await mesh.nc.request(subject, body, timeout=15, headers=sign_request(SECRET, identity, subject, body))
    return decode_result(reply.data)


def _refused(result: ToolResult, request_id: str) -> bool:
    return (
        result.error is not None and result.error.code == ErrorCode.BAD_REQUEST
        and f"request id {request_id!r} was used by another durable call" in result.error.message
        and "use a fresh id" in result.error.message and result.structured_content is None
    )


async def test_replayed_durable_id_is_refused_and_the_genuine_retry_still_gets_its_result():
    """Under the shipped permissions bob replays alice's durable ids: refused on another tool, on the same tool
    with other arguments and with hers; he cannot read or overwrite the results bucket; alice's retry with the
    same id, tool and arguments gets her stored result, and only while she is still authorized."""
    revocable = Revocable()
    with _permissions_server() as server:
        node = _user(server.url, "node", identity_secret=SECRET, plugins=POLICY)
        async with running_node(node, sources=TOOLS, plugins=[revocable]):
            alice_settings = _user(server.url, "alice", identity="alice", identity_secret=SECRET)
            bob_settings = _user(server.url, "bob", identity="bob", identity_secret=SECRET)
            async with Mesh(settings=alice_settings) as alice, Mesh(settings=bob_settings) as bob:
                wiped = await _durable(alice, "alice", "admin.wipe", {"confirm": True}, "wipe-1")
                added = await _durable(alice, "alice", "math.add", {"a": 1, "b": 2}, "add-1")
                replays = {
                    "another tool": await _durable(bob, "bob", "echo", {"message": "hi"}, "wipe-1"),
                    "same call, another caller": await _durable(bob, "bob", "math.add", {"a": 1, "b": 2}, "add-1"),
                    "other arguments": await _durable(bob, "bob", "math.add", {"a": 5, "b": 5}, "add-1"),
                    "her own id, other arguments": await _durable(alice, "alice", "math.add", {"a": 2, "b": 2},
                                                                   "add-1"),
                }
                # The bucket itself is out of bob's reach: reading and writing are refused by the server.
                key = result_key("wipe-1")
                with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
                    await bob.nc.request(
                        f"$JS.API.DIRECT.GET.KV_toolmesh_results_tool.$KV.toolmesh_results_tool.{key}", b"", timeout=1
                    )
                await bob.nc.publish(f"$KV.toolmesh_results_tool.{key}", b'{"result": "forged"}')
                await bob.nc.flush()
                wiped_again = await _durable(alice, "alice", "admin.wipe", {"confirm": True}, "wipe-1")
                added_again = await _durable(alice, "alice", "math.add", {"a": 1, "b": 2}, "add-1")
                revocable.revoked.add(("alice", "math.add"))
                added_revoked = await _durable(alice, "alice", "math.add", {"a": 1, "b": 2}, "add-1")
                still_answering = await bob.call("echo", {"message": "still here"})
    assert wiped.structured_content == "wiped" and added.structured_content == 3, (wiped, added)
    for name, replay in replays.items():
        assert _refused(replay, replay.id), (name, replay)
        assert "wiped" not in replay.text and not replay.error.retryable
    # The genuine retries are answered from the store: the very same result, nothing ran again.
    assert wiped_again == wiped and added_again == added
    assert added_revoked.error.code == ErrorCode.REJECTED and added_revoked.structured_content is None
    assert "identity 'alice' may not call tool 'math.add'" in added_revoked.error.message
    assert still_answering.structured_content == "still here"


async def test_clients_with_jetstream_access_get_only_their_own_stored_results(toolmesh_broker):
    """Where clients use JetStream themselves (no NATS permissions), the client checks the binding too: bob's
    replay and bob's durable_result of alice's id are refused; alice gets hers; an overwritten entry is refused,
    never answered with "it stays queued and will run"."""
    node = test_settings(toolmesh_broker.url, identity_secret=SECRET, plugins=POLICY)
    async with (
        running_node(node, sources=TOOLS),
        Mesh(settings=msgspec.structs.replace(node, identity="alice")) as alice,
        Mesh(settings=msgspec.structs.replace(node, identity="bob")) as bob,
        Mesh(settings=msgspec.structs.replace(node, identity_secret=None)) as stranger,
    ):
        first = await alice.call("admin.wipe", {"confirm": True}, durable=True, id="jwipe-1")
        replay = await bob.call("echo", {"message": "hi"}, durable=True, id="jwipe-1")
        bob_reads = await bob.durable_result("jwipe-1")
        stranger_reads = await stranger.durable_result("jwipe-1")
        alice_reads = await alice.durable_result("jwipe-1")
        alice_reads_bound = await alice.durable_result("jwipe-1", tool="admin.wipe", arguments={"confirm": True})
        alice_reads_other_tool = await alice.durable_result("jwipe-1", tool="echo")
        again = await alice.call("admin.wipe", {"confirm": True}, durable=True, id="jwipe-1")
        # Someone with write access to the bucket overwrites a stored result.
        await alice.call("math.add", {"a": 1, "b": 1}, durable=True, id="jadd-1")
        kv = await ensure_durable_storage(alice.nc.jetstream(), node)
        await kv.put(result_key("jadd-1"), b'{"evil": true}')
        overwritten = await alice.call("math.add", {"a": 1, "b": 1}, durable=True, id="jadd-1", timeout=1)
    assert first.structured_content == "wiped", first
    assert _refused(replay, "jwipe-1") and "wiped" not in replay.text
    assert _refused(bob_reads, "jwipe-1") and _refused(stranger_reads, "jwipe-1")
    assert alice_reads == first and alice_reads_bound == first
    assert _refused(alice_reads_other_tool, "jwipe-1")
    assert again == first
    assert _refused(overwritten, "jadd-1"), overwritten
    assert "queued" not in overwritten.error.message
