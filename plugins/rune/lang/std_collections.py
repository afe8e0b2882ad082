"""``std::collections``: ``HashMap`` and ``HashSet`` over Python dicts (``VecDeque`` is in
``std_vec_deque``), with upstream Rune's hashing rules.

A key is stored under its *hash key*: integers and strings as themselves (the common case costs
one type test), every other hashable value as a tagged tuple, so that ``1`` and ``1.0`` or a
vector and a tuple with the same items stay distinct keys, as they are in Rune. Hashable are
what upstream hashes: ``i64``, ``f64`` (not NaN; ``-0.0`` is ``0.0``), ``String``, ``Bytes``,
tuples and vectors of hashable values, ``Option`` and ``Result``. ``bool``, ``char``, ``()``,
objects, functions and struct or enum values have no ``HASH`` protocol upstream, and using one
as a key fails the same way. A key that is not its own hash key is kept beside the table, so
iteration gives back the value that was inserted.

Iteration order is unspecified upstream ("arbitrary order"); here it is insertion order, which
scripts must not rely on. Changing a map's size while iterating over it is an error, as in
Rune, where the iterator holds a borrow of the map.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from .collection_hints import sized
from .errors import RuneRuntimeError
from .formatting import debug as _debug
from .iterators import CONSUMERS, RuneIterator
from .limits import ITEM_BLOCK, OBJECT_KEY_BYTES, allocate, check_length, grow
from .runtime import eq, iterate, type_name
from .shared_string import SharedString
from .std_u64 import U64, u64_hash_key
from .values import NONE, Bytes, Option, Result

__all__ = ["HASHMAP_NS", "HASHSET_NS", "HashMap", "HashSet", "hash_key"]

_MISSING = object()


class _Tag:
    """A marker heading the hash key of a non-trivial value; never a Rune value itself."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_FLOAT, _TUPLE, _VEC, _SOME, _NONE, _OK, _ERR, _BYTES = map(
    _Tag, ("f64", "Tuple", "Vec", "Some", "None", "Ok", "Err", "Bytes")
)
_NONE_KEY = (_NONE,)


def hash_key(v: Any) -> Any:
    """The dict key standing for the Rune value ``v``; raises if Rune cannot hash ``v``."""
    t = type(v)
    if t is str or t is int:
        return v
    if t is float:
        if math.isnan(v):
            raise RuneRuntimeError(
                "Cannot perform operation on float `NaN`: NaN cannot be hashed, so it cannot be a "
                "map key or set value"
            )
        return (_FLOAT, v + 0.0)  # -0.0 + 0.0 is 0.0: equal floats hash alike
    if t is tuple:
        return (_TUPLE, *map(hash_key, v))
    if t is list:
        return (_VEC, *map(hash_key, v))
    if t is Option:
        return (_SOME, hash_key(v.value)) if v.is_some else _NONE_KEY
    if t is Result:
        return (_OK if v.is_ok else _ERR, hash_key(v.value))
    if t is Bytes:
        return (_BYTES, bytes(v))
    if t is SharedString:  # hashes as its text now, as upstream's HASH of a String
        return str(v)
    if t is U64:
        return u64_hash_key(v)
    raise RuneRuntimeError(
        f"Unsupported unary operation `hash` on `{type_name(v)}`: a map key or set value must be an "
        "integer, float, string, bytes, tuple, vector, Option or Result"
    )


def _usize(v: Any, what: str) -> int:
    if type(v) is not int or v < 0:
        raise RuneRuntimeError(f"`{what}` expects a non-negative integer, found `{type_name(v)}` {v!r}")
    return v


def _guarded(items: Iterator[Any], what: str) -> Iterator[Any]:
    """Python detects a dict or deque resized while iterated; Rune's borrow check forbids it."""
    try:
        yield from items
    except RuntimeError:
        raise RuneRuntimeError(
            f"the {what} was modified while being iterated over; collect what to change first"
        ) from None


def _pair(v: Any, what: str) -> tuple[Any, Any]:
    if type(v) is tuple and len(v) == 2:
        return v
    raise RuneRuntimeError(f"`{what}` expects `(key, value)` tuples, found `{type_name(v)}`")


class _HashTable:
    """What ``HashMap`` and ``HashSet`` share: ``table`` keyed by hash keys, and a reserved capacity."""

    __slots__ = ("capacity_", "table")

    def __init__(self, capacity: int = 0) -> None:
        self.table: dict[Any, Any] = {}
        self.capacity_ = capacity

    def len(self) -> int:
        return len(self.table)

    def is_empty(self) -> bool:
        return not self.table

    def capacity(self) -> int:
        return max(self.capacity_, len(self.table))


class HashMap(_HashTable):
    """``std::collections::HashMap``: ``table`` maps hash keys to values, ``originals`` hash keys
    to the keys as inserted (only for keys that are not their own hash key)."""

    __slots__ = ("originals",)

    def __init__(self, capacity: int = 0) -> None:
        super().__init__(capacity)
        self.originals: dict[Any, Any] = {}

    # --- the methods upstream registers; the generated code calls the hot ones directly ---

    def get(self, key: Any) -> Option:
        t = type(key)
        v = self.table.get(key if t is str or t is int else hash_key(key), _MISSING)
        return NONE if v is _MISSING else Option(True, v)

    def insert(self, key: Any, value: Any) -> Option:
        t = type(key)
        k = key if t is str or t is int else hash_key(key)
        table = self.table
        old = table.get(k, _MISSING)
        if old is _MISSING:
            if len(table) % ITEM_BLOCK == 0 and table:
                grow(table, value, "map")
            if k is not key:
                self.originals[k] = key
            table[k] = value
            return NONE
        table[k] = value  # the key first inserted stays, as upstream
        return Option(True, old)

    def contains_key(self, key: Any) -> bool:
        t = type(key)
        return (key if t is str or t is int else hash_key(key)) in self.table

    def remove(self, key: Any) -> Option:
        t = type(key)
        k = key if t is str or t is int else hash_key(key)
        v = self.table.pop(k, _MISSING)
        if v is _MISSING:
            return NONE
        if k is not key:
            self.originals.pop(k, None)
        return Option(True, v)

    def clear(self) -> None:
        self.table.clear()
        self.originals.clear()

    def items(self) -> Iterator[tuple[Any, Any]]:
        """(key, value) pairs, the keys as inserted."""
        if not self.originals:
            return _guarded(iter(self.table.items()), "map")
        originals = self.originals
        return _guarded(((originals.get(k, k), v) for k, v in self.table.items()), "map")

    def keys_(self) -> Iterator[Any]:
        if not self.originals:
            return _guarded(iter(self.table), "map")
        originals = self.originals
        return _guarded((originals.get(k, k) for k in self.table), "map")

    def iter(self) -> RuneIterator:
        source = iter(self.table.items())  # what is left of it is the iterator's exact size hint
        originals = self.originals
        pairs = ((originals.get(k, k), v) for k, v in source) if originals else source
        return RuneIterator(sized(_guarded(pairs, "map"), source, False))

    def keys(self) -> RuneIterator:
        source = iter(self.table)
        originals = self.originals
        keys = (originals.get(k, k) for k in source) if originals else source
        return RuneIterator(sized(_guarded(keys, "map"), source, False))

    def values(self) -> RuneIterator:
        source = iter(self.table.values())
        return RuneIterator(sized(_guarded(source, "map"), source, False))

    def extend(self, pairs: Any) -> None:
        self.fill(iterate(pairs), "HashMap::extend")

    def fill(self, pairs: Iterator[Any], what: str) -> None:
        insert = self.insert
        for item in pairs:
            k, v = _pair(item, what)
            insert(k, v)

    def clone(self) -> HashMap:
        out = HashMap(self.capacity_)
        account_copy(len(self.table), "map")
        out.table = dict(self.table)
        out.originals = dict(self.originals)
        return out

    def to_python(self, convert: Callable[[Any], Any]) -> dict[Any, Any]:
        """A dict (a JSON object): only string and integer keys can be its keys."""
        out = {}
        for k, v in self.items():
            if type(k) is not str and type(k) is not int:
                raise RuneRuntimeError(
                    f"a `HashMap` with a `{type_name(k)}` key ({_debug(k)}) cannot cross to Python: "
                    "only String and integer keys make an object; return a Vec of pairs instead"
                )
            out[k] = convert(v)
        return out

    def index_get(self, key: Any) -> Any:
        v = self.table.get(hash_key(key), _MISSING)
        if v is _MISSING:
            raise RuneRuntimeError(
                f"Type `HashMap` missing index: no key {_debug(key)}; test with `contains_key` or use `get`"
            )
        return v

    def index_set(self, key: Any, value: Any) -> None:
        self.insert(key, value)

    def __rune_iter__(self) -> Iterator[tuple[Any, Any]]:
        return self.items()

    def equals(self, other: Any) -> bool:
        if type(other) is not HashMap:
            raise _incomparable(self, other)
        if len(self.table) != len(other.table):
            return False
        theirs = other.table
        for k, v in self.table.items():
            w = theirs.get(k, _MISSING)
            if w is _MISSING or not eq(v, w):
                return False
        return True

    def debug_into(
        self, add: Callable[[str], None], item: Callable[[Any, Callable[[str], None]], None]
    ) -> None:
        add("{")
        for i, (k, v) in enumerate(self.items()):
            add(", " if i else "")
            item(k, add)
            add(": ")
            item(v, add)
        add("}")

    @staticmethod
    def from_iter(values: Any) -> HashMap:
        m = HashMap()
        m.fill(iterate(values), "HashMap::from_iter")
        return m

    @staticmethod
    def collected(values: Iterator[Any]) -> HashMap:
        m = HashMap()
        m.fill(values, "collect::<HashMap>")
        return m


class HashSet(_HashTable):
    """``std::collections::HashSet``: ``table`` maps hash keys to the values as inserted."""

    __slots__ = ()

    def insert(self, value: Any) -> bool:
        t = type(value)
        k = value if t is str or t is int else hash_key(value)
        table = self.table
        if k in table:
            return False
        if len(table) % ITEM_BLOCK == 0 and table:
            grow(table, value, "set")
        table[k] = value
        return True

    def contains(self, value: Any) -> bool:
        t = type(value)
        return (value if t is str or t is int else hash_key(value)) in self.table

    def remove(self, value: Any) -> bool:
        t = type(value)
        return self.table.pop(value if t is str or t is int else hash_key(value), _MISSING) is not _MISSING

    def clear(self) -> None:
        self.table.clear()

    def values_(self) -> Iterator[Any]:
        return _guarded(iter(self.table.values()), "set")

    def iter(self) -> RuneIterator:
        source = iter(self.table.values())
        return RuneIterator(sized(_guarded(source, "set"), source, True))

    def extend(self, values: Any) -> None:
        self.fill(iterate(values))

    def fill(self, values: Iterator[Any]) -> None:
        insert = self.insert
        for v in values:
            insert(v)

    def clone(self) -> HashSet:
        out = HashSet(self.capacity_)
        account_copy(len(self.table), "set")
        out.table = dict(self.table)
        return out

    def to_python(self, convert: Callable[[Any], Any]) -> list[Any]:
        return [convert(v) for v in self.table.values()]

    def difference(self, other: Any) -> RuneIterator:
        theirs = _set_arg(other, "difference").table
        return RuneIterator(v for k, v in _guarded(iter(self.table.items()), "set") if k not in theirs)

    def intersection(self, other: Any) -> RuneIterator:
        other = _set_arg(other, "intersection")
        # the smaller set drives, as upstream
        small, big = (self, other) if len(self.table) <= len(other.table) else (other, self)
        theirs = big.table
        return RuneIterator(v for k, v in _guarded(iter(small.table.items()), "set") if k in theirs)

    def union(self, other: Any) -> RuneIterator:
        other = _set_arg(other, "union")
        # the larger set leads, then what the other adds, as upstream
        lead, rest = (self, other) if len(self.table) >= len(other.table) else (other, self)
        return RuneIterator(_union(lead.table, rest.table))

    def __rune_iter__(self) -> Iterator[Any]:
        return self.values_()

    def equals(self, other: Any) -> bool:
        if type(other) is not HashSet:
            raise _incomparable(self, other)
        return len(self.table) == len(other.table) and all(k in other.table for k in self.table)

    def debug_into(
        self, add: Callable[[str], None], item: Callable[[Any, Callable[[str], None]], None]
    ) -> None:
        add("{")
        for i, v in enumerate(self.values_()):
            add(", " if i else "")
            item(v, add)
        add("}")

    @staticmethod
    def from_iter(values: Any) -> HashSet:
        s = HashSet()
        s.fill(iterate(values))
        return s

    @staticmethod
    def collected(values: Iterator[Any]) -> HashSet:
        s = HashSet()
        s.fill(values)
        return s


def _union(lead: dict[Any, Any], rest: dict[Any, Any]) -> Iterator[Any]:
    yield from _guarded(iter(lead.values()), "set")
    for k, v in _guarded(iter(rest.items()), "set"):
        if k not in lead:
            yield v


def _set_arg(v: Any, what: str) -> HashSet:
    if type(v) is not HashSet:
        raise RuneRuntimeError(f"`HashSet::{what}` expects a `HashSet`, found `{type_name(v)}`")
    return v


def _incomparable(a: Any, b: Any) -> RuneRuntimeError:
    return RuneRuntimeError(f"cannot compare `{type_name(a)}` with `{type_name(b)}` for equality")


def account_copy(n: int, what: str) -> None:
    """Account for a copy of ``n`` entries before it is made (cap and memory budget)."""
    check_length(n, what)
    allocate(n, f"{what} copy", 8 + OBJECT_KEY_BYTES)


def _with_capacity(cls: type, what: str) -> Callable[[Any], Any]:
    def new(n: Any) -> Any:
        check_length(_usize(n, what), what)
        return cls(n)

    return new


def _instance_methods(cls: type, names: tuple[str, ...]) -> dict[str, Callable[..., Any]]:
    """The method table of a collection: Rune method name to a function of the receiver."""
    table: dict[str, Callable[..., Any]] = {name: getattr(cls, name) for name in names}
    table["into_iter"] = table["iter"]
    return table


HASHMAP_METHODS = _instance_methods(
    HashMap,
    (
        "get", "insert", "contains_key", "remove", "len", "is_empty", "capacity", "clear",
        "iter", "keys", "values", "extend", "clone",
    ),
)  # fmt: skip
HASHSET_METHODS = _instance_methods(
    HashSet,
    (
        "insert", "contains", "remove", "len", "is_empty", "capacity", "clear", "iter",
        "extend", "clone", "difference", "intersection", "union",
    ),
)  # fmt: skip


class TypeNamespace(dict):
    """The associated functions of a collection type. Its instance methods are reachable by path
    too (``HashMap::len(m)``, receiver first); any other name is a missing item, never a
    function made up on the spot."""

    def __init__(self, name: str, functions: dict[str, Any], methods: dict[str, Any]) -> None:
        super().__init__(functions)
        self.type_name = name
        self.methods = methods

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self:
            return self[key]
        method = self.methods.get(key)
        if method is not None:
            return method
        raise RuneRuntimeError(
            f"missing item `{self.type_name}::{key}`: `{self.type_name}` has no associated function "
            f"or method `{key}`"
        )


HASHMAP_NS = TypeNamespace(
    "HashMap",
    {
        "new": HashMap,
        "with_capacity": _with_capacity(HashMap, "HashMap::with_capacity"),
        "from_iter": HashMap.from_iter,
    },
    HASHMAP_METHODS,
)
HASHSET_NS = TypeNamespace(
    "HashSet",
    {
        "new": HashSet,
        "with_capacity": _with_capacity(HashSet, "HashSet::with_capacity"),
        "from_iter": HashSet.from_iter,
    },
    HASHSET_METHODS,
)

CONSUMERS["collect::HashMap"] = HashMap.collected
CONSUMERS["collect::HashSet"] = HashSet.collected
