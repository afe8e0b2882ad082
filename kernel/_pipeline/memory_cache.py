"""Default plugin: the in-process result cache (LRU with per-entry TTL), opt-in per tool."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from toolmesh._markers import hookimpl
from toolmesh._pipeline.context import CallContext
from toolmesh.contracts import ToolResult, ToolSpec, encode

__all__ = ["DEFAULT_MAX_ENTRIES", "MemoryCache", "MemoryCachePlugin", "cache_key"]

DEFAULT_MAX_ENTRIES = 4096
"""Entries kept before the least recently used one is evicted."""


def cache_key(tool: str, arguments: dict[str, Any]) -> str:
    """The crewAI-shaped key ``tool:{name}|input:{canonical JSON arguments}``."""
    return f"tool:{tool}|input:{encode(_sorted(arguments)).decode()}"


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


class MemoryCache:
    """A bounded LRU mapping whose entries expire ``ttl`` seconds after they are stored."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[float | None, ToolResult]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> ToolResult | None:
        """The live entry for ``key`` (refreshing its recency), or ``None``."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, result = entry
        if expires is not None and expires <= time.monotonic():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return result

    def put(self, key: str, result: ToolResult, ttl: float | None) -> None:
        """Store ``result``; evicts the least recently used entry when full."""
        expires = None if ttl is None else time.monotonic() + ttl
        self._entries[key] = (expires, result)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


class MemoryCachePlugin:
    """The hook implementations; one instance (and so one cache) per kernel."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.cache = MemoryCache(max_entries)

    @hookimpl(trylast=True)
    def toolmesh_cache_key(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> str:
        return cache_key(spec.name, arguments)

    @hookimpl(trylast=True)
    def toolmesh_cache_get(self, spec: ToolSpec, key: str) -> ToolResult | None:
        return self.cache.get(key)

    @hookimpl
    def toolmesh_cache_put(self, spec: ToolSpec, key: str, result: ToolResult, ttl: float | None) -> None:
        self.cache.put(key, result, ttl)
