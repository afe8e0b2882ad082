"""Per-user state of the embedded broker: where it lives, its credentials, and who runs it.

The embedded broker (``toolmesh up`` with no NATS URL) requires a token. The
token and the mesh's generated ``catalog_secret`` are kept in
``<state dir>/broker-credentials.json``, created on first start with mode
0600 in a 0700 directory and reused after, so every toolmesh command of the
same user finds them and other users' processes cannot. The state directory
is ``state_dir`` (``TOOLMESH_STATE_DIR``), else ``$XDG_STATE_HOME/toolmesh``,
else ``~/.local/state/toolmesh``.

Each port has its own directory ``broker-<port>/`` (server configuration, log
and the JetStream store), so a broker restarted on the same port finds the
calls queued before. An advisory lock on ``broker-<port>.lock`` decides which
node runs that broker; the broker process inherits the lock, so nobody starts
a second server on the same store while the first is still shutting down.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import msgspec
from toolmesh._errors import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one node per port is up to the user
    fcntl = None  # type: ignore[assignment]  # no such module on Windows; users check for None
from toolmesh._telemetry.logs import register_secret

if TYPE_CHECKING:
    from toolmesh._config import Settings

__all__ = [
    "CREDENTIALS_FILE",
    "STATE_DIR_ENV",
    "BrokerClaim",
    "LocalCredentials",
    "local_credentials",
    "state_dir",
    "uses_local_broker",
    "with_local_secrets",
]

STATE_DIR_ENV = "TOOLMESH_STATE_DIR"
"""Environment variable naming the state directory (the ``state_dir`` setting)."""

CREDENTIALS_FILE = "broker-credentials.json"
"""Name of the credentials file inside the state directory."""

_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


class LocalCredentials(msgspec.Struct, kw_only=True, frozen=True):
    """What the embedded broker and every local command share: the NATS token and the catalog secret."""

    token: str
    """Authorization token the embedded broker requires."""
    catalog_secret: str
    """Key that signs catalog entries on the local mesh (``Settings.catalog_secret`` when unset)."""

    @classmethod
    def load(cls, directory: Path) -> LocalCredentials | None:
        """The credentials stored in ``directory``, or ``None`` when no broker has created them yet."""
        path = directory / CREDENTIALS_FILE
        try:
            status = path.stat()
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConfigError(f"cannot read {path} ({exc}); fix its permissions or set {STATE_DIR_ENV}") from exc
        mode = status.st_mode
        if hasattr(os, "getuid") and status.st_uid != os.getuid():
            raise ConfigError(
                f"{path} belongs to another user (uid {status.st_uid}), who then knows the local mesh's token;"
                f" delete it or point {STATE_DIR_ENV} at a directory of your own"
            )
        if stat.S_IMODE(mode) & 0o077:
            raise ConfigError(
                f"{path} may be read by other users (mode {stat.S_IMODE(mode):o}): anyone who reads it can join"
                f" the local mesh; run 'chmod 600 {path}'"
            )
        try:
            credentials = msgspec.json.decode(data, type=cls)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ConfigError(
                f"{path} is not a toolmesh credentials file ({exc}); delete it (a new one is made on the next"
                " 'toolmesh up') after stopping every local node"
            ) from exc
        register_secret(credentials.token)
        register_secret(credentials.catalog_secret)
        return credentials

    @classmethod
    def load_or_create(cls, directory: Path) -> LocalCredentials:
        """The stored credentials, creating random ones (atomically, mode 0600) when there are none."""
        existing = cls.load(directory)
        if existing is not None:
            return existing
        _make_private_dir(directory)
        fresh = cls(token=secrets.token_urlsafe(32), catalog_secret=secrets.token_urlsafe(32))
        handle, temporary = tempfile.mkstemp(prefix=".credentials-", dir=directory)  # mode 0600
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(msgspec.json.encode(fresh))
                file.flush()
                os.fsync(file.fileno())
            try:
                # link() never replaces: when two nodes start at once, the first file wins for both
                os.link(temporary, directory / CREDENTIALS_FILE)
            except FileExistsError:
                pass
        finally:
            os.unlink(temporary)
        stored = cls.load(directory)
        assert stored is not None
        return stored


def _make_private_dir(directory: Path) -> None:
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the state directory {directory} ({exc}); set {STATE_DIR_ENV}") from exc


def state_dir(settings: Settings | None = None) -> Path:
    """The per-user state directory: ``state_dir``, ``$TOOLMESH_STATE_DIR``, ``$XDG_STATE_HOME/toolmesh``, or
    ``~/.local/state/toolmesh``."""
    configured = (settings.state_dir if settings is not None else None) or os.environ.get(STATE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "state") / "toolmesh"


def _loopback(url: str) -> bool:
    servers = [server.strip() for server in url.split(",") if server.strip()]
    for server in servers:
        parsed = urlsplit(server if "://" in server else f"nats://{server}")
        if parsed.hostname not in _LOOPBACK_HOSTS or parsed.username or parsed.password:
            return False
    return bool(servers)


def uses_local_broker(settings: Settings) -> bool:
    """True when ``settings`` reach a broker on this machine with no credentials of their own.

    Then the local credentials file is what authenticates them: no URL at all
    (the embedded broker), or loopback URLs without user, token, creds, nkey or
    client certificate.
    """
    explicit = settings.nats_user or settings.nats_token or settings.nats_creds or settings.nats_nkey
    return not (explicit or settings.tls_cert) and _loopback(settings.connect_url)


def _local_port(settings: Settings) -> int | None:
    first = settings.connect_url.split(",")[0].strip()
    return urlsplit(first if "://" in first else f"nats://{first}").port or 4222


def local_credentials(settings: Settings) -> LocalCredentials | None:
    """The embedded broker's credentials when ``settings`` reach it without credentials of their own.

    Only a broker some node of this state directory runs on that port counts
    (its claim is held): a plain local ``nats-server`` gets no token it did not ask for.
    """
    if not uses_local_broker(settings):
        return None
    directory = state_dir(settings)
    port = _local_port(settings)
    if port is None or not BrokerClaim(directory, port).held():
        return None
    return LocalCredentials.load(directory)


def with_local_secrets(settings: Settings) -> Settings:
    """``settings`` with the local mesh's ``catalog_secret`` filled in when they reach the embedded broker."""
    if settings.catalog_secret is not None:
        return settings
    credentials = local_credentials(settings)
    if credentials is None:
        return settings
    return msgspec.structs.replace(settings, catalog_secret=credentials.catalog_secret)


class BrokerClaim:
    """The advisory lock that makes one process the runner of the embedded broker on ``port``."""

    def __init__(self, directory: Path, port: int) -> None:
        self.path = directory / f"broker-{port}.lock"
        self.store = directory / f"broker-{port}"
        self._fd: int | None = None

    @property
    def fd(self) -> int | None:
        """The locked file descriptor (handed to the broker process), or ``None`` when not held."""
        return self._fd

    def acquire(self) -> bool:
        """Take the lock without waiting; ``False`` when another process (or a dying broker) holds it."""
        if self._fd is not None:
            return True
        _make_private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if fcntl is None:  # pragma: no cover
            self._fd = fd
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def held(self) -> bool:
        """True when some process holds the lock (this one included): an embedded broker runs on the port."""
        if self._fd is not None:
            return True
        if fcntl is None or not self.path.is_file():  # pragma: no cover - no locks on Windows
            return self.path.is_file()
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def release(self) -> None:
        """Give the lock up (a broker still running keeps its inherited copy until it exits)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
