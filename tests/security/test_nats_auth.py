"""NATS authentication, TLS and subject permissions against real nats-server processes."""

from __future__ import annotations

import base64
import datetime
import hashlib
import ipaddress
import json
import os
import time
from pathlib import Path

import anyio
import msgspec
import nkeys
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from toolmesh._config import Settings
from toolmesh._errors import BrokerError
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ErrorCode
from toolmesh.testing import running_node, test_settings

from tests.nats_servers import NatsServer
from tests.processes import ROOT, toolmesh

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop

TOOLS = ["examples/security/secured_tools.py"]
PASSWORDS = {"TOOLMESH_NODE_PASSWORD": "node-pw-0123", "TOOLMESH_ALICE_PASSWORD": "alice-pw-0123",
             "TOOLMESH_BOB_PASSWORD": "bob-pw-0123"}


def _settings(url: str, **values: object) -> Settings:
    # The ops permissions file is written for the default prefix "tool".
    return msgspec.structs.replace(test_settings(url), prefix="tool", **values)


async def test_user_password_in_settings_and_in_the_url():
    """A node authenticates with nats_user/nats_password; a client with credentials in --nats URL."""
    config = 'authorization { users = [ {user: node, password: "node-pw-0123"}, {user: ann, password: "ann-pw-0123"} ] }'
    with NatsServer(config) as server:
        node_settings = _settings(server.url, nats_user="node", nats_password="node-pw-0123")
        async with running_node(node_settings, sources=TOOLS):
            url = f"nats://ann:ann-pw-0123@127.0.0.1:{server.port}"
            async with Mesh(settings=msgspec.structs.replace(node_settings, nats_url=url, nats_user=None,
                                                              nats_password=None)) as mesh:
                assert (await mesh.call("echo", {"message": "hi"})).structured_content == "hi"
            wrong = msgspec.structs.replace(node_settings, nats_url=f"nats://ann:WRONG-pw@127.0.0.1:{server.port}",
                                            nats_user=None, nats_password=None)
            with pytest.raises(BrokerError) as caught:
                await Mesh(settings=wrong).connect()
    assert "WRONG-pw" not in str(caught.value) and "ann:***@" in str(caught.value)


async def test_token_and_nkey_authentication(tmp_path: Path):
    """nats_token and an nkey seed file (nats_nkey) both authenticate."""
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    public = nkeys.from_seed(seed).public_key.decode()
    seed_file = tmp_path / "user.nk"
    seed_file.write_bytes(seed)
    with NatsServer('authorization { token: "tok-0123456789" }') as token_server, \
            NatsServer(f'authorization {{ users = [ {{ nkey: "{public}" }} ] }}') as nkey_server:
        for settings in (_settings(token_server.url, nats_token="tok-0123456789"),
                         _settings(nkey_server.url, nats_nkey=str(seed_file))):
            async with running_node(settings, sources=TOOLS), Mesh(settings=settings) as mesh:
                assert (await mesh.call("math.add", {"a": 2, "b": 3})).structured_content == 5
        with pytest.raises(BrokerError):
            await Mesh(settings=_settings(nkey_server.url)).connect()


def _certificates(directory: Path) -> dict[str, Path]:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files."""
    now = datetime.datetime.now(datetime.UTC)

    def issue(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer: ec.EllipticCurvePrivateKey,
              *, ca: bool = False, server: bool = False) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
                critical=False,
            )
        return builder.sign(signer, hashes.SHA256())

    files: dict[str, Path] = {}
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "toolmesh test CA")])
    ca = issue("toolmesh test CA", ca_key, ca_name, ca_key, ca=True)
    for name, cert, key in [("ca", ca, ca_key)] + [
        (name, issue(name, key, ca_name, ca_key, server=name == "server"), key)
        for name, key in (("server", ec.generate_private_key(ec.SECP256R1())),
                          ("client", ec.generate_private_key(ec.SECP256R1())))
    ]:
        files[name] = directory / f"{name}.pem"
        files[name].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        files[f"{name}-key"] = directory / f"{name}-key.pem"
        files[f"{name}-key"].write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return files


async def test_mutual_tls(tmp_path: Path):
    """With tls_ca/tls_cert/tls_key a node and a client talk TLS to a server that verifies client certificates."""
    pem = _certificates(tmp_path)
    config = (f'tls {{ cert_file: "{pem["server"]}", key_file: "{pem["server-key"]}", ca_file: "{pem["ca"]}",'
              " verify: true, timeout: 2 }")
    with NatsServer(config) as server:
        settings = _settings(f"tls://127.0.0.1:{server.port}", tls_ca=str(pem["ca"]), tls_cert=str(pem["client"]),
                             tls_key=str(pem["client-key"]))
        async with running_node(settings, sources=TOOLS), Mesh(settings=settings) as mesh:
            assert (await mesh.call("echo", {"message": "over tls"})).structured_content == "over tls"
        without_client_cert = msgspec.structs.replace(settings, tls_cert=None, tls_key=None)
        with pytest.raises(BrokerError):
            await Mesh(settings=without_client_cert).connect()


def _permissions_server() -> NatsServer:
    permissions = (ROOT / "ops" / "nats" / "permissions.conf").read_text()
    return NatsServer("include ./permissions.conf", env=PASSWORDS, files={"permissions.conf": permissions})


async def test_subject_permissions_of_ops_config_restrict_each_user():
    """ops/nats/permissions.conf: bob may call echo and math.add, reads the catalog, and is refused admin.wipe fast."""
    with _permissions_server() as server:
        node = _settings(server.url, nats_user="node", nats_password=PASSWORDS["TOOLMESH_NODE_PASSWORD"])
        async with running_node(node, sources=TOOLS):
            bob_settings = _settings(server.url, nats_user="bob", nats_password=PASSWORDS["TOOLMESH_BOB_PASSWORD"])
            alice_settings = _settings(server.url, nats_user="alice",
                                       nats_password=PASSWORDS["TOOLMESH_ALICE_PASSWORD"])
            async with Mesh(settings=bob_settings) as bob, Mesh(settings=alice_settings) as alice:
                assert (await bob.call("echo", {"message": "hi"})).structured_content == "hi"
                assert (await bob.call("math.add", {"a": 1, "b": 1})).structured_content == 2
                listed = {spec.name for spec in await bob.list_tools()}
                started = time.monotonic()
                denied = await bob.call("admin.wipe", {"confirm": True}, timeout=10)
                first_denial = time.monotonic() - started
                again = await bob.call("admin.wipe", {}, timeout=10)
                # Denied and allowed calls at the same time: only the denied ones are refused.
                mixed: list[tuple[str, object]] = []

                async def one(tool: str, arguments: dict) -> None:
                    result = await bob.call(tool, arguments, timeout=10)
                    mixed.append((tool, result.error.code if result.is_error else result.structured_content))

                bob._denied_at.clear()  # forget the refusal, so these meet the server's permission check again
                async with anyio.create_task_group() as tg:
                    for i in range(5):
                        tg.start_soon(one, "admin.wipe", {})
                        tg.start_soon(one, "echo", {"message": f"m{i}"})
                assert (await alice.call("admin.wipe", {"confirm": True})).structured_content == "wiped"
    assert {"echo", "math.add", "admin.wipe"} <= listed  # the catalog itself is readable: listing is advisory
    assert denied.error.code == ErrorCode.REJECTED and "tool.request.admin~wipe" in denied.error.message
    assert first_denial < 2.0, first_denial
    assert again.error.code == ErrorCode.REJECTED
    assert sorted(outcome for tool, outcome in mixed if tool == "echo") == [f"m{i}" for i in range(5)], mixed
    assert [outcome for tool, outcome in mixed if tool == "admin.wipe"] == [ErrorCode.REJECTED] * 5


def test_cli_accepts_credentials_in_the_nats_url_and_never_prints_them(tmp_path: Path):
    """toolmesh call/tools work with --nats nats://user:pass@...; a failure prints the URL redacted."""
    config = 'authorization { users = [ {user: node, password: "node-pw-0123"}, {user: ann, password: "ann-pw-0123"} ] }'
    with NatsServer(config) as server:
        from tests.processes import NodeProcess

        url = f"nats://node:node-pw-0123@127.0.0.1:{server.port}"
        with NodeProcess(*TOOLS, "--nats", url) as node:
            assert "node-pw-0123" not in node.ready["url"] and "node:***@" in node.ready["url"]
            good = toolmesh("call", "echo", '{"message": "cli"}', "--nats",
                            f"nats://ann:ann-pw-0123@127.0.0.1:{server.port}")
            listing = toolmesh("tools", "--json", "--nats", f"nats://ann:ann-pw-0123@127.0.0.1:{server.port}")
            # With a policy in the client's config, ann (her NATS user) sees only what she may call.
            policy = tmp_path / "client.toml"
            policy.write_text('[authorization.identities]\nann = ["echo", "math.*"]\n')
            restricted = toolmesh("tools", "--json", "--nats", f"nats://ann:ann-pw-0123@127.0.0.1:{server.port}",
                                  env={"TOOLMESH_CONFIG": str(policy)})
        bad = toolmesh("tools", "--nats", f"nats://ann:not-the-password@127.0.0.1:{server.port}")
        # A node with wrong credentials stops at once (nats.py alone would retry forever).
        started = time.monotonic()
        bad_node = toolmesh("up", *TOOLS, "--nats", f"nats://node:not-the-password@127.0.0.1:{server.port}", timeout=20)
        bad_node_seconds = time.monotonic() - started
    assert bad_node.returncode == 1 and "refused this connection" in bad_node.stderr, bad_node.stderr
    assert "Traceback" not in bad_node.stderr
    assert "not-the-password" not in bad_node.stderr + bad_node.stdout and bad_node_seconds < 10
    assert good.returncode == 0 and good.stdout.strip() == "cli", good.stderr
    assert listing.returncode == 0 and "admin.wipe" in listing.stdout
    assert restricted.returncode == 0, restricted.stderr
    assert sorted(tool["name"] for tool in json.loads(restricted.stdout)) == ["echo", "math.add"]
    assert bad.returncode != 0 and "not-the-password" not in bad.stderr + bad.stdout


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(issuer: nkeys.KeyPair, subject: str, name: str, nats: dict[str, object]) -> str:
    """A NATS JWT (ed25519-nkey) as nsc would issue it, signed by ``issuer``."""
    claims: dict[str, object] = {"iat": int(time.time()), "iss": issuer.public_key.decode(), "name": name,
                                 "sub": subject, "nats": nats}
    claims["jti"] = base64.b32encode(hashlib.sha256(json.dumps(claims).encode()).digest()).decode().rstrip("=")
    signed = f"{_b64(json.dumps({'typ': 'JWT', 'alg': 'ed25519-nkey'}).encode())}.{_b64(json.dumps(claims).encode())}"
    return f"{signed}.{_b64(issuer.sign(signed.encode()))}"


def _decentralised_auth(directory: Path) -> tuple[str, Path]:
    """Operator, system account, account and user (JWTs + seeds): the server config and a user .creds file."""

    def pair(prefix: int) -> tuple[bytes, nkeys.KeyPair]:
        seed = nkeys.encode_seed(os.urandom(32), prefix)
        return seed, nkeys.from_seed(seed)

    _, operator = pair(nkeys.PREFIX_BYTE_OPERATOR)
    _, system = pair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, account = pair(nkeys.PREFIX_BYTE_ACCOUNT)
    user_seed, user = pair(nkeys.PREFIX_BYTE_USER)
    unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True, "conn": -1,
                 "leaf": -1, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}
    accounts = {
        system.public_key.decode(): _jwt(operator, system.public_key.decode(), "SYS", {"type": "account", "version": 2}),
        account.public_key.decode(): _jwt(operator, account.public_key.decode(), "TOOLS",
                                          {"type": "account", "version": 2, "limits": unlimited}),
    }
    config = (
        f"operator: {_jwt(operator, operator.public_key.decode(), 'OP', {'type': 'operator', 'version': 2})}\n"
        f"system_account: {system.public_key.decode()}\nresolver: MEMORY\n"
        f"resolver_preload: {{ {', '.join(f'{key}: {value}' for key, value in accounts.items())} }}\n"
    )
    user_jwt = _jwt(account, user.public_key.decode(), "ann",
                    {"type": "user", "version": 2, "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1})
    creds = directory / "ann.creds"
    creds.write_text(f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
                     f"-----BEGIN USER NKEY SEED-----\n{user_seed.decode()}\n------END USER NKEY SEED------\n")
    return config, creds


async def test_jwt_creds_file_authentication(tmp_path: Path):
    """nats_creds: a user JWT + seed (.creds) issued under an operator/account authenticates node and client."""
    config, creds = _decentralised_auth(tmp_path)
    with NatsServer(config) as server:
        settings = _settings(server.url, nats_creds=str(creds))
        async with running_node(settings, sources=TOOLS), Mesh(settings=settings) as mesh:
            assert (await mesh.call("echo", {"message": "jwt"})).structured_content == "jwt"
            assert "echo" in {spec.name for spec in await mesh.list_tools()}
        with pytest.raises(BrokerError, match="refused this connection"):
            await Mesh(settings=_settings(server.url)).connect()
