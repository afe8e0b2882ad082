"""The in-process result cache: LRU eviction, per-entry TTL, and the cache key."""

from __future__ import annotations

from typing import Any

import pytest
import toolmesh._pipeline.memory_cache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolmesh._pipeline.memory_cache import MemoryCache, cache_key
from toolmesh.contracts import ToolResult


class FakeClock:
    def __init__(self) -> None:
        self.now = 500.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(toolmesh._pipeline.memory_cache, "time", fake)
    return fake


def result(value: Any) -> ToolResult:
    return ToolResult(id="r", tool="t", structured_content=value)


def test_get_returns_what_was_put() -> None:
    """A stored result is returned for its key; other keys miss."""
    cache = MemoryCache()
    cache.put("k", result(1), ttl=None)
    assert cache.get("k") == result(1)
    assert cache.get("other") is None


def test_put_replaces_an_entry() -> None:
    """Storing under an existing key replaces the result without growing the cache."""
    cache = MemoryCache()
    cache.put("k", result(1), ttl=None)
    cache.put("k", result(2), ttl=None)
    assert (cache.get("k"), len(cache)) == (result(2), 1)


def test_least_recently_stored_is_evicted_first() -> None:
    """When full, the entry untouched for longest goes first."""
    cache = MemoryCache(max_entries=2)
    cache.put("a", result("a"), ttl=None)
    cache.put("b", result("b"), ttl=None)
    cache.put("c", result("c"), ttl=None)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, result("b"), result("c"))
    assert len(cache) == 2


def test_get_refreshes_recency() -> None:
    """Reading an entry makes it the most recently used, so another is evicted instead."""
    cache = MemoryCache(max_entries=2)
    cache.put("a", result("a"), ttl=None)
    cache.put("b", result("b"), ttl=None)
    assert cache.get("a") is not None
    cache.put("c", result("c"), ttl=None)
    assert cache.get("b") is None
    assert cache.get("a") == result("a") and cache.get("c") == result("c")


def test_put_refreshes_recency() -> None:
    """Re-storing an entry makes it the most recently used."""
    cache = MemoryCache(max_entries=2)
    cache.put("a", result("a1"), ttl=None)
    cache.put("b", result("b"), ttl=None)
    cache.put("a", result("a2"), ttl=None)
    cache.put("c", result("c"), ttl=None)
    assert cache.get("b") is None
    assert cache.get("a") == result("a2")


def test_eviction_order_over_many_entries() -> None:
    """Filling a cache of 3 with 5 keys keeps exactly the last 3 stored."""
    cache = MemoryCache(max_entries=3)
    for key in "abcde":
        cache.put(key, result(key), ttl=None)
    assert [key for key in "abcde" if cache.get(key) is not None] == ["c", "d", "e"]


def test_entry_expires_after_ttl(clock: FakeClock) -> None:
    """An entry is live before its TTL has passed and gone (and removed) at it."""
    cache = MemoryCache()
    cache.put("k", result(1), ttl=10.0)
    clock.now += 9.999
    assert cache.get("k") == result(1)
    clock.now += 0.001
    assert cache.get("k") is None
    assert len(cache) == 0


def test_entries_expire_independently(clock: FakeClock) -> None:
    """Each entry has its own TTL; ttl=None never expires."""
    cache = MemoryCache()
    cache.put("short", result(1), ttl=1.0)
    cache.put("long", result(2), ttl=100.0)
    cache.put("forever", result(3), ttl=None)
    clock.now += 50.0
    assert (cache.get("short"), cache.get("long"), cache.get("forever")) == (None, result(2), result(3))
    clock.now += 10**9
    assert (cache.get("long"), cache.get("forever")) == (None, result(3))


def test_put_restarts_the_ttl(clock: FakeClock) -> None:
    """Re-storing an entry gives it a fresh TTL."""
    cache = MemoryCache()
    cache.put("k", result(1), ttl=10.0)
    clock.now += 8.0
    cache.put("k", result(2), ttl=10.0)
    clock.now += 8.0
    assert cache.get("k") == result(2)


@pytest.mark.parametrize("size", [0, -1])
def test_max_entries_must_be_positive(size: int) -> None:
    """A cache must hold at least one entry."""
    with pytest.raises(ValueError, match="max_entries"):
        MemoryCache(max_entries=size)


@pytest.mark.parametrize(
    ("tool", "arguments", "key"),
    [
        ("add", {"a": 1, "b": 2}, 'tool:add|input:{"a":1,"b":2}'),
        ("add", {"b": 2, "a": 1}, 'tool:add|input:{"a":1,"b":2}'),
        ("echo", {}, "tool:echo|input:{}"),
        ("q", {"z": [{"y": 1, "x": 2}], "s": "é"}, 'tool:q|input:{"s":"é","z":[{"x":2,"y":1}]}'),
    ],
)
def test_cache_key_format(tool: str, arguments: dict[str, Any], key: str) -> None:
    """The key is tool:{name}|input:{arguments as compact JSON with sorted keys, nested too}."""
    assert cache_key(tool, arguments) == key


def test_cache_key_keeps_list_order() -> None:
    """Lists are ordered values: reordering one changes the key."""
    assert cache_key("t", {"x": [1, 2]}) != cache_key("t", {"x": [2, 1]})


def test_cache_key_separates_tools() -> None:
    """The same arguments for two tools give two keys."""
    assert cache_key("a", {"x": 1}) != cache_key("b", {"x": 1})


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=10,
)


def _reverse_order(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _reverse_order(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_order(item) for item in value]
    return value


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(max_size=4), _json, max_size=5))
def test_cache_key_ignores_dict_order(arguments: dict[str, Any]) -> None:
    """Equal arguments give equal keys whatever the insertion order of any dict in them."""
    assert cache_key("t", arguments) == cache_key("t", _reverse_order(arguments))
