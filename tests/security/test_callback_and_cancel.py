"""A caller cannot aim a node at foreign subjects (callback, reply) nor cancel another caller's call.

Real nats-server with the shipped ops/nats/permissions.conf (users node, alice,
bob), real nodes; the anonymous cases run on the session's plain broker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any

import anyio
import msgspec
import pytest
import toolmesh
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from toolmesh._config import Settings
from toolmesh._pipeline.identity import sign_request
from toolmesh._transport.mesh import Mesh, connect_nats
from toolmesh._transport.node import Node
from toolmesh.contracts import CancelRequest, ErrorCode, ToolCallback, ToolResult, decode_result, encode
from toolmesh.testing import eventually, running_node, test_settings

from tests.nats_servers import NatsServer
from tests.processes import ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop

PASSWORDS = {"TOOLMESH_NODE_PASSWORD": "node-pw-0123", "TOOLMESH_ALICE_PASSWORD": "alice-pw-0123",
             "TOOLMESH_BOB_PASSWORD": "bob-pw-0123"}
SECRET = "identity-secret-0123456789"
WAIT = 10.0  # generous safety limit for things that happen at once


class Tools:
    """The tools of one test, recording what ran."""

    def __init__(self) -> None:
        self.wiped: list[bool] = []
        self.lingering: list[str] = []

        @toolmesh.tool
        async def echo(message: str, context: toolmesh.CallContext, ask: bool = False) -> str:
            """Return the message, reporting progress and a log line (and asking the caller, if told to)."""
            await context.progress(1, 1, "echoing")
            await context.log("info", f"echo {message}")
            if ask:
                answer = await context.ask("elicitation", {"message": f"echo {message}?"})
                return f"{message}: {answer['action']}"
            return message

        @toolmesh.tool(name="admin.wipe")
        def admin_wipe(confirm: bool = False) -> str:
            """Record that it ran."""
            self.wiped.append(confirm)
            return "wiped"

        @toolmesh.tool
        async def linger(seconds: float) -> float:
            """Sleep, recording whether it finished or was cancelled."""
            try:
                await anyio.sleep(seconds)
            except anyio.get_cancelled_exc_class():
                self.lingering.append("cancelled")
                raise
            self.lingering.append("finished")
            return seconds

        self.sources = [echo, admin_wipe, linger]


@pytest.fixture(scope="module")
def permissions_server() -> Iterator[NatsServer]:
    permissions = (ROOT / "ops" / "nats" / "permissions.conf").read_text()
    files = {"permissions.conf": permissions}
    with NatsServer("include ./permissions.conf", env=PASSWORDS, files=files) as server:
        yield server


def _user(server: NatsServer, user: str, **values: Any) -> Settings:
    # The shipped permissions are written for the default prefix "tool".
    password = PASSWORDS[f"TOOLMESH_{user.upper()}_PASSWORD"]
    settings = test_settings(server.url)
    return msgspec.structs.replace(settings, prefix="tool", nats_user=user, nats_password=password, **values)


class Recorder:
    """A node-user connection that records every message on some subjects (the node user may read all)."""

    def __init__(self) -> None:
        self.messages: list[Msg] = []

    async def on_message(self, msg: Msg) -> None:
        self.messages.append(msg)


async def _started_id(
    events: Mesh, tool: str, calling: Coroutine[Any, Any, ToolResult]
) -> tuple[str, asyncio.Task[ToolResult]]:
    """Start ``calling`` and return the request id its ``started`` event shows, as any observer sees it."""
    subscription = await events._connection().subscribe(events.subjects.events("started", tool))
    await events._connection().flush()
    task = asyncio.get_running_loop().create_task(calling)
    message = await subscription.next_msg(timeout=WAIT)
    await subscription.unsubscribe()
    return msgspec.json.decode(message.data)["request_id"], task


async def _delivered(node: Node, watcher: NATS, subscriptions: list[Any]) -> None:
    """Everything the node published so far has reached the watcher's callbacks.

    The node ran every call (so it published whatever it was going to), the server has all of it once the
    node's connection is flushed, and the watcher's flush answers only after the server passed it every
    matching message; last, the watcher's callbacks take each from its queue.
    """
    await eventually(lambda: node.inflight == 0, timeout=WAIT)
    assert node.nc is not None
    await node.nc.flush(timeout=WAIT)
    await watcher.flush(timeout=WAIT)
    await eventually(lambda: all(sub.pending_msgs == 0 for sub in subscriptions), timeout=WAIT)


async def test_a_callback_outside_the_callers_namespace_is_refused_before_the_tool_runs(
    permissions_server: NatsServer,
) -> None:
    """As bob: callbacks into admin.wipe's request subject, the catalog, the durable results or alice's
    callbacks are answered bad_request; nothing is published there and admin.wipe never runs."""
    tools = Tools()
    server = permissions_server
    node = _user(server, "node")
    targets = {
        "request": "tool.request.admin~wipe",
        "catalog": "$KV.toolmesh_catalog_tool.evil-node",
        "results": "$KV.toolmesh_results_tool.victim-request",
        "alice": "tool.callback.alice.stolen",
        "alice_inbox": "tool.result.alice.x.y",
        "wildcard": "tool.callback.bob.>",
        "empty_token": "tool.callback.bob..x",
    }
    recorder = Recorder()
    async with running_node(node, sources=tools.sources) as serving, \
            Mesh(settings=_user(server, "bob")) as bob, Mesh(settings=_user(server, "alice")) as alice:
        watcher = await connect_nats(server.url, name="watcher", settings=node)
        try:
            subscriptions = [
                await watcher.subscribe(subject, cb=recorder.on_message)
                for subject in (*targets.values(), "tool.callback.alice.>", "tool.result.alice.>")
                if ">" not in subject and ".." not in subject
            ]
            await watcher.flush()
            outcomes: dict[str, ToolResult] = {}
            for name, target in targets.items():
                request_id = "victim-request" if name == "results" else None
                request = bob.new_request("echo", {"message": name}, id=request_id)
                outcomes[name] = await bob.send(msgspec.structs.replace(request, callback=target))
            # The same through the durable path: refused before the call is queued.
            durable = msgspec.structs.replace(
                bob.new_request("echo", {"message": "durable"}), durable=True, callback=targets["request"]
            )
            reply = await bob._connection().request("tool.request.echo", encode(durable), timeout=WAIT)
            outcomes["durable"] = decode_result(reply.data)
            # The node still answers, callbacks included, for both users.
            received: list[ToolCallback] = []
            ok = await bob.call("echo", {"message": "still here"}, on_callback=received.append)
            await _delivered(serving, watcher, subscriptions)  # anything published by mistake is recorded now
            names = await alice.node_names()
            alice_inbox = alice.inbox()
        finally:
            await watcher.close()
    assert tools.wiped == []
    # nothing reached the targets (only alice's own replies, to her catalog read, arrived in her namespace)
    assert [msg.subject for msg in recorder.messages if not msg.subject.startswith(alice_inbox + ".")] == []
    assert "evil-node" not in names and names
    for name, outcome in outcomes.items():
        assert outcome.is_error and outcome.error.code == ErrorCode.BAD_REQUEST, (name, outcome)
    assert "outside this caller's own namespace" in outcomes["request"].error.message
    assert "tool.callback.bob." in outcomes["request"].error.message
    assert "not a literal NATS subject" in outcomes["wildcard"].error.message
    assert ok.structured_content == "still here"
    assert [callback.kind for callback in received] == ["progress", "log"]


async def test_a_reply_subject_outside_every_inbox_gets_no_answer(permissions_server: NatsServer) -> None:
    """bob asking for replies on admin.wipe's subject or a KV key gets nothing published there."""
    tools = Tools()
    server = permissions_server
    node = _user(server, "node")
    recorder = Recorder()
    async with running_node(node, sources=tools.sources) as serving, \
            Mesh(settings=_user(server, "bob")) as bob:
        watcher = await connect_nats(server.url, name="watcher", settings=node)
        try:
            watched = ("tool.request.admin~wipe", "$KV.toolmesh_catalog_tool.evil-node", "elsewhere.>")
            subscriptions = [await watcher.subscribe(subject, cb=recorder.on_message) for subject in watched]
            await watcher.flush()
            nc = bob._connection()
            request = encode(bob.new_request("echo", {"message": "m"}))
            for reply in ("tool.request.admin~wipe", "$KV.toolmesh_catalog_tool.evil-node", "elsewhere.x"):
                await nc.publish("tool.request.echo", request, reply=reply)
            await nc.flush()
            ok = await bob.call("echo", {"message": "answered"})  # the node got it after the three above
            await _delivered(serving, watcher, subscriptions)
        finally:
            await watcher.close()
    assert recorder.messages == [] and tools.wiped == []
    assert ok.structured_content == "answered"


async def test_each_user_reads_only_its_own_callbacks(permissions_server: NatsServer) -> None:
    """bob may not subscribe to alice's callbacks; each user's own callbacks work, elicitation answers too."""
    tools = Tools()
    server = permissions_server
    errors: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        errors.append(exc)

    async with running_node(_user(server, "node"), sources=tools.sources), \
            Mesh(settings=_user(server, "alice")) as alice, Mesh(settings=_user(server, "bob")) as bob:
        spy = await connect_nats(server.url, name="bob-spy", settings=_user(server, "bob"), error_cb=on_error)
        snooped: list[Msg] = []
        try:

            async def snoop(msg: Msg) -> None:
                snooped.append(msg)

            for subject in ("tool.callback.alice.>", "tool.callback.>"):
                await spy.subscribe(subject, cb=snoop)
            await spy.flush()
            with anyio.fail_after(WAIT):
                while len(errors) < 2:
                    await anyio.sleep(0.02)
            answered: dict[str, list[str]] = {}
            results = {}
            for name, mesh in (("alice", alice), ("bob", bob)):
                kinds: list[str] = []
                answered[name] = kinds

                def handler(callback: ToolCallback, kinds: list[str] = kinds) -> object:
                    kinds.append(callback.kind)
                    return {"action": "accept"} if callback.kind == "elicitation" else None

                results[name] = await mesh.call("echo", {"message": name, "ask": True}, on_callback=handler)
            subject = alice.callback_subject()
        finally:
            await spy.close()
    assert all("permissions violation for subscription" in str(error).lower() for error in errors), errors
    assert {str(error).split('"')[1] for error in errors} == {"tool.callback.alice.>", "tool.callback.>"}
    assert snooped == []
    assert results["alice"].structured_content == "alice: accept"
    assert results["bob"].structured_content == "bob: accept"
    assert answered["alice"] == answered["bob"] == ["progress", "log", "elicitation"]
    assert subject.startswith("tool.callback.alice.")


@pytest.mark.parametrize("secret", [None, SECRET], ids=["nats-users", "signed-identity"])
async def test_only_the_caller_cancels_its_call_and_hears_cancelled_at_once(
    permissions_server: NatsServer, secret: str | None
) -> None:
    """bob's cancels of alice's call (its id seen on tool.event.>) change nothing; alice's own cancel stops it
    and answers her `cancelled` at once; the node keeps answering other calls throughout."""
    tools = Tools()
    server = permissions_server
    node = _user(server, "node", identity_secret=secret)
    async with running_node(node, sources=tools.sources), \
            Mesh(settings=_user(server, "alice", identity_secret=secret)) as alice, \
            Mesh(settings=_user(server, "bob")) as bob:
        # bob cancels with the id alice's events show, with and without a guessed inbox.
        request = alice.new_request("linger", {"seconds": 1.5})
        request_id, calling = await _started_id(alice, "linger", alice.send(request))
        assert request_id == request.id
        guesses = [None, "tool.result.alice", "tool.result.bob", bob.inbox()]
        if secret is not None:  # a signed call needs the signed identity: even a leaked inbox does not do
            guesses.append(alice.inbox())
        for inbox in guesses:
            await bob._connection().publish("tool.cancel", encode(CancelRequest(id=request_id, inbox=inbox)))
        await bob._cancel(msgspec.structs.replace(request, caller=None))  # bob's own connection, his inbox
        if secret is not None:  # signed, but for another identity: refused as well
            body = encode(CancelRequest(id=request_id, inbox=alice.inbox()))
            headers = sign_request(secret, "mallory", "tool.cancel", body)
            await alice._connection().publish("tool.cancel", body, headers=headers)
        during = await bob.call("echo", {"message": "x"})
        survived = await calling
        # alice's own cancel, sent while she still waits: she hears `cancelled` at once.
        own = alice.new_request("linger", {"seconds": 60}, timeout=60)
        _, waiting = await _started_id(alice, "linger", alice.send(own))
        await alice._cancel(own)
        with anyio.fail_after(WAIT):
            cancelled = await waiting
        # Cancelling the waiting task (the caller gives up) stops the tool too.
        request = alice.new_request("linger", {"seconds": 60}, timeout=60)
        _, given_up = await _started_id(alice, "linger", alice.send(request))
        given_up.cancel()
        with anyio.fail_after(WAIT):
            while tools.lingering.count("cancelled") < 2:
                await anyio.sleep(0.02)
        after = await alice.call("echo", {"message": "after"})
    assert survived.structured_content == 1.5 and not survived.is_error
    assert during.structured_content == "x"
    assert cancelled.is_error and cancelled.error.code == ErrorCode.CANCELLED, cancelled
    assert cancelled.id == own.id and "cancelled by its caller" in cancelled.error.message
    assert tools.lingering == ["finished", "cancelled", "cancelled"]
    assert after.structured_content == "after"


async def test_anonymous_callers_cancel_only_their_own_calls(toolmesh_settings: Settings) -> None:
    """Without NATS users or identities a second connection's cancel is refused, the caller's own accepted,
    on the fast path and for durable calls (whose stored result then says `cancelled`)."""
    tools = Tools()
    async with running_node(toolmesh_settings, sources=tools.sources), \
            Mesh(settings=toolmesh_settings) as caller, Mesh(settings=toolmesh_settings) as other:
        assert caller.inbox() != other.inbox()
        outcomes: dict[str, ToolResult] = {}
        for durable in (False, True):
            label = "durable" if durable else "fast"
            request = caller.new_request("linger", {"seconds": 1.5}, durable=durable)
            request_id, calling = await _started_id(other, "linger", caller.send(request))
            await other._cancel(request)
            client_only = caller.inbox().rsplit(".", 1)[0]  # the client token without the connection's
            for inbox in (client_only, None):
                body = encode(CancelRequest(id=request_id, inbox=inbox))
                await other._connection().publish(caller.subjects.cancel, body)
            outcomes[f"{label}-survived"] = await calling
            request = caller.new_request("linger", {"seconds": 60}, timeout=60, durable=durable)
            _, waiting = await _started_id(other, "linger", caller.send(request))
            await caller._cancel(request)
            with anyio.fail_after(WAIT):
                outcomes[label] = await waiting
            outcomes[f"{label}-ok"] = await other.call("echo", {"message": label})
        stored = await caller.durable_result(request.id)
    for label in ("fast", "durable"):
        assert outcomes[f"{label}-survived"].structured_content == 1.5, outcomes[f"{label}-survived"]
        assert outcomes[label].error.code == ErrorCode.CANCELLED, outcomes[label]
        assert outcomes[f"{label}-ok"].structured_content == label
    assert stored is not None and stored.error.code == ErrorCode.CANCELLED
    assert tools.lingering == ["finished", "cancelled", "finished", "cancelled"]


async def test_a_callback_request_without_a_reply_subject_does_not_run(toolmesh_settings: Settings) -> None:
    """A fire-and-forget request naming a callback has no caller namespace: the tool does not run."""
    tools = Tools()
    async with running_node(toolmesh_settings, sources=tools.sources), \
            Mesh(settings=toolmesh_settings) as mesh:
        nc: NATS = mesh._connection()
        request = mesh.new_request("admin.wipe", {"confirm": True})
        await nc.publish(mesh.subjects.request("admin.wipe"),
                         encode(msgspec.structs.replace(request, callback=mesh.callback_subject())))
        await nc.flush()
        ok = await mesh.call("echo", {"message": "next"})
        allowed = await mesh.call("admin.wipe", {"confirm": True}, on_callback=lambda callback: None)
    assert ok.structured_content == "next"
    assert tools.wiped == [True]  # only the call with a reply subject ran
    assert allowed.structured_content == "wiped"
