"""The shared catalog: one JetStream key-value entry per node, rewritten on every heartbeat.

The bucket's ``max_age`` is the catalog TTL, so the server itself drops the
entry of a node that stopped heartbeating (killed, cut off); a node that stops
gracefully deletes its entry at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

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

from toolmesh.contracts import NodeEntry, ToolSpec, decode_node_entry, encode

from .errors import BrokerError

__all__ = ["CatalogBucket", "merge_tools"]

_log = logging.getLogger("toolmesh.catalog")

JETSTREAM_ATTEMPTS = 5
"""Tries at a catalog operation before a JetStream that does not answer is reported (about 2.5 s)."""

T = TypeVar("T")


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

    def __init__(self, kv: KeyValue, js: JetStreamContext, bucket: str) -> None:
        self.kv = kv
        self.js = js
        self.bucket = bucket

    @classmethod
    async def open(
        cls, js: JetStreamContext, bucket: str, ttl: float, *, create: bool, replicas: int = 1
    ) -> CatalogBucket | None:
        """Open the bucket, creating it (with ``replicas`` copies) when ``create``: nodes do, clients only read.

        Returns ``None`` when it does not exist and ``create`` is false.
        """
        try:
            # Only a timeout is retried here: "no responders" means the server has no JetStream.
            return cls(await _answered(lambda: js.key_value(bucket), (nats.errors.TimeoutError,)), js, bucket)
        except BucketNotFoundError:
            if not create:
                return None
        except BrokerError:
            raise
        except Exception as exc:  # noqa: BLE001 - JetStream disabled surfaces as several error types
            raise BrokerError(
                f"the NATS server has no JetStream, which the catalog needs ({exc}); start nats-server with -js"
            ) from exc
        # direct: a listing does one get per node; direct gets skip the stream leader's API queue
        config = KeyValueConfig(
            bucket=bucket, history=1, ttl=ttl, storage=StorageType.MEMORY, direct=True, replicas=replicas
        )
        try:
            return cls(await js.create_key_value(config=config), js, bucket)
        except Exception:  # noqa: BLE001 - another node created it first
            return cls(await js.key_value(bucket), js, bucket)

    async def put(self, entry: NodeEntry) -> None:
        """Write (or refresh) a node's entry."""
        await _answered(lambda: self.kv.put(entry.node, encode(entry)))

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
        try:
            return decode_node_entry(update.value)
        except ValueError as exc:
            _log.warning("ignoring unreadable catalog entry %s: %s", key, exc)
            return None


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
