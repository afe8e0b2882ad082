"""Breadcrumbs: toolmesh's shared records, stored in JetStream KV and announced per schema.

Every create or update is published on ``<prefix>.breadcrumb.<schema token>``
as a ``BreadcrumbEvent``, which is what ``subscriptions`` listen to.  On a
node joined to NATS the records live in the KV bucket
``toolmesh_breadcrumbs_<prefix>``; a kernel without NATS keeps them in memory
and announces them to its own listeners only.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import msgspec
from nats.aio.client import Client as NATS
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError, NoKeysError
from nats.js.kv import KeyValue
from toolmesh.contracts import encode_token
from toolmesh.contracts.tool_code import Breadcrumb, BreadcrumbEvent

__all__ = ["BreadcrumbStore", "MemoryBreadcrumbs", "NatsBreadcrumbs", "breadcrumb_subject"]

_log = logging.getLogger("toolmesh.sandbox.breadcrumbs")

Listener = Callable[[BreadcrumbEvent], Awaitable[None]]


def breadcrumb_subject(prefix: str, schema_name: str) -> str:
    """Where creations and updates of ``schema_name`` breadcrumbs are announced."""
    return f"{prefix}.breadcrumb.{encode_token(schema_name)}"


def new_breadcrumb(fields: dict[str, Any]) -> Breadcrumb:
    """A fresh breadcrumb from a tool's ``{schema_name, title, tags, context}``."""
    now = time.time()
    try:
        return msgspec.convert(
            {**fields, "id": uuid.uuid4().hex, "version": 1, "created_at": now, "updated_at": now}, Breadcrumb
        )
    except msgspec.ValidationError as exc:
        raise ValueError(f"not a breadcrumb: {exc}; give {{schema_name, title, tags, context}}") from exc


def updated(crumb: Breadcrumb, changes: dict[str, Any]) -> Breadcrumb:
    """``crumb`` with ``title``/``tags``/``context`` changed (``context`` is merged) and its version bumped."""
    unknown = set(changes) - {"title", "tags", "context"}
    if unknown:
        raise ValueError(f"cannot update {', '.join(sorted(unknown))}; only title, tags and context change")
    values: dict[str, Any] = {"version": crumb.version + 1, "updated_at": time.time()}
    if "title" in changes:
        values["title"] = str(changes["title"])
    if "tags" in changes:
        values["tags"] = tuple(str(tag) for tag in changes["tags"])
    if "context" in changes:
        values["context"] = {**crumb.context, **dict(changes["context"])}
    return msgspec.structs.replace(crumb, **values)


def replaced(previous: Breadcrumb | None, crumb_id: str, fields: dict[str, Any]) -> Breadcrumb:
    """The breadcrumb ``crumb_id`` with ``fields``, continuing ``previous``'s version and creation time."""
    crumb = new_breadcrumb(fields)
    if previous is None:
        return msgspec.structs.replace(crumb, id=crumb_id)
    return msgspec.structs.replace(crumb, id=crumb_id, version=previous.version + 1, created_at=previous.created_at)


def matches(crumb: Breadcrumb, schema_name: str | None, tag: str | None) -> bool:
    """True when ``crumb`` has ``schema_name`` (if given) and carries ``tag`` (if given)."""
    return (schema_name is None or crumb.schema_name == schema_name) and (tag is None or tag in crumb.tags)


class BreadcrumbStore(Protocol):
    """**Protocol**: where breadcrumbs live; every write is announced."""

    async def create(self, fields: dict[str, Any]) -> Breadcrumb:
        """Store a new breadcrumb and announce it."""

    async def get(self, crumb_id: str) -> Breadcrumb | None:
        """The breadcrumb with ``crumb_id``, or ``None``."""

    async def query(self, schema_name: str | None, tag: str | None, limit: int) -> list[Breadcrumb]:
        """Breadcrumbs of ``schema_name`` carrying ``tag``, newest first."""

    async def update(self, crumb_id: str, changes: dict[str, Any]) -> Breadcrumb:
        """Change a breadcrumb and announce it; ``KeyError`` when it does not exist."""

    async def put(self, crumb_id: str, fields: dict[str, Any]) -> Breadcrumb:
        """Create or replace the breadcrumb ``crumb_id`` and announce it."""

    async def close(self) -> None:
        """Release connections."""


class MemoryBreadcrumbs:
    """Breadcrumbs of one process (a kernel without NATS); listeners are called directly."""

    def __init__(self) -> None:
        self.records: dict[str, Breadcrumb] = {}
        self.listeners: list[Listener] = []

    async def _announce(self, event: BreadcrumbEvent) -> None:
        for listener in list(self.listeners):
            await listener(event)

    async def create(self, fields: dict[str, Any]) -> Breadcrumb:
        crumb = new_breadcrumb(fields)
        self.records[crumb.id] = crumb
        await self._announce(BreadcrumbEvent(event="created", breadcrumb=crumb))
        return crumb

    async def get(self, crumb_id: str) -> Breadcrumb | None:
        return self.records.get(crumb_id)

    async def query(self, schema_name: str | None, tag: str | None, limit: int) -> list[Breadcrumb]:
        found = [crumb for crumb in self.records.values() if matches(crumb, schema_name, tag)]
        return sorted(found, key=lambda crumb: crumb.updated_at, reverse=True)[:limit]

    async def update(self, crumb_id: str, changes: dict[str, Any]) -> Breadcrumb:
        crumb = updated(self.records[crumb_id], changes)
        self.records[crumb_id] = crumb
        await self._announce(BreadcrumbEvent(event="updated", breadcrumb=crumb))
        return crumb

    async def put(self, crumb_id: str, fields: dict[str, Any]) -> Breadcrumb:
        previous = self.records.get(crumb_id)
        crumb = replaced(previous, crumb_id, fields)
        self.records[crumb_id] = crumb
        await self._announce(BreadcrumbEvent(event="updated" if previous else "created", breadcrumb=crumb))
        return crumb

    async def close(self) -> None:
        self.listeners.clear()


class NatsBreadcrumbs:
    """Breadcrumbs in a JetStream KV bucket, announced on ``<prefix>.breadcrumb.<schema>``."""

    def __init__(self, nc: NATS, kv: KeyValue, prefix: str) -> None:
        self.nc = nc
        self.kv = kv
        self.prefix = prefix

    @classmethod
    async def open(cls, nc: NATS, prefix: str) -> NatsBreadcrumbs:
        """Open (creating if needed) the bucket of the mesh with ``prefix``."""
        js = nc.jetstream()
        bucket = "toolmesh_breadcrumbs_" + prefix.replace(".", "_")
        try:
            kv = await js.key_value(bucket)
        except BucketNotFoundError:
            kv = await js.create_key_value(KeyValueConfig(bucket=bucket, storage=StorageType.MEMORY, history=1))
        return cls(nc, kv, prefix)

    async def _announce(self, event: BreadcrumbEvent) -> None:
        await self.nc.publish(breadcrumb_subject(self.prefix, event.breadcrumb.schema_name), msgspec.json.encode(event))

    async def create(self, fields: dict[str, Any]) -> Breadcrumb:
        crumb = new_breadcrumb(fields)
        await self.kv.create(crumb.id, msgspec.json.encode(crumb))
        await self._announce(BreadcrumbEvent(event="created", breadcrumb=crumb))
        return crumb

    async def _entry(self, crumb_id: str) -> tuple[Breadcrumb, int] | None:
        try:
            entry = await self.kv.get(crumb_id)
        except KeyNotFoundError:
            return None
        if entry.value is None:
            return None
        return msgspec.json.decode(entry.value, type=Breadcrumb), entry.revision or 0

    async def get(self, crumb_id: str) -> Breadcrumb | None:
        found = await self._entry(crumb_id)
        return found[0] if found else None

    async def query(self, schema_name: str | None, tag: str | None, limit: int) -> list[Breadcrumb]:
        # A scan: breadcrumb buckets are small; a per-schema index is the next step if they grow.
        try:
            keys = await self.kv.keys()
        except NoKeysError:  # nats.py's answer for an empty bucket
            return []
        found = []
        for key in keys:
            crumb = await self.get(key)
            if crumb is not None and matches(crumb, schema_name, tag):
                found.append(crumb)
        return sorted(found, key=lambda crumb: crumb.updated_at, reverse=True)[:limit]

    async def update(self, crumb_id: str, changes: dict[str, Any]) -> Breadcrumb:
        for _ in range(5):  # optimistic concurrency: retry when another writer got there first
            found = await self._entry(crumb_id)
            if found is None:
                raise KeyError(crumb_id)
            crumb = updated(found[0], changes)
            try:
                await self.kv.update(crumb_id, msgspec.json.encode(crumb), last=found[1])
            except KeyWrongLastSequenceError as exc:  # another writer got there first: read again
                _log.debug("breadcrumb %s changed concurrently: %r", crumb_id, exc)
                continue
            await self._announce(BreadcrumbEvent(event="updated", breadcrumb=crumb))
            return crumb
        raise RuntimeError(f"breadcrumb {crumb_id} kept changing; try the update again")

    async def put(self, crumb_id: str, fields: dict[str, Any]) -> Breadcrumb:
        found = await self._entry(crumb_id)
        crumb = replaced(found[0] if found else None, crumb_id, fields)
        await self.kv.put(crumb_id, msgspec.json.encode(crumb))
        await self._announce(BreadcrumbEvent(event="updated" if found else "created", breadcrumb=crumb))
        return crumb

    async def close(self) -> None:
        return None
