"""The shared result cache: a JetStream key-value bucket every node of a mesh reads and writes.

Enabled with ``shared_cache = true`` (``TOOLMESH_SHARED_CACHE=1``); a node
then registers :class:`SharedCache` on its kernel, ahead of the in-process
cache, behind the same hooks (``toolmesh_cache_get``/``toolmesh_cache_put``).
A result one node computed is a hit on every other node.

Each entry carries its own expiry (the tool's ``CachePolicy.ttl``), checked on
read, because a key-value bucket has one age limit for all keys; that limit
(``shared_cache_max_ttl``) bounds how long anything is stored at all.  Keys
are SHA-256 digests of the cache key, so any arguments make a valid key.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Awaitable

import msgspec
import nats.errors
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, NotFoundError
from nats.js.kv import KeyValue
from toolmesh._config import Settings
from toolmesh._errors import BrokerError
from toolmesh._markers import hookimpl
from toolmesh.contracts import ToolResult, ToolSpec

__all__ = ["SharedCache"]

_log = logging.getLogger("toolmesh.shared_cache")


class _Entry(msgspec.Struct, frozen=True):
    expires_at: float | None  # UNIX time; None: only the bucket's max age applies
    result: ToolResult


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(_Entry)


class SharedCache:
    """Hook implementations over one key-value bucket (a plugin instance per node)."""

    def __init__(self, kv: KeyValue, max_ttl: float) -> None:
        self.kv = kv
        self.max_ttl = max_ttl

    @classmethod
    async def open(cls, js: JetStreamContext, settings: Settings) -> SharedCache:
        """Open (or create) the mesh's cache bucket."""
        bucket = settings.subjects.cache_bucket
        try:
            try:
                kv = await js.key_value(bucket)
            except BucketNotFoundError:
                config = KeyValueConfig(
                    bucket=bucket, history=1, ttl=settings.shared_cache_max_ttl, storage=StorageType.FILE
                )
                try:
                    kv = await js.create_key_value(config=config)
                except nats.errors.Error as exc:  # another node created it first (else opening it fails too)
                    _log.debug("cache bucket %s not created here: %r", bucket, exc)
                    kv = await js.key_value(bucket)
        except nats.errors.Error as exc:
            raise BrokerError(
                f"cannot open the shared cache bucket {bucket!r} ({type(exc).__name__}: {exc});"
                " the shared cache needs JetStream, or set shared_cache = false"
            ) from exc
        return cls(kv, settings.shared_cache_max_ttl)

    @staticmethod
    def storage_key(key: str) -> str:
        """The bucket key of a cache key."""
        return hashlib.sha256(key.encode()).hexdigest()

    # The in-process cache's get is ``trylast``; this one runs first and, being async,
    # always answers (a miss resolves to None), so the bucket is the one source of truth.
    @hookimpl(tryfirst=True)
    def toolmesh_cache_get(self, spec: ToolSpec, key: str) -> Awaitable[ToolResult | None]:
        return self.get(key)

    @hookimpl
    def toolmesh_cache_put(self, spec: ToolSpec, key: str, result: ToolResult, ttl: float | None) -> Awaitable[None]:
        return self.put(key, result, ttl)

    async def get(self, key: str) -> ToolResult | None:
        """The live entry for ``key``, or ``None`` (missing, expired, unreadable, or broker trouble)."""
        try:
            entry = await self.kv.get(self.storage_key(key))
        except (KeyNotFoundError, NotFoundError):
            return None
        except nats.errors.Error as exc:  # a cache outage is a miss, not a failed call
            _log.warning("shared cache read failed: %r", exc)
            return None
        if not entry.value:
            return None
        try:
            stored = _decoder.decode(entry.value)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if stored.expires_at is not None and stored.expires_at <= time.time():
            return None
        return stored.result

    async def put(self, key: str, result: ToolResult, ttl: float | None) -> None:
        """Store ``result`` for ``ttl`` seconds (capped by the bucket's max age)."""
        expires_at = None if ttl is None else time.time() + min(ttl, self.max_ttl)
        try:
            await self.kv.put(self.storage_key(key), _encoder.encode(_Entry(expires_at, result)))
        except (nats.errors.Error, msgspec.EncodeError) as exc:  # the call succeeded; only its caching failed
            _log.warning("shared cache write failed: %r", exc)
