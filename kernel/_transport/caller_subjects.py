"""The subjects that belong to a caller: where a node may publish on its behalf.

A node's NATS user may publish anywhere, so a subject named by a caller (the
reply subject of its request, the request's ``callback``) must never let the
caller reach a subject it may not publish to itself — another tool's requests,
the JetStream API behind the catalog and the durable results, another
caller's callbacks.  That would make the node a confused deputy.

A caller's replies arrive under an *inbox root* — ``<prefix>.result`` for
toolmesh clients, ``_INBOX`` for plain NATS clients — then its *client*
token::

    <prefix>.result.<client>.<connection>.<...>

``toolmesh.Mesh`` uses its NATS user as ``<client>`` (the shipped
``ops/nats/permissions.conf`` lets each user subscribe to
``<prefix>.result.<user>.>`` and ``<prefix>.callback.<user>.>`` only), or a
random token when it has none, and adds a random ``<connection>`` token.

* A reply subject must lie under an inbox root, else the node does not answer.
* A callback must lie in the caller's callback namespace
  ``<prefix>.callback.<client>.<...>`` or under its inbox ``<root>.<client>.<...>``;
  anything else is refused with ``bad_request`` before the tool runs.
* An anonymous caller proves that a call is its own by naming its connection
  inbox (``<root>.<client>.<connection>``, ``CancelRequest.inbox``) under which
  the call's reply subject lies.

A caller can still name another client's namespace as its reply subject; what
keeps that harmless is that the last tokens (connection, call) are random and
readable by their owner only.
"""

from __future__ import annotations

import re

from toolmesh.contracts import Subjects

__all__ = [
    "MAX_SUBJECT_LENGTH",
    "NATS_INBOX_ROOT",
    "callback_refusal",
    "caller_client",
    "is_literal_subject",
    "proves_caller",
    "reply_refusal",
]

NATS_INBOX_ROOT = "_INBOX"
"""The inbox prefix NATS clients use unless told otherwise."""

MAX_SUBJECT_LENGTH = 512
"""Longest reply or callback subject a node publishes to."""


_TOKEN = r"[^.*>\s\x00-\x1f\x7f]+"
_LITERAL_SUBJECT = re.compile(rf"{_TOKEN}(?:\.{_TOKEN})*")


def is_literal_subject(subject: str) -> bool:
    """True for a subject of non-empty tokens without wildcards (``*``, ``>``), spaces or control codes."""
    return len(subject) <= MAX_SUBJECT_LENGTH and _LITERAL_SUBJECT.fullmatch(subject) is not None


def caller_client(subjects: Subjects, subject: str) -> tuple[str, str] | None:
    """The inbox root and client token of a reply subject or inbox, ``None`` if it lies under no root."""
    if not is_literal_subject(subject):
        return None
    for root in (subjects.result_prefix, NATS_INBOX_ROOT):
        if subject.startswith(root + "."):
            return root, subject[len(root) + 1 :].split(".", 1)[0]
    return None


def reply_refusal(subjects: Subjects, reply: str) -> str | None:
    """Why a node must not answer on ``reply``, or ``None`` when it may."""
    if caller_client(subjects, reply) is not None:
        return None
    return (
        f"reply subject {reply[:120]!r} lies outside every inbox: ask for replies under"
        f" {subjects.result_prefix}.<client>. or {NATS_INBOX_ROOT}."
    )


def callback_refusal(subjects: Subjects, reply: str | None, callback: str) -> str | None:
    """Why ``callback`` is refused for a caller whose reply subject is ``reply``; ``None`` when allowed."""
    if not is_literal_subject(callback):
        return (
            f"callback subject {callback[:120]!r} is not a literal NATS subject: use at most"
            f" {MAX_SUBJECT_LENGTH} characters of dot-separated, non-empty tokens without '*', '>' or spaces"
        )
    owner = caller_client(subjects, reply) if reply else None
    if owner is None:
        return (
            f"a callback needs a reply subject under {subjects.result_prefix}.<client>. or"
            f" {NATS_INBOX_ROOT}.<client>., the caller's inbox; send the request with request-reply"
            f" (got reply subject {reply!r})"
        )
    root, client = owner
    namespace = subjects.callback(client)
    if callback.startswith((f"{namespace}.", f"{root}.{client}.")):
        return None
    return (
        f"callback subject {callback[:120]!r} is outside this caller's own namespace: name a subject under"
        f" {namespace}. (or under the caller's inbox {root}.{client}.)"
    )


def proves_caller(subjects: Subjects, reply: str | None, inbox: str | None) -> bool:
    """True when ``inbox`` is a connection inbox ``<root>.<client>.<connection>`` with ``reply`` under it."""
    if not reply or not inbox or caller_client(subjects, inbox) is None:
        return False
    root = subjects.result_prefix if inbox.startswith(subjects.result_prefix + ".") else NATS_INBOX_ROOT
    # The client token alone may be a guessable user name: the connection's random token must follow.
    if inbox.count(".") - root.count(".") < 2:
        return False
    return reply.startswith(inbox + ".")
