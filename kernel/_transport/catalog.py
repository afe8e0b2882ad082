"""The shared catalog: one JetStream key-value entry per node, rewritten on every heartbeat.

The bucket's ``max_age`` is the catalog TTL, so the server itself drops the
entry of a node that stopped heartbeating (killed, cut off); a node that stops
gracefully deletes its entry at once.

**Signed entries.**  Any NATS user allowed to write the bucket could otherwise
add a node, or rewrite a real node's tool descriptions (text that agents read
as instructions).  With a catalog secret (:func:`catalog_secret`: the
``catalog_secret`` setting, else ``identity_secret``) a node signs every entry
it writes, and a reader holding the secret ignores each entry that is
unsigned, does not verify, names another node than its key, or carries a
heartbeat older than its TTL plus :data:`~toolmesh._pipeline.identity.MAX_SKEW` (a
replayed old entry), warning once per key.  A reader without a secret takes
every entry as it is, signed or not.  The wire form is described in
``toolmesh.contracts.catalog``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import msgspec
import nats.errors
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import (
    BucketNotFoundError,
    KeyDeletedError,
    KeyNotFoundError,
    NoStreamResponseError,
    NotFoundError,
)
from nats.js.kv import KeyValue
from toolmesh._errors import BrokerError
from toolmesh._pipeline.identity import MAX_SKEW, catalog_signature, catalog_signature_valid
from toolmesh._telemetry.logs import register_secret
from toolmesh.contracts import NodeEntry, ToolSpec, decode_node_entry, encode

if TYPE_CHECKING:
    from toolmesh._config import Settings

__all__ = ["CatalogBucket", "catalog_secret", "merge_tools"]

_log = logging.getLogger("toolmesh.catalog")

JETSTREAM_ATTEMPTS = 5
"""Tries at a catalog operation before a JetStream that does not answer is reported (about 2.5 s)."""

T = TypeVar("T")

_SIGNATURE_MEMBER = re.compile(rb',"signature":"(v1\.[0-9a-f]{64})"\}\Z')
"""The member a signing node appends last to an entry's JSON object."""

_REFUSALS_REMEMBERED = 1024
"""Ignored entries (key and reason) a reader remembers so as to warn about each only once."""

_INTRUDER = "some other NATS user writes the catalog: remove its write permission on $KV.{bucket}.>"
_SECRET_FIX = (
    "set the same catalog_secret (TOOLMESH_CATALOG_SECRET) on every node and client of the mesh;"
    " if they all have it, " + _INTRUDER
)
_CLOCK_FIX = "keep the clocks of nodes and clients in sync (NTP); if they are, " + _INTRUDER


def catalog_secret(settings: Settings) -> str | None:
    """The key that signs and verifies catalog entries: ``catalog_secret``, else ``identity_secret``."""
    return settings.catalog_secret or settings.identity_secret


_LEADERLESS = (nats.errors.TimeoutError, nats.errors.NoRespondersError, NoStreamResponseError)
"""What a stream without a leader answers; a server without JetStream answers NoRespondersError too."""


async def _answered(
    operation: Callable[[], Awaitable[T]], retry_on: tuple[type[Exception], ...] = _LEADERLESS
) -> T:
    """Run a JetStream operation, retrying while the stream has no leader to answer it."""
    for attempt in range(JETSTREAM_ATTEMPTS):
        try:
            return await operation()
        except retry_on as exc:
            # A new or restarting cluster answers late while it elects the stream's leader, not never.
            if attempt + 1 == JETSTREAM_ATTEMPTS:
                raise BrokerError(
                    f"JetStream did not answer in {JETSTREAM_ATTEMPTS} tries ({exc!r}); a new or restarting"
                    " cluster may still be electing leaders: try again shortly"
                ) from exc
            await asyncio.sleep(0.25 * (attempt + 1))
    raise AssertionError("unreachable")


class CatalogBucket:
    """Read and write node entries in the catalog bucket of one mesh."""

    def __init__(self, kv: KeyValue, js: JetStreamContext, bucket: str, secret: str | None = None) -> None:
        self.kv = kv
        self.js = js
        self.bucket = bucket
        self.secret = secret
        """Signs what :meth:`put` writes and verifies what :meth:`entries` reads; ``None``: neither."""
        self._refused: set[tuple[str, str]] = set()  # (key, reason) already warned about
        if secret:
            register_secret(secret)

    @classmethod
    async def open(
        cls,
        js: JetStreamContext,
        bucket: str,
        ttl: float,
        *,
        create: bool,
        replicas: int = 1,
        secret: str | None = None,
    ) -> CatalogBucket | None:
        """Open the bucket, creating it (with ``replicas`` copies) when ``create``: nodes do, clients only read.

        With a ``secret``, entries written are signed and entries read are verified.
        Returns ``None`` when it does not exist and ``create`` is false.
        """
        try:
            # Only a timeout is retried here: "no responders" means the server has no JetStream.
            kv = await _answered(lambda: js.key_value(bucket), (nats.errors.TimeoutError,))
            return cls(kv, js, bucket, secret)
        except BucketNotFoundError:
            if not create:
                return None
        except BrokerError:
            raise
        except nats.errors.Error as exc:  # JetStream disabled surfaces as several error types
            raise BrokerError(
                f"the NATS server has no JetStream, which the catalog needs ({exc}); start nats-server with -js"
            ) from exc
        # direct: a listing does one get per node; direct gets skip the stream leader's API queue
        config = KeyValueConfig(
            bucket=bucket, history=1, ttl=ttl, storage=StorageType.MEMORY, direct=True, replicas=replicas
        )
        try:
            return cls(await js.create_key_value(config=config), js, bucket, secret)
        except nats.errors.Error as exc:  # another node created it first (else opening it fails too)
            _log.debug("catalog bucket %s not created here: %r", bucket, exc)
            return cls(await js.key_value(bucket), js, bucket, secret)

    async def put(self, entry: NodeEntry) -> None:
        """Write (or refresh) a node's entry, signed when this bucket has a secret."""
        body = encode(msgspec.structs.replace(entry, signature=""))
        if self.secret:
            # Appended, not re-encoded: readers verify these exact bytes, never a re-encoding of them.
            body = body[:-1] + b',"signature":' + encode(catalog_signature(self.secret, self.bucket, body)) + b"}"
        await _answered(lambda: self.kv.put(entry.node, body))

    async def remove(self, node: str) -> None:
        """Delete a node's entry (graceful stop)."""
        try:
            await self.kv.purge(node)
        except NotFoundError:
            pass

    async def entries(self) -> list[NodeEntry]:
        """Every live node entry.

        The keys come from the stream's per-subject state and the values from
        direct gets.  (A key-value watcher is not used: nats.py's end-of-initial-
        values marker can arrive before the values when the server is busy, which
        made a 50-node catalog read as empty now and then.)
        """
        found = await asyncio.gather(*(self._entry(key) for key in await self.node_names()))
        return [entry for entry in found if entry is not None]

    async def node_names(self) -> set[str]:
        """The names of the nodes with an entry, without reading the entries (one cheap request)."""
        prefix = f"$KV.{self.bucket}."
        info = await self.js.stream_info(f"KV_{self.bucket}", subjects_filter=prefix + ">")
        return {subject[len(prefix):] for subject in (info.state.subjects or {})}

    async def _entry(self, key: str) -> NodeEntry | None:
        try:
            update = await self.kv.get(key)
        except (KeyNotFoundError, KeyDeletedError, NotFoundError):
            return None  # purged by a stopping node, or expired since the listing
        if not update.value:
            return None
        body = update.value
        if self.secret:
            signed = _SIGNATURE_MEMBER.search(body)
            if signed is None:
                self._refuse(key, "it is not signed", _SECRET_FIX)
                return None
            body = body[: signed.start()] + b"}"
            if not catalog_signature_valid(self.secret, self.bucket, body, signed.group(1).decode()):
                self._refuse(
                    key, "its signature does not verify (altered, or signed with another secret)", _SECRET_FIX
                )
                return None
        try:
            entry = decode_node_entry(body)
        except ValueError as exc:
            _log.warning("ignoring unreadable catalog entry %s: %s", key, exc)
            return None
        if self.secret:
            if entry.node != key:
                self._refuse(key, f"it holds the signed entry of node {entry.node!r} (copied)", _INTRUDER)
                return None
            age = time.time() - entry.heartbeat_at
            if age > entry.ttl + MAX_SKEW or -age > MAX_SKEW:
                # No age in the reason: it would change on every read and warn every time.
                self._refuse(key, "its heartbeat is out of date or in the future", _CLOCK_FIX)
                return None
        return entry

    def _refuse(self, key: str, reason: str, fix: str) -> None:
        # Once per key and reason for this reader: listings repeat every few seconds, and an
        # attacker rewriting a live node's entry makes it flip between genuine and forged.
        if (key, reason) not in self._refused:
            if len(self._refused) >= _REFUSALS_REMEMBERED:
                self._refused.clear()  # attacker-chosen keys must not grow this without bound
            self._refused.add((key, reason))
            _log.warning(
                "ignoring catalog entry %r: %s, so its tools are not listed or suggested; %s",
                key, reason, fix.format(bucket=self.bucket),
            )


def merge_tools(entries: list[NodeEntry]) -> dict[str, tuple[ToolSpec, list[str]]]:
    """Tools by name with the nodes serving each (the first node's spec stands for the rest)."""
    merged: dict[str, tuple[ToolSpec, list[str]]] = {}
    for entry in sorted(entries, key=lambda entry: entry.node):
        if entry.draining:
            continue
        for spec in entry.tools:
            if spec.name in merged:
                merged[spec.name][1].append(entry.node)
            else:
                merged[spec.name] = (spec, [entry.node])
    return merged
