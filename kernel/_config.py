"""Node and client settings: CLI flags > ``TOOLMESH_*`` environment > ``toolmesh.toml``.

``toolmesh.toml`` holds the settings below as top-level keys; tables (such as
``[mcp.servers.NAME]``) belong to plugins and are kept in ``Settings.plugins``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import msgspec
from toolmesh._errors import ConfigError
from toolmesh.contracts import DEFAULT_PREFIX, Subjects

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_NATS_URL",
    "DEFAULT_PORT",
    "MIN_IDENTITY_SECRET",
    "SECRET_SETTINGS",
    "Settings",
    "check_security_settings",
    "load_settings",
    "url_user",
]

DEFAULT_PORT = 4222
"""Port of the embedded broker, and of the default NATS URL."""

DEFAULT_NATS_URL = f"nats://127.0.0.1:{DEFAULT_PORT}"
"""Where clients look for a mesh when no URL is given."""

CONFIG_FILE = "toolmesh.toml"
"""Read from the working directory unless ``TOOLMESH_CONFIG`` names another file."""

_ENV_PREFIX = "TOOLMESH_"

MAX_ARGUMENT_DEPTH = 256
"""Upper bound of ``max_argument_depth``: deeper values would run into Python's recursion limit
in the code that walks arguments (validation, conversion, encoding)."""


class Settings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Everything a node or client can be configured with; times are seconds, sizes bytes."""

    nats_url: str | None = None
    """NATS to join; ``None`` makes ``toolmesh up`` start an embedded broker."""
    port: int = DEFAULT_PORT
    """Port of the embedded broker."""
    state_dir: str | None = None
    """Per-user directory of the embedded broker's credentials file and JetStream store
    (default: ``$XDG_STATE_HOME/toolmesh``, else ``~/.local/state/toolmesh``)."""
    prefix: str = DEFAULT_PREFIX
    """First subject token(s); meshes with different prefixes share a NATS account."""
    node_name: str | None = None
    """Stable node id; a unique one is made up when absent."""
    max_concurrency: int = 256
    """Calls one node runs at once; more get ``unavailable`` at once."""
    max_payload: int = 1024 * 1024
    """Largest request or result body; larger ones get ``too_large``."""
    default_timeout: float = 60.0
    """Deadline of a call that names none and whose tool declares none."""
    heartbeat: float = 2.0
    """How often a node rewrites its catalog entry."""
    catalog_ttl: float = 6.0
    """After this long without a heartbeat a node's tools leave the catalog."""
    drain_timeout: float = 30.0
    """How long a stopping node waits for in-flight calls."""
    events: bool = True
    """Publish ``tool.event.*`` messages."""
    log_format: Literal["text", "json"] = "text"
    """Log lines as text or as JSON objects (with trace ids)."""
    log_level: str = "INFO"
    """Lowest level logged."""
    metrics_port: int | None = None
    """Serve Prometheus metrics on this loopback port (needs ``toolmesh[prometheus]``)."""
    durable_ack_wait: float = 30.0
    """Seconds a durable call may go without a sign of life (nodes send one every third of it)
    before JetStream hands it to another node."""
    durable_max_attempts: int = 5
    """Executions of one durable call that may start (each on a node that then died) before it is
    answered ``execution_failed`` instead: a call that kills its node must not kill every node."""
    durable_result_ttl: float = 3600.0
    """How long a durable call's result is kept by request id (and repeats are deduplicated)."""
    durable_replicas: int = 1
    """Copies JetStream keeps of the durable stream, the results bucket and the catalog (3 on a
    3-server cluster, so losing one server loses no call and no listing); set it before they are
    first created."""
    shared_cache: bool = False
    """Keep cached results in a JetStream key-value bucket every node shares, not only in this process."""
    shared_cache_max_ttl: float = 86400.0
    """Upper bound on any shared-cache entry's lifetime (the bucket's max age)."""
    # Connection security (toolmesh._transport.nats_auth) and caller identity (toolmesh._pipeline.identity, toolmesh._pipeline.authorization)
    nats_user: str | None = None
    """NATS user name; goes with ``nats_password`` (or put both in the URL)."""
    nats_password: str | None = None
    """Password of ``nats_user`` (a secret: redacted from logs)."""
    nats_token: str | None = None
    """NATS authorization token (a secret)."""
    nats_creds: str | None = None
    """Path of a NATS ``.creds`` file (user JWT + nkey seed) for decentralised (operator/account) auth."""
    nats_nkey: str | None = None
    """Path of an nkey seed file for nkey authentication."""
    tls_ca: str | None = None
    """CA bundle (PEM) that verifies the NATS servers' certificates; setting it turns TLS on."""
    tls_cert: str | None = None
    """Client certificate (PEM) for mutual TLS; needs ``tls_key``."""
    tls_key: str | None = None
    """Private key (PEM) of ``tls_cert``."""
    identity: str | None = None
    """Identity this client signs its calls with (default: ``nats_user``); needs ``identity_secret``."""
    identity_secret: str | None = None
    """HMAC key shared by nodes and trusted clients: signs and verifies caller identities (a secret)."""
    catalog_secret: str | None = None
    """HMAC key shared by every node and client of the mesh: nodes sign their catalog entries with it
    and readers ignore entries that do not verify (a secret; default: ``identity_secret``; unset on
    both: entries are neither signed nor checked, see toolmesh._transport.catalog)."""
    max_argument_size: int | None = None
    """Largest single argument value in JSON bytes; larger ones get ``too_large`` (``None``: only ``max_payload``)."""
    max_argument_depth: int = 64
    """Deepest nesting of arrays and objects in a request's arguments (the arguments object is level 1);
    a deeper request gets ``bad_request`` before anything parses it."""
    max_call_depth: int = 8
    """Most tools in one chain of nested calls (the caller's own call counts as one); a nested call
    beyond it is refused with ``rejected``, which ends tools that call themselves."""
    plugins: dict[str, Any] = msgspec.field(default_factory=dict)
    """Plugin tables of ``toolmesh.toml``, by name."""

    def __post_init__(self) -> None:
        try:
            Subjects(self.prefix)
        except ValueError as exc:
            raise ConfigError(f"prefix: {exc}") from None
        checks = [
            (self.port >= 0 and self.port < 65536, f"port {self.port} is not a TCP port (0-65535)"),
            (self.max_concurrency >= 1, f"max_concurrency must be at least 1, got {self.max_concurrency}"),
            (self.max_payload >= 1024, f"max_payload must be at least 1024 bytes, got {self.max_payload}"),
            (
                1 <= self.max_argument_depth <= MAX_ARGUMENT_DEPTH,
                f"max_argument_depth must be between 1 and {MAX_ARGUMENT_DEPTH}, got {self.max_argument_depth}",
            ),
            (self.max_call_depth >= 1, f"max_call_depth must be at least 1, got {self.max_call_depth}"),
            (self.default_timeout > 0, f"default_timeout must be positive, got {self.default_timeout}"),
            (self.heartbeat > 0, f"heartbeat must be positive, got {self.heartbeat}"),
            (self.durable_ack_wait >= 1, f"durable_ack_wait must be at least 1 second, got {self.durable_ack_wait}"),
            (self.durable_max_attempts >= 1, f"durable_max_attempts must be at least 1, got {self.durable_max_attempts}"),
            (self.durable_result_ttl > 0, f"durable_result_ttl must be positive, got {self.durable_result_ttl}"),
            (
                1 <= self.durable_replicas <= 5,
                f"durable_replicas must be between 1 and 5 (JetStream's limit), got {self.durable_replicas}",
            ),
            (self.shared_cache_max_ttl > 0, f"shared_cache_max_ttl must be positive, got {self.shared_cache_max_ttl}"),
            (
                self.catalog_ttl > self.heartbeat,
                f"catalog_ttl ({self.catalog_ttl}) must be longer than heartbeat ({self.heartbeat})",
            ),
            (
                self.catalog_secret is None or len(self.catalog_secret) >= MIN_IDENTITY_SECRET,
                (
                    f"catalog_secret has {len(self.catalog_secret or '')} characters; use at least"
                    f" {MIN_IDENTITY_SECRET} random ones, the same on every node and client"
                ),
            ),
            (  # the name is the node's catalog key: a JetStream key-value key and a NATS subject token
                self.node_name is None or _NODE_NAME.fullmatch(self.node_name) is not None,
                (
                    f"node_name {self.node_name!r} is not valid: use 1-128 letters, digits, '-' or '_'"
                    " (--name / TOOLMESH_NODE_NAME)"
                ),
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)
        check_security_settings(self)

    @property
    def subjects(self) -> Subjects:
        """The subjects of the configured mesh."""
        return Subjects(self.prefix)

    @property
    def connect_url(self) -> str:
        """The NATS URL a client uses: the configured one, else the local default broker."""
        return self.nats_url or f"nats://127.0.0.1:{self.port}"

    def __repr__(self) -> str:  # A logged Settings must not carry its secrets
        from toolmesh._telemetry.logs import redact_url

        shown = {
            name: ("***" if name in SECRET_SETTINGS and value else value)
            for name, value in msgspec.structs.asdict(self).items()
        }
        return redact_url(f"Settings({', '.join(f'{name}={value!r}' for name, value in shown.items())})")


_FIELDS = {name for name in Settings.__struct_fields__ if name != "plugins"}


def _from_file(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix the file or set TOOLMESH_CONFIG") from exc
    values = {key: value for key, value in data.items() if not isinstance(value, dict)}
    tables = {key: value for key, value in data.items() if isinstance(value, dict)}
    misplaced = set(tables) & _FIELDS
    if misplaced:
        raise ConfigError(
            f"{path}: setting(s) {', '.join(sorted(misplaced))} must be plain values, not tables"
        )
    unknown = set(values) - _FIELDS
    if unknown:
        raise ConfigError(
            f"{path}: unknown setting(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(_FIELDS))}"
        )
    return values, tables


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    return {
        name: env[_ENV_PREFIX + name.upper()]
        for name in _FIELDS
        if env.get(_ENV_PREFIX + name.upper(), "") != ""
    }


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Merge the three sources; ``overrides`` (CLI flags) win, ``None`` values are ignored."""
    env = os.environ if env is None else env
    configured = env.get(_ENV_PREFIX + "CONFIG", "")
    path = config_file or Path(configured or CONFIG_FILE)
    values: dict[str, Any] = {}
    tables: dict[str, Any] = {}
    if path.is_file():
        values, tables = _from_file(path)
    elif configured:
        raise ConfigError(f"TOOLMESH_CONFIG names {path}, which is not a file")
    values.update(_from_env(env))
    values.update({key: value for key, value in (overrides or {}).items() if value is not None})
    values["plugins"] = tables
    try:
        return msgspec.convert(values, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"invalid setting: {exc}") from exc


_NODE_NAME = re.compile(r"[A-Za-z0-9_\-]{1,128}")

SECRET_SETTINGS = ("nats_password", "nats_token", "identity_secret", "catalog_secret")
"""Settings whose values are secrets: never printed, redacted from logs."""

MIN_IDENTITY_SECRET = 16
"""Shortest accepted ``identity_secret``: an HMAC key must not be guessable."""


def url_user(url: str | None) -> str | None:
    """The user name of the first server in ``url`` when it carries ``user:password``."""
    if not url:
        return None
    first = url.split(",")[0].strip()
    parsed = urlsplit(first if "://" in first else f"nats://{first}")
    return parsed.username if parsed.password is not None else None


def check_security_settings(settings: Settings) -> None:
    """Reject combinations that cannot work, naming the setting and the fix (called when Settings is built)."""
    methods = [
        name
        for name, value in (
            ("nats_user", settings.nats_user),
            ("nats_token", settings.nats_token),
            ("nats_creds", settings.nats_creds),
            ("nats_nkey", settings.nats_nkey),
        )
        if value
    ]
    if len(methods) > 1:
        raise ConfigError(
            f"{' and '.join(methods)} are both set; NATS accepts one way to authenticate: keep one of them"
        )
    if settings.nats_password and not settings.nats_user:
        raise ConfigError("nats_password is set without nats_user; set TOOLMESH_NATS_USER too")
    if settings.nats_user and not settings.nats_password:
        raise ConfigError(f"nats_user {settings.nats_user!r} has no nats_password; set TOOLMESH_NATS_PASSWORD")
    if bool(settings.tls_cert) != bool(settings.tls_key):
        raise ConfigError("tls_cert and tls_key go together (a client certificate and its key): set both or neither")
    if settings.max_argument_size is not None and settings.max_argument_size < 1:
        raise ConfigError(f"max_argument_size must be at least 1 byte, got {settings.max_argument_size}")
    if settings.identity_secret is not None and len(settings.identity_secret) < MIN_IDENTITY_SECRET:
        raise ConfigError(
            f"identity_secret has {len(settings.identity_secret)} characters; use at least {MIN_IDENTITY_SECRET}"
            " random ones (e.g. 'python -c \"import secrets; print(secrets.token_urlsafe(32))\"')"
        )
