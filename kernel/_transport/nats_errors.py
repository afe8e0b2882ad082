"""The one seam between nats.py's exceptions and toolmesh's error tree.

Code that talks to NATS catches ``nats.errors.Error`` around the operation and
raises ``nats_error(exc, subject, what)`` from it; everything above handles
toolmesh errors only.  The mapping::

    nats.errors.NoRespondersError           → NoResponders      (unavailable)
    nats.errors.TimeoutError (and kin)      → CallTimeout       (timeout)
    nats.errors.MaxPayloadError             → PayloadTooLarge   (too_large)
    nats.errors.BadSubjectError             → BadRequest        (bad_request)
    AuthorizationError, credentials, TLS    → BrokerError       (unavailable; the server refuses us)
    any other nats.errors.Error             → BrokerError       (unavailable; connection trouble)

nats.py reports a server's ``-ERR`` line as the bare ``nats.errors.Error`` (its
``AuthorizationError`` only for one that ends an established connection), so
:func:`refuses_connection` recognises a refused handshake by that type, never
by the text.  The one fact only the text carries is the subject of a
permissions violation (the protocol line names it): :func:`denied_subject`
reads it, and nothing else here looks at messages.
"""

from __future__ import annotations

import re
import ssl

import nats.errors
from toolmesh._errors import (
    BadRequest,
    BrokerError,
    CallTimeout,
    NoResponders,
    PayloadTooLarge,
    ToolmeshError,
)

__all__ = ["denied_subject", "nats_error", "refuses_connection"]

_REFUSALS = (
    nats.errors.AuthorizationError,
    nats.errors.InvalidUserCredentialsError,
    nats.errors.SecureConnRequiredError,
    nats.errors.SecureConnWantedError,
    nats.errors.SecureConnFailedError,
    ssl.SSLError,
)

_PERMISSIONS_VIOLATION = re.compile(r'[Pp]ermissions [Vv]iolation for [Pp]ublish to "?([^"\s]+)"?')


def refuses_connection(exc: BaseException) -> bool:
    """True when ``exc``, met while connecting, is the server refusing this client (credentials, TLS).

    Such a refusal never heals by retrying.  A bare ``nats.errors.Error`` is the
    server's ``-ERR`` answer to the handshake; a subclass of it, an ``OSError`` or a
    timeout is a network matter.
    """
    return isinstance(exc, _REFUSALS) or type(exc) is nats.errors.Error


def denied_subject(exc: BaseException) -> str | None:
    """The subject of a publish permissions violation that nats.py reported, else ``None``."""
    if type(exc) is not nats.errors.Error:
        return None
    match = _PERMISSIONS_VIOLATION.search(str(exc))
    return match.group(1) if match else None


def nats_error(exc: Exception, subject: str = "", what: str = "the request") -> ToolmeshError:
    """The toolmesh error for ``exc``, which nats.py raised while sending ``what`` to ``subject``.

    Raise it ``from exc``.  ``what`` names the operation for the message (``"the sampling
    request to the caller"``); ``subject`` is given in the message and the error's details.
    """
    on = f" on {subject!r}" if subject else ""
    kind = type(exc).__name__
    if isinstance(exc, nats.errors.NoRespondersError):
        return NoResponders(
            f"nothing answers {what}{on}: its receiver is gone or not subscribed yet; try again shortly",
            subject=subject,
        )
    if isinstance(exc, TimeoutError):  # nats.errors.TimeoutError and its flush/drain kin
        return CallTimeout(
            f"no answer to {what}{on} in time; the receiver may be overloaded or gone",
            details={"subject": subject} if subject else None,
        )
    if isinstance(exc, nats.errors.MaxPayloadError):
        return PayloadTooLarge(
            f"{what}{on} exceeds the NATS server's max_payload; send large data by reference"
            " (a URL or object-store key)"
        )
    if isinstance(exc, nats.errors.BadSubjectError):
        return BadRequest(f"{what} names a subject NATS does not accept ({subject!r}); check the tool name")
    if refuses_connection(exc):
        return BrokerError(
            f"NATS refused {what}{on} ({kind}: {exc}); check the credentials and TLS settings"
            " (TOOLMESH_NATS_*) against the server's configuration"
        )
    return BrokerError(
        f"the NATS connection failed during {what}{on} ({kind}: {exc}); the broker may be restarting"
        " or unreachable: try again shortly, or check 'toolmesh health'"
    )
