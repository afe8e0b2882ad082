"""The crew cache: crewAI's ``tool:{name}|input:{input}`` keys, shared by every client of a mesh.

A ``CrewCache`` answers lookups from memory.  Opened with :meth:`CrewCache.shared`
it is backed by a JetStream key-value bucket named from the subject prefix
(``toolmesh_crew_cache_<prefix>``): every put is written there, and a watch
mirrors the bucket into memory, so agents on other processes and machines —
whichever node served the call — see the same entries a few milliseconds
later, while a lookup stays a dictionary access.  Entries carry their own
expiry (the tool's ``CachePolicy.ttl``); the bucket's ``max_age`` bounds them all.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

import msgspec
import nats.errors
from nats.aio.client import Client as NATS
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue
from toolmesh import cache_key
from toolmesh.contracts import ToolResult, ToolSpec, encode

__all__ = [
    "BUCKET_MAX_AGE",
    "CrewCache",
    "ShouldCache",
    "bucket_name",
    "cache_key",
    "spec_should_cache",
    "split_cache_key",
]

ShouldCache = Callable[[dict[str, Any], ToolResult], bool]
"""A per-tool policy: cache this result of a call with these arguments?"""

BUCKET_MAX_AGE = 24 * 3600.0
"""Seconds after which the bucket drops any entry, whatever its own TTL."""

_log = logging.getLogger("toolmesh.crew.cache")


class _Stored(msgspec.Struct, kw_only=True, omit_defaults=True):
    key: str
    result: ToolResult
    expires_at: float | None = None


_decode_stored = msgspec.json.Decoder(_Stored).decode


def bucket_name(prefix: str) -> str:
    """The key-value bucket of the crew cache of the mesh with subject ``prefix``."""
    return "toolmesh_crew_cache_" + prefix.replace(".", "_")


def split_cache_key(key: str) -> tuple[str, str]:
    """``tool:{name}|input:{input}`` → ``(name, input)``; raises ``ValueError`` for another shape."""
    if not key.startswith("tool:") or "|input:" not in key:
        raise ValueError(f"cache key {key!r} is not of the form 'tool:{{name}}|input:{{input}}'")
    name, _, arguments = key[len("tool:") :].partition("|input:")
    return name.strip(), arguments.strip()


def spec_should_cache(spec: ToolSpec) -> ShouldCache | None:
    """The declarative policy in ``meta["crew"]["should_cache"]``, or ``None``.

    ``"never"``; ``"non_empty"`` (skip empty text and null results); or
    ``{"skip_if_contains": ["rate limit", ...]}`` (skip results whose text holds one of them).
    """
    crew = (spec.meta or {}).get("crew")
    rule = crew.get("should_cache") if isinstance(crew, dict) else None
    if rule is None or rule == "always":
        return None
    if rule == "never":
        return lambda arguments, result: False
    if rule == "non_empty":
        return lambda arguments, result: (
            bool(result.text.strip()) or result.structured_content not in (None, "", [], {})
        )
    if isinstance(rule, dict) and isinstance(rule.get("skip_if_contains"), list):
        needles = [str(needle).lower() for needle in rule["skip_if_contains"]]
        return lambda arguments, result: not any(needle in result.text.lower() for needle in needles)
    raise ValueError(
        f"tool {spec.name!r} has meta.crew.should_cache={rule!r}; use 'always', 'never', 'non_empty'"
        " or {'skip_if_contains': [...]}"
    )


def _kv_key(key: str) -> str:
    # KV keys allow only [-/_=.a-zA-Z0-9]; the crewAI key travels inside the value.
    return hashlib.sha256(key.encode()).hexdigest()


class CrewCache:
    """Tool results by crewAI-shaped key; in memory, optionally mirrored through NATS."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float | None, ToolResult]] = {}
        self._kv: KeyValue | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._watcher: Any = None
        self._nc: NATS | None = None
        self._subject = ""
        self._own: set[str] = set()
        self.hits = 0
        self.misses = 0

    @classmethod
    async def shared(cls, nc: NATS, prefix: str) -> CrewCache:
        """A cache mirrored through the mesh's crew-cache bucket (created on first use)."""
        cache = cls()
        js = nc.jetstream()
        name = bucket_name(prefix)
        try:
            kv = await js.key_value(name)
        except BucketNotFoundError:
            config = KeyValueConfig(bucket=name, history=1, ttl=BUCKET_MAX_AGE, storage=StorageType.MEMORY)
            try:
                kv = await js.create_key_value(config=config)
            except nats.errors.Error as exc:  # another client created it first (else opening it fails too)
                _log.debug("crew cache bucket %s not created here: %r", name, exc)
                kv = await js.key_value(name)
        cache._kv = kv
        cache._nc = nc
        cache._subject = f"$KV.{name}."
        cache._watcher = await kv.watchall()
        ready = asyncio.Event()
        cache._watch_task = asyncio.get_running_loop().create_task(cache._mirror(ready))
        await ready.wait()
        return cache

    async def _mirror(self, ready: asyncio.Event) -> None:
        async for entry in self._watcher:
            if entry is None:
                ready.set()
                continue
            if entry.key in self._own:  # our own write coming back: already in memory
                self._own.discard(entry.key)
                continue
            if entry.operation in (KV_DEL, KV_PURGE) or not entry.value:
                continue
            try:
                stored = _decode_stored(entry.value)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                _log.warning("ignoring unreadable crew cache entry %s: %s", entry.key, exc)
                continue
            self._entries[stored.key] = (stored.expires_at, stored.result)
        ready.set()

    async def flush(self) -> None:
        """Wait until every stored entry has reached the server."""
        if self._nc is not None and not self._nc.is_closed:
            await self._nc.flush()

    async def close(self) -> None:
        """Write what is pending, then stop mirroring (the entries stay in the bucket for others)."""
        await self.flush()
        if self._watcher is not None:
            try:
                await self._watcher.stop()
            except nats.errors.Error as exc:  # the connection may already be closed
                _log.debug("stopping the crew cache watcher failed: %r", exc)
            self._watcher = None
        if self._watch_task is not None:
            self._watch_task.cancel()
            try:
                await self._watch_task
            except asyncio.CancelledError:
                pass  # stopped, as asked
            except nats.errors.Error as exc:  # the mirror had lost its connection: nothing left to mirror
                _log.debug("the crew cache mirror had stopped: %r", exc)
            self._watch_task = None

    def get(self, key: str) -> ToolResult | None:
        """The live result stored under ``key``, or ``None``."""
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        expires_at, result = entry
        if expires_at is not None and expires_at <= time.time():
            del self._entries[key]
            self.misses += 1
            return None
        self.hits += 1
        return result

    def read(self, tool: str, arguments: dict[str, Any]) -> ToolResult | None:
        """The cached result of ``tool`` called with ``arguments``."""
        return self.get(cache_key(tool, arguments))

    async def put(self, key: str, result: ToolResult, ttl: float | None) -> None:
        """Store ``result`` here and publish it to the bucket (no acknowledgement awaited: see ``flush``)."""
        expires_at = None if ttl is None else time.time() + ttl
        self._entries[key] = (expires_at, result)
        if self._nc is None:
            return
        kv_key = _kv_key(key)
        self._own.add(kv_key)
        data = encode(_Stored(key=key, result=result, expires_at=expires_at))
        try:
            # A plain publish on the bucket's subject is stored like kv.put, minus the round trip.
            await self._nc.publish(self._subject + kv_key, data)
        except nats.errors.Error as exc:  # a lost write only costs other clients a cache miss
            self._own.discard(kv_key)
            _log.warning("could not share crew cache entry: %r", exc)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._entries.get(key) is not None
