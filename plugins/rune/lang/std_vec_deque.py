"""``std::collections::VecDeque`` over ``collections.deque``, with upstream Rune's methods,
errors and ordering: iteration, equality and ``{:?}`` go front to back."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from .collection_hints import sized
from .errors import RuneRuntimeError
from .iterators import CONSUMERS, RuneIterator
from .limits import ITEM_BLOCK, ITEM_BYTES, allocate, check_length, grow
from .runtime import cmp, eq, iterate, type_name
from .std_collections import (
    HASHMAP_NS,
    HASHSET_NS,
    HashMap,
    HashSet,
    TypeNamespace,
    _guarded,
    _instance_methods,
    _usize,
)
from .values import NONE, Module, Option

__all__ = ["COLLECTION_TYPES", "INDEXED", "VECDEQUE_NS", "VecDeque", "collections_module"]


def _out_of_range(index: Any, length: int) -> RuneRuntimeError:
    return RuneRuntimeError(f"Index out of bounds, the length is `{length}` but the index is `{index}`")


class VecDeque:
    """A double-ended queue: ``items`` holds the values front to back."""

    __slots__ = ("capacity_", "items")

    def __init__(self, capacity: int = 0, items: Any = ()) -> None:
        self.items: deque[Any] = deque(items)
        self.capacity_ = capacity

    def push_back(self, value: Any) -> None:
        items = self.items
        if len(items) % ITEM_BLOCK == 0 and items:
            grow(items, value, "VecDeque")
        items.append(value)

    def push_front(self, value: Any) -> None:
        items = self.items
        if len(items) % ITEM_BLOCK == 0 and items:
            grow(items, value, "VecDeque")
        items.appendleft(value)

    def pop_front(self) -> Option:
        items = self.items
        return Option(True, items.popleft()) if items else NONE

    def pop_back(self) -> Option:
        items = self.items
        return Option(True, items.pop()) if items else NONE

    def front(self) -> Option:
        items = self.items
        return Option(True, items[0]) if items else NONE

    def back(self) -> Option:
        items = self.items
        return Option(True, items[-1]) if items else NONE

    def len(self) -> int:
        return len(self.items)

    def capacity(self) -> int:
        return max(self.capacity_, len(self.items))

    def reserve(self, additional: Any) -> None:
        _usize(additional, "VecDeque::reserve")
        check_length(len(self.items) + additional, "VecDeque")
        self.capacity_ = max(self.capacity_, len(self.items) + additional)

    def insert(self, index: Any, value: Any) -> None:
        items = self.items
        if type(index) is not int or not 0 <= index <= len(items):
            raise _out_of_range(index, len(items))
        if len(items) % ITEM_BLOCK == 0 and items:
            grow(items, value, "VecDeque")
        items.insert(index, value)

    def remove(self, index: Any) -> Option:
        items = self.items
        if type(index) is not int or not 0 <= index < len(items):
            _usize(index, "VecDeque::remove")
            return NONE
        value = items[index]
        del items[index]
        return Option(True, value)

    def rotate_left(self, mid: Any) -> None:
        if type(mid) is not int or not 0 <= mid <= len(self.items):
            raise _out_of_range(mid, len(self.items))
        self.items.rotate(-mid)

    def rotate_right(self, k: Any) -> None:
        if type(k) is not int or not 0 <= k <= len(self.items):
            raise _out_of_range(k, len(self.items))
        self.items.rotate(k)

    def extend(self, values: Any) -> None:
        self.fill(iterate(values))

    def fill(self, values: Iterator[Any]) -> None:
        push = self.push_back
        for v in values:
            push(v)

    def iter(self) -> RuneIterator:
        source = iter(self.items)
        return RuneIterator(sized(_guarded(source, "VecDeque"), source, True))

    def clone(self) -> VecDeque:
        # upstream registers no `clone` for VecDeque: an error, never a silently shared value
        raise RuneRuntimeError("missing method `clone` on `VecDeque`: copy it with `VecDeque::from_iter(d)`")

    def to_python(self, convert: Callable[[Any], Any]) -> list[Any]:
        return [convert(v) for v in self.items]

    def index_get(self, index: Any) -> Any:
        items = self.items
        if type(index) is int and 0 <= index < len(items):
            return items[index]
        raise _out_of_range(index, len(items))

    def index_set(self, index: Any, value: Any) -> None:
        items = self.items
        if type(index) is int and 0 <= index < len(items):
            items[index] = value
            return
        raise _out_of_range(index, len(items))

    def __rune_iter__(self) -> Iterator[Any]:
        return _guarded(iter(self.items), "VecDeque")

    def equals(self, other: Any) -> bool:
        """``PARTIAL_EQ``: against anything iterable (a vector, a range, an iterator...)."""
        theirs = iter(other.items) if type(other) is VecDeque else iterate(other)
        for a in self.items:
            b = next(theirs, _END)
            if b is _END or not eq(a, b):
                return False
        return next(theirs, _END) is _END

    def compare(self, other: Any) -> int:
        if type(other) is not VecDeque:
            raise RuneRuntimeError(f"cannot compare `VecDeque` with `{type_name(other)}`")
        return cmp(list(self.items), list(other.items))

    def debug_into(
        self, add: Callable[[str], None], item: Callable[[Any, Callable[[str], None]], None]
    ) -> None:
        add("[")
        for i, v in enumerate(self.items):
            add(", " if i else "")
            item(v, add)
        add("]")

    @staticmethod
    def from_iter(values: Any) -> VecDeque:
        d = VecDeque()
        d.fill(iterate(values))
        return d

    @staticmethod
    def collected(values: Iterator[Any]) -> VecDeque:
        d = VecDeque()
        d.fill(values)
        return d


_END = object()


def _from_vec(v: Any) -> VecDeque:
    """``VecDeque::from::<Vec>(v)``: the only conversion upstream registers."""
    if type(v) is not list:
        raise RuneRuntimeError(f"`VecDeque::from::<Vec>` expects a `Vec`, found `{type_name(v)}`")
    check_length(len(v), "VecDeque")
    allocate(len(v), "VecDeque", ITEM_BYTES)
    return VecDeque(0, v)


def _with_capacity(n: Any) -> VecDeque:
    check_length(_usize(n, "VecDeque::with_capacity"), "VecDeque")
    return VecDeque(n)


VECDEQUE_METHODS = _instance_methods(
    VecDeque,
    (
        "push_back", "push_front", "pop_front", "pop_back", "front", "back", "len", "capacity",
        "reserve", "insert", "remove", "rotate_left", "rotate_right", "extend", "iter", "clone",
    ),
)  # fmt: skip

VECDEQUE_NS = TypeNamespace(
    "VecDeque",
    {"new": VecDeque, "with_capacity": _with_capacity, "from_iter": VecDeque.from_iter, "from": _from_vec},
    VECDEQUE_METHODS,
)

CONSUMERS["collect::VecDeque"] = VecDeque.collected


def collections_module() -> Module:
    """``std::collections`` with its re-exports and the ``hash_map``, ``hash_set`` and
    ``vec_deque`` modules, as upstream lays them out."""
    return Module(
        "collections",
        {
            "HashMap": HASHMAP_NS,
            "HashSet": HASHSET_NS,
            "VecDeque": VECDEQUE_NS,
            "hash_map": Module("hash_map", {"HashMap": HASHMAP_NS}),
            "hash_set": Module("hash_set", {"HashSet": HASHSET_NS}),
            "vec_deque": Module("vec_deque", {"VecDeque": VECDEQUE_NS}),
        },
    )


# Here, not in ``std_collections``: this module is the one that knows every collection type.
COLLECTION_TYPES: dict[str, type] = {"HashMap": HashMap, "HashSet": HashSet, "VecDeque": VecDeque}
"""Type names for ``value is HashMap``."""
INDEXED = frozenset({HashMap, VecDeque})
"""Collections with the ``INDEX_GET`` / ``INDEX_SET`` protocols (a HashSet has neither)."""
