"""Moves and access snapshots of heap values: ``drop``, ``is_readable``/``is_writable``,
``std::mem::snapshot``, ``move`` closures and the methods that take their receiver by value
(``String::into_bytes``, ``Bytes::into_vec``).

Upstream every heap value (strings, vectors, objects, options, structs, iterators ...) sits in a
reference-counted cell with access flags; moving a value out marks the cell, and every holder
then sees a value that cannot be read or written. Integers, floats, bools, chars and unit are
inline values: never moved, and ``snapshot`` of them is ``None``. Here a ``SharedString`` carries
its own flag; other heap values are recorded in the registry of the current run (it keeps them
alive, so their ids stay unique until the run ends). A shared borrow is what an iterator over a
vector holds while it lives: ``snapshot`` counts the live iterators reading the value.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import Any

from .errors import RuneRuntimeError
from .iterators import RuneIterator
from .limits import STATE
from .shared_string import SharedString
from .values import NONE, Bytes, Char, Instance, Option, Result, some

__all__ = ["Snapshot", "drop", "is_moved", "is_readable", "is_writable", "snapshot", "take"]

_INLINE = (int, float, bool, Char, type(None))


class _Registry(threading.local):
    def __init__(self) -> None:
        self.run: Any = None
        self.moved: dict[int, Any] = {}


_REGISTRY = _Registry()


def _moved_values() -> dict[int, Any]:
    """The moved values of the current run (a new run on this thread starts with none)."""
    registry = _REGISTRY
    if registry.run is not STATE.run:
        registry.run, registry.moved = STATE.run, {}
    return registry.moved


def _shared_singleton(v: Any) -> bool:
    """Values the runtime hands out to everyone (``None``, unit variants, tuples that Python
    folds into constants): marking one moved would move every use of it."""
    t = type(v)
    return v is NONE or t is tuple or (t is Instance and v.type.kind == "unit")


def is_moved(v: Any) -> bool:
    """Whether ``v`` was moved out (``drop``, ``into_bytes``, a ``move`` closure)."""
    if type(v) is SharedString:
        return v.moved
    registry = _REGISTRY
    return registry.run is STATE.run and registry.moved.get(id(v)) is v


def _mark_moved(v: Any) -> None:
    t = type(v)
    if t is SharedString:
        v.moved = True
        v.text, v.size, v.cap = "", 0, 0
    elif not (t in _INLINE or t is str or _shared_singleton(v)):
        _moved_values()[id(v)] = v
        if t is RuneIterator:
            v.it = iter(())  # its borrow of the collection ends with it


def check_readable(v: Any) -> Any:
    """``v``, or the access error upstream raises for a moved value."""
    if is_moved(v):
        from .runtime import type_name

        raise RuneRuntimeError(f"cannot access a moved `{type_name(v)}` value")
    return v


def drop(v: Any) -> None:
    """``std::mem::drop``: moves ``v`` out, so no holder can read it afterwards."""
    check_readable(v)
    _mark_moved(v)


def take(v: Any) -> Any:
    """Move ``v`` into a new holder (a ``move`` closure): the new holder gets the content in a
    fresh value, every old holder sees a moved one."""
    t = type(v)
    if t in _INLINE or t is str or _shared_singleton(v) or is_moved(v):
        return v
    if t is SharedString:
        fresh: Any = SharedString(v.text, v.cap)
    elif t is list or t is dict or t is Bytes:
        fresh = t(v)
    elif t is Option:
        fresh = Option(v.is_some, v.value)
    elif t is Result:
        fresh = Result(v.is_ok, v.value)
    elif t is Instance:
        fresh = Instance(v.type, list(v.values))
    else:
        return v  # functions, iterators, generators: the closure shares them
    _mark_moved(v)
    return fresh


def moving(method: Callable[..., Any]) -> Callable[..., Any]:
    """A method that takes its receiver by value: the receiver is moved after the call."""

    def call(v: Any, *args: Any) -> Any:
        result = method(check_readable(v), *args)
        _mark_moved(v)
        return result

    return call


def is_readable(v: Any) -> bool:
    """``std::is_readable``: false once ``v`` was moved."""
    return not is_moved(v)


def is_writable(v: Any) -> bool:
    """``std::is_writable``: false once ``v`` was moved (borrows here are never exclusive)."""
    return not is_moved(v)


_BORROWING = frozenset({"list_iterator", "list_reverseiterator", "tuple_iterator", "bytearray_iterator"})


def _shared_borrows(v: Any) -> int:
    """The live iterators reading ``v`` (an iterator over a collection borrows it)."""
    count = 0
    for inner in gc.get_referrers(v):
        if type(inner).__name__ in _BORROWING:
            count += sum(
                1 for it in gc.get_referrers(inner) if type(it) is RuneIterator and it.it is inner
            )
    return count


class Snapshot:
    """``std::mem::Snapshot``: the access state of a value when it was taken."""

    __slots__ = ("moved", "shared_count")

    def __init__(self, moved: bool, shared: int) -> None:
        self.moved = moved
        self.shared_count = shared

    def rune_display(self) -> str:
        return self.flags()

    def flags(self) -> str:
        """Upstream's display: ``M`` moved, ``X`` exclusive, then the shared count."""
        mark = "MX" if self.moved else "--"
        return f"{mark}{self.shared_count:06}"

    def debug_into(self, add: Callable[[str], None], inner: Callable[..., Any]) -> None:
        add(f"Snapshot({self.flags()})")


def snapshot(v: Any) -> Option:
    """``std::mem::snapshot``: ``None`` for inline values (numbers, bools, chars, unit)."""
    if type(v) in _INLINE:
        return NONE
    if is_moved(v):
        return some(Snapshot(True, 0))
    return some(Snapshot(False, _shared_borrows(v)))


SNAPSHOT_METHODS: dict[str, Callable[..., Any]] = {
    "shared": lambda s: s.shared_count,
    "is_exclusive": lambda s: s.moved,
    "is_readable": lambda s: not s.moved,
    "is_writable": lambda s: not s.moved,
    "to_string": Snapshot.flags,
}
