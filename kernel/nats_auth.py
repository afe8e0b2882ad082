"""How nodes, clients and the CLI authenticate to NATS and protect the connection.

One function, :func:`connect_options`, turns ``Settings`` into the keyword
arguments of ``nats.connect``; every connection toolmesh opens goes through it,
so a node, a ``Mesh`` and each CLI command accept the same credentials:

======================  ==========================  =======================================
setting                 environment                 meaning
======================  ==========================  =======================================
``nats_user``           ``TOOLMESH_NATS_USER``      user name (with ``nats_password``)
``nats_password``       ``TOOLMESH_NATS_PASSWORD``  its password
``nats_token``          ``TOOLMESH_NATS_TOKEN``     an authorization token
``nats_creds``          ``TOOLMESH_NATS_CREDS``     a ``.creds`` file (JWT + nkey seed; decentralised auth)
``nats_nkey``           ``TOOLMESH_NATS_NKEY``      an nkey seed file (``SU...``)
``tls_ca``              ``TOOLMESH_TLS_CA``         CA bundle that signed the server's certificate
``tls_cert``/``tls_key`` ``TOOLMESH_TLS_CERT``/``_KEY`` client certificate for mutual TLS
======================  ==========================  =======================================

With none of these and a broker on this machine (no URL, or a loopback URL),
the token of the embedded broker's credentials file is sent
(``toolmesh.broker_state``): every local command of the user who started the
mesh joins it without configuration, other users' processes cannot.

Credentials in the URL (``nats://user:pass@host``, ``nats://token@host``) keep
working — nats.py reads them — and :func:`redact_url` hides them wherever a URL
is printed.  Secrets are registered with the log redactor when options are built.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .broker_state import local_credentials
from .errors import ConfigError
from .logs import _URL_CREDENTIALS, _hide_credentials, register_secret

if TYPE_CHECKING:
    from .config import Settings

__all__ = [
    "SECRET_SETTINGS",
    "authenticates",
    "check_security_settings",
    "connect_options",
    "redact_url",
    "tls_context",
    "url_user",
]

SECRET_SETTINGS = ("nats_password", "nats_token", "identity_secret", "catalog_secret")
"""Settings whose values are secrets: never printed, redacted from logs."""

MIN_IDENTITY_SECRET = 16
"""Shortest accepted ``identity_secret``: an HMAC key must not be guessable."""

def redact_url(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced: ``nats://user:***@host``, ``nats://***@host``."""
    return _URL_CREDENTIALS.sub(_hide_credentials, text)


def url_user(url: str | None) -> str | None:
    """The user name of the first server in ``url`` when it carries ``user:password``."""
    if not url:
        return None
    first = url.split(",")[0].strip()
    parsed = urlsplit(first if "://" in first else f"nats://{first}")
    return parsed.username if parsed.password is not None else None


def _readable(path: str, setting: str) -> str:
    if not Path(path).expanduser().is_file():
        raise ConfigError(f"{setting} names {path}, which is not a readable file; fix the path or unset {setting}")
    return str(Path(path).expanduser())


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


def authenticates(settings: Settings) -> bool:
    """True when connections of ``settings`` log in as some NATS user (so subject permissions may apply)."""
    return bool(
        settings.nats_user or settings.nats_token or settings.nats_creds or settings.nats_nkey or settings.tls_cert
        or url_user(settings.nats_url) or "@" in (settings.nats_url or "")
    )


def tls_context(settings: Settings) -> ssl.SSLContext | None:
    """The client TLS context of ``tls_ca``/``tls_cert``/``tls_key``, or ``None`` when none is set."""
    if not (settings.tls_ca or settings.tls_cert):
        return None
    cafile = _readable(settings.tls_ca, "tls_ca") if settings.tls_ca else None
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile)
    if settings.tls_cert and settings.tls_key:
        try:
            context.load_cert_chain(_readable(settings.tls_cert, "tls_cert"), _readable(settings.tls_key, "tls_key"))
        except ssl.SSLError as exc:
            raise ConfigError(f"tls_cert/tls_key cannot be loaded ({exc}); give a PEM certificate and its key") from exc
    return context


def connect_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for ``nats.connect`` carrying the configured credentials and TLS."""
    options: dict[str, Any] = {}
    for name in SECRET_SETTINGS:
        value = getattr(settings, name)
        if value:
            register_secret(value)
    if settings.nats_user:
        options["user"] = settings.nats_user
        options["password"] = settings.nats_password
    elif settings.nats_token:
        options["token"] = settings.nats_token
    elif settings.nats_creds:
        options["user_credentials"] = _readable(settings.nats_creds, "nats_creds")
    elif settings.nats_nkey:
        options["nkeys_seed"] = _readable(settings.nats_nkey, "nats_nkey")
    elif (local := local_credentials(settings)) is not None:
        options["token"] = local.token  # the embedded broker's (toolmesh.broker_state)
    if settings.nats_creds or settings.nats_nkey:
        try:
            import nkeys  # noqa: F401 - nats.py signs the server's nonce with it
        except ImportError:
            raise ConfigError("nats_creds/nats_nkey need the nkeys package: pip install 'toolmesh[nkeys]'") from None
    context = tls_context(settings)
    if context is not None:
        options["tls"] = context
    return options
