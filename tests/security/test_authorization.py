"""Caller identity, the authorization hook and policy, redaction and argument limits (default run)."""

from __future__ import annotations

import logging
import time

import msgspec
import pytest
import toolmesh
from toolmesh._config import Settings, load_settings
from toolmesh._errors import CallRejected, ConfigError
from toolmesh._pipeline.authorization import AuthorizationPolicy, visible_tools
from toolmesh._pipeline.identity import IDENTITY_HEADER, SIGNATURE_HEADER, sign_request, verify_request
from toolmesh._telemetry.logs import SecretRedactor, redact, redact_arguments, redact_url, secret_arguments
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import Caller, ErrorCode, ToolRequest, ToolSpec, decode_result, encode
from toolmesh.testing import running_node

SECRET = "test-identity-secret-0123456789"
TOOLS = ["examples/security/secured_tools.py"]
POLICY = {
    "authorization": {
        "anonymous": ["echo"],
        "identities": {"alice": ["*"], "bob": ["echo", "math.*", "login"]},
    }
}


# ------------------------------------------------------------------ signatures


def test_signature_verifies_and_binds_identity_subject_and_body() -> None:
    """A signature verifies for its own identity, subject and body, and for nothing else."""
    headers = sign_request(SECRET, "alice", "tool.request.echo", b'{"id":"1"}')
    assert verify_request(headers, "tool.request.echo", b'{"id":"1"}', SECRET) == "alice"
    assert verify_request(None, "tool.request.echo", b"{}", SECRET) is None
    forged = [
        ({**headers, IDENTITY_HEADER: "mallory"}, "tool.request.echo", b'{"id":"1"}', SECRET),
        (headers, "tool.request.admin~wipe", b'{"id":"1"}', SECRET),
        (headers, "tool.request.echo", b'{"id":"2"}', SECRET),
        (headers, "tool.request.echo", b'{"id":"1"}', "another-secret-0123456789"),
        ({IDENTITY_HEADER: "alice"}, "tool.request.echo", b'{"id":"1"}', SECRET),
        ({**headers, SIGNATURE_HEADER: "v1.abc.def"}, "tool.request.echo", b'{"id":"1"}', SECRET),
        (headers, "tool.request.echo", b'{"id":"1"}', None),
    ]
    messages = []
    for case in forged:
        with pytest.raises(CallRejected) as caught:
            verify_request(*case)
        messages.append(caught.value.message)
    assert "does not verify" in messages[0] and "does not verify" in messages[3]
    assert "is not signed" in messages[4] and "malformed" in messages[5] and "no identity_secret" in messages[6]


def test_stale_signature_is_refused() -> None:
    """A signature older than the replay window is refused, naming the window and the fix."""
    headers = sign_request(SECRET, "alice", "s", b"", now=time.time() - 3600)
    with pytest.raises(CallRejected, match=r"outside the 300s window.*NTP"):
        verify_request(headers, "s", b"", SECRET)


# ------------------------------------------------------------------ settings and policy


def test_security_settings_are_validated() -> None:
    """Contradictory or weak security settings fail when Settings is built, naming the fix."""
    cases = [
        ({"nats_user": "a", "nats_password": "p", "nats_token": "t"}, "nats_user and nats_token"),
        ({"nats_password": "p"}, "TOOLMESH_NATS_USER"),
        ({"nats_user": "a"}, "TOOLMESH_NATS_PASSWORD"),
        ({"tls_cert": "c.pem"}, "set both or neither"),
        ({"identity_secret": "short"}, "at least 16"),
        ({"max_argument_size": 0}, "at least 1 byte"),
    ]
    for values, fragment in cases:
        with pytest.raises(ConfigError, match=fragment):
            Settings(**values)


def test_security_settings_come_from_env_and_are_never_printed() -> None:
    """TOOLMESH_NATS_* and TOOLMESH_IDENTITY_* reach Settings; repr hides secrets and URL credentials."""
    settings = load_settings(env={
        "TOOLMESH_NATS_USER": "alice", "TOOLMESH_NATS_PASSWORD": "pw-alice-secret",
        "TOOLMESH_IDENTITY_SECRET": SECRET, "TOOLMESH_NATS_URL": "nats://bob:hunter22@127.0.0.1:4222",
    }, config_file=None)
    assert (settings.nats_user, settings.nats_password, settings.identity_secret) == ("alice", "pw-alice-secret", SECRET)
    shown = repr(settings)
    assert "pw-alice-secret" not in shown and SECRET not in shown and "hunter22" not in shown
    assert "nats://bob:***@127.0.0.1:4222" in shown


def test_policy_parsing_and_matching() -> None:
    """Globs per identity, '*' for other identities, 'anonymous' for unsigned callers; bad tables are named."""
    policy = AuthorizationPolicy.from_table(
        {"anonymous": ["echo"], "identities": {"alice": ["*"], "*": ["math.*"]}}
    )
    assert policy.allows("alice", "admin.wipe") and policy.allows("carol", "math.add")
    assert not policy.allows("carol", "admin.wipe") and not policy.allows(None, "math.add")
    assert policy.allows(None, "echo")
    with pytest.raises(ConfigError, match=r"authorization.identities.bob"):
        AuthorizationPolicy.from_table({"identities": {"bob": "echo"}})
    with pytest.raises(ConfigError, match="unknown key"):
        AuthorizationPolicy.from_table({"allow": []})


@pytest.mark.anyio
async def test_a_broken_policy_stops_the_kernel_at_start_up() -> None:
    """An invalid [authorization] table fails kernel start-up with the entry named, not the first call."""
    kernel = toolmesh.Kernel(settings=Settings(plugins={"authorization": {"anonymous": "echo"}}))
    with pytest.raises(ConfigError, match=r"\[authorization.anonymous\] must be a list"):
        await kernel.start([])


# ------------------------------------------------------------------ redaction


def test_url_credentials_and_secret_arguments_are_redacted() -> None:
    """Passwords and tokens in URLs, secret-named and writeOnly arguments never reach a log line."""
    assert redact_url("a nats://u:pw@h:1,tls://tok@h:2 b") == "a nats://u:***@h:1,tls://***@h:2 b"
    assert redact("cannot reach nats://u:pw@h:1") == "cannot reach nats://u:***@h:1"
    login = ToolSpec(name="login", source="test", input_schema={
        "type": "object", "properties": {"user": {"type": "string"}, "api_key": {"type": "string", "writeOnly": True},
                                         "pin": {"type": "string", "format": "password"}}})
    assert secret_arguments(login) == {"api_key", "pin"}
    assert redact_arguments(login, {"user": "ann", "api_key": "k" * 20, "db_password": "p"}) == {
        "user": "ann", "api_key": "***", "db_password": "***"}
    record = logging.makeLogRecord({"msg": "joined %s", "args": ("nats://u:pw@h",), "password": "x"})
    SecretRedactor().filter(record)
    assert record.getMessage() == "joined nats://u:***@h" and record.password == "***"


# ------------------------------------------------------------------ in-process kernel


@pytest.mark.anyio
async def test_kernel_enforces_policy_argument_size_and_hides_secret_values() -> None:
    """The admit step refuses by identity (rejected) and by argument size (too_large) before the tool runs."""
    settings = Settings(plugins=POLICY, max_argument_size=64)
    async with toolmesh.Kernel(settings=settings) as kernel:
        await kernel.discover_tools(TOOLS)

        async def call(tool: str, arguments: dict, identity: str | None) -> toolmesh.contracts.ToolResult:
            caller = Caller(identity=identity) if identity else None
            return await kernel.call(ToolRequest(id="r", tool=tool, arguments=arguments, caller=caller))

        allowed = await call("admin.wipe", {}, "alice")
        refused = await call("admin.wipe", {}, "bob")
        anonymous = await call("math.add", {"a": 1, "b": 2}, None)
        big = await call("echo", {"message": "x" * 100}, "alice")
        leaked = await call("login", {"user": "ann", "api_key": "short-key"}, "bob")
    assert allowed.structured_content == "nothing done"
    assert refused.error.code == ErrorCode.REJECTED
    assert "identity 'bob' may not call tool 'admin.wipe'" in refused.error.message
    assert "[authorization.identities]" in refused.error.message
    assert anonymous.error.code == ErrorCode.REJECTED and "anonymous caller" in anonymous.error.message
    assert big.error.code == ErrorCode.TOO_LARGE and "argument 'message'" in big.error.message
    assert leaked.error.code == ErrorCode.INVALID_ARGUMENTS and "short-key" not in encode(leaked).decode()


def test_listing_is_filtered_by_the_clients_policy() -> None:
    """visible_tools keeps what the identity may use; without a policy it keeps everything."""
    specs = [ToolSpec(name=name, source="test") for name in ("admin.wipe", "echo", "math.add")]
    restricted = Settings(plugins=POLICY)
    assert [spec.name for spec in visible_tools(restricted, "bob", specs)] == ["echo", "math.add"]
    assert [spec.name for spec in visible_tools(restricted, None, specs)] == ["echo"]
    assert visible_tools(Settings(), "bob", specs) == specs


# ------------------------------------------------------------------ over NATS


class IdentityRecorder:
    """Records the identities the node hands to toolmesh_authorize (it abstains)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, str, str]] = []

    @toolmesh.hookimpl
    def toolmesh_authorize(self, identity: str | None, spec: toolmesh.contracts.ToolSpec, action: str) -> None:
        self.seen.append((identity, spec.name, action))


@pytest.mark.anyio
async def test_unauthorised_caller_cannot_list_or_call_and_forged_identity_is_refused(toolmesh_settings) -> None:
    """Over real NATS: signed identities are enforced per tool; unsigned claims are anonymous; forgeries are refused."""
    node_settings = msgspec.structs.replace(toolmesh_settings, identity_secret=SECRET, plugins=POLICY)
    recorder = IdentityRecorder()

    def client(identity: str | None, secret: str | None = SECRET) -> Mesh:
        return Mesh(settings=msgspec.structs.replace(node_settings, identity=identity, identity_secret=secret))

    async with (
        running_node(node_settings, sources=TOOLS, plugins=[recorder]),
        client("alice") as alice,
        client("bob") as bob,
        client(None, None) as stranger,
    ):
        assert (await alice.call("admin.wipe", {"confirm": True})).structured_content == "wiped"
        denied = await bob.call("admin.wipe", {"confirm": True})
        assert (await bob.call("math.add", {"a": 1, "b": 2})).structured_content == 3
        bob_sees = {spec.name for spec in await bob.list_tools()}
        alice_sees = {spec.name for spec in await alice.list_tools()}
        # An unsigned claim in the body is not believed: the caller is anonymous.
        claimed = await stranger.call("admin.wipe", {}, caller=Caller(identity="alice"))

        nc = stranger.nc
        subject = toolmesh_settings.subjects.request("admin.wipe")
        body = encode(ToolRequest(id="f1", tool="admin.wipe", arguments={"confirm": True}))
        forged = {IDENTITY_HEADER: "alice", SIGNATURE_HEADER: f"v1.{int(time.time())}.{'0' * 64}"}
        wrong_key = sign_request("not-the-mesh-secret-0123", "alice", subject, body)
        moved = sign_request(SECRET, "alice", subject, encode(ToolRequest(id="f2", tool="admin.wipe")))
        answers = [
            decode_result((await nc.request(subject, body, timeout=5, headers=headers)).data)
            for headers in (forged, wrong_key, moved, {IDENTITY_HEADER: "alice"})
        ]
    assert denied.error.code == ErrorCode.REJECTED and "identity 'bob'" in denied.error.message
    assert "admin.wipe" not in bob_sees and {"echo", "math.add", "login"} <= bob_sees
    assert "admin.wipe" in alice_sees
    assert claimed.error.code == ErrorCode.REJECTED and "anonymous caller" in claimed.error.message
    for answer in answers:
        assert answer.error is not None and answer.error.code == ErrorCode.REJECTED, answer
    assert [answer.error.message.split(":")[0] for answer in answers[:1]] == ["the identity signature of 'alice' does not verify"]
    # The hook saw verified identities only; refusals stop at the built-in policy (the first
    # refusal ends the check), and the forged requests never reached any hook.
    assert recorder.seen == [("alice", "admin.wipe", "call"), ("bob", "math.add", "call")]


@pytest.mark.anyio
async def test_nested_calls_keep_the_callers_identity(toolmesh_settings) -> None:
    """A node holding the secret signs nested calls with its caller's identity, so the policy still applies."""
    node_settings = msgspec.structs.replace(toolmesh_settings, identity_secret=SECRET, plugins=POLICY)
    async with running_node(node_settings, sources=TOOLS) as node:
        nested = node._nested_call(ToolRequest(id="p", tool="echo", caller=Caller(identity="bob")))
        refused = await nested("admin.wipe", {})
        allowed = await nested("echo", {"message": "hi"})
    assert refused.error.code == ErrorCode.REJECTED and "identity 'bob'" in refused.error.message
    assert allowed.structured_content == "hi"
