"""Signed caller identity: who made a call, in a form a node can verify.

NATS does not stamp the publishing user on a core message (a subscriber
cannot tell which NATS user published it), so the caller's identity travels
in headers, signed with HMAC-SHA256 under ``identity_secret`` — a key shared
by the nodes and the clients trusted to speak for an identity (agents,
gateways)::

    Toolmesh-Identity: alice
    Toolmesh-Identity-Signature: v1.<unix seconds>.<hex HMAC>

The MAC covers the identity, the request subject (hence the tool), the issue
time and the whole body (hence the request id and the arguments), so a
signature cannot be moved to another identity, tool or argument set, and a
captured request can only be replayed unchanged within :data:`MAX_SKEW`.

A node treats a request without these headers as anonymous, and refuses one
whose signature is missing, malformed, stale or wrong with ``rejected``.

Catalog entries are signed with the same construction under another purpose
label (:func:`catalog_signature`), so a MAC made for one use never verifies
for the other; ``toolmesh._transport.catalog`` decides what is signed and what a reader
does with an entry that does not verify.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

from toolmesh._errors import CallRejected

__all__ = [
    "IDENTITY_HEADER",
    "MAX_SKEW",
    "SIGNATURE_HEADER",
    "catalog_signature",
    "catalog_signature_valid",
    "sign_request",
    "verify_request",
]

IDENTITY_HEADER = "Toolmesh-Identity"
"""The claimed identity (1-128 printable characters)."""

SIGNATURE_HEADER = "Toolmesh-Identity-Signature"
"""``v1.<issued unix seconds>.<hex HMAC-SHA256>``."""

MAX_SKEW = 300.0
"""Seconds a signature stays valid either side of its issue time (clock skew plus replay window)."""

_VERSION = "v1"


def _hmac(secret: str, purpose: bytes, *parts: bytes) -> str:
    # The purpose label keeps a MAC made for one use from verifying for another.
    return hmac.new(secret.encode(), b"\0".join((purpose, *parts)), hashlib.sha256).hexdigest()


def _mac(secret: str, identity: str, subject: str, issued: str, body: bytes) -> str:
    return _hmac(secret, b"toolmesh-identity-v1", identity.encode(), subject.encode(), issued.encode(), body)


def catalog_signature(secret: str, bucket: str, body: bytes) -> str:
    """``v1.<hex HMAC-SHA256>`` of a catalog entry's exact JSON ``body`` stored in ``bucket``."""
    return f"{_VERSION}.{_hmac(secret, b'toolmesh-catalog-v1', bucket.encode(), body)}"


def catalog_signature_valid(secret: str, bucket: str, body: bytes, signature: str) -> bool:
    """True when ``signature`` is :func:`catalog_signature` of ``body`` in ``bucket`` under ``secret``."""
    return hmac.compare_digest(signature.encode(), catalog_signature(secret, bucket, body).encode())


def _valid_identity(identity: str) -> bool:
    return 0 < len(identity) <= 128 and identity.isprintable() and identity.strip() == identity


def sign_request(secret: str, identity: str, subject: str, body: bytes, *, now: float | None = None) -> dict[str, str]:
    """The headers asserting that ``identity`` sends ``body`` on ``subject``."""
    if not _valid_identity(identity):
        raise ValueError(f"identity {identity!r} must be 1-128 printable characters without surrounding spaces")
    issued = str(int(time.time() if now is None else now))
    return {
        IDENTITY_HEADER: identity,
        SIGNATURE_HEADER: f"{_VERSION}.{issued}.{_mac(secret, identity, subject, issued, body)}",
    }


def verify_request(
    headers: Mapping[str, str] | None,
    subject: str,
    body: bytes,
    secret: str | None,
    *,
    now: float | None = None,
) -> str | None:
    """The verified identity of a request, ``None`` for an anonymous one; raises ``CallRejected`` otherwise."""
    identity = headers.get(IDENTITY_HEADER) if headers else None
    signature = headers.get(SIGNATURE_HEADER) if headers else None
    if identity is None and signature is None:
        return None
    if identity is None:
        raise CallRejected(f"the request has a {SIGNATURE_HEADER} header but no {IDENTITY_HEADER}; send both or neither")
    if signature is None:
        raise CallRejected(
            f"identity {identity!r} is not signed: a {IDENTITY_HEADER} header needs {SIGNATURE_HEADER};"
            " configure identity_secret on the client (TOOLMESH_IDENTITY_SECRET) or drop the header"
        )
    if secret is None:
        raise CallRejected(
            f"identity {identity!r} cannot be verified: this node has no identity_secret;"
            " configure the same TOOLMESH_IDENTITY_SECRET on nodes and trusted clients"
        )
    version, _, rest = signature.partition(".")
    issued, _, mac = rest.partition(".")
    if version != _VERSION or not issued.isdigit() or not mac:
        raise CallRejected(f"{SIGNATURE_HEADER} {signature[:40]!r} is malformed; expected v1.<unix seconds>.<hex>")
    current = time.time() if now is None else now
    if abs(current - int(issued)) > MAX_SKEW:
        raise CallRejected(
            f"the identity signature of {identity!r} was issued {current - int(issued):.0f}s from now,"
            f" outside the {MAX_SKEW:g}s window; sign each request when sending it and keep clocks in sync (NTP)"
        )
    if not hmac.compare_digest(mac, _mac(secret, identity, subject, issued, body)):
        raise CallRejected(
            f"the identity signature of {identity!r} does not verify: the request was altered or signed with"
            " another identity_secret; use the mesh's TOOLMESH_IDENTITY_SECRET"
        )
    return identity
