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
(``toolmesh._transport.broker_state``): every local command of the user who started the
mesh joins it without configuration, other users' processes cannot.

Credentials in the URL (``nats://user:pass@host``, ``nats://token@host``) keep
working — nats.py reads them — and :func:`redact_url` hides them wherever a URL
is printed.  Secrets are registered with the log redactor when options are built.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from toolmesh._config import SECRET_SETTINGS, Settings, url_user
from toolmesh._errors import ConfigError
from toolmesh._telemetry.logs import register_secret
from toolmesh._transport.broker_state import local_credentials

__all__ = ["authenticates", "connect_options", "tls_context"]

def _readable(path: str, setting: str) -> str:
    if not Path(path).expanduser().is_file():
        raise ConfigError(f"{setting} names {path}, which is not a readable file; fix the path or unset {setting}")
    return str(Path(path).expanduser())


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
        options["token"] = local.token  # the embedded broker's (toolmesh._transport.broker_state)
    if settings.nats_creds or settings.nats_nkey:
        try:
            import nkeys  # noqa: F401 - nats.py signs the server's nonce with it
        except ImportError:
            raise ConfigError("nats_creds/nats_nkey need the nkeys package: pip install 'toolmesh[nkeys]'") from None
    context = tls_context(settings)
    if context is not None:
        options["tls"] = context
    return options
