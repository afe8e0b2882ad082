"""Iterators read from both ends (``next_back``, ``rev``, ``nth_back``) and ``peekable``.

Most iterators start as plain Python iterators (C-level, fast). The first call that needs the
back end turns one into an ``Ends``: a list or range iterator becomes a window over its sequence
(recovered from the iterator's pickle state, so nothing is copied), a ``map`` over one becomes a
mapped window, the other adaptors are rebuilt over their sources' back ends (``iterator_back``),
and any other finite iterator is collected. An endless one (``0..``), a generator and a map's or
set's iterator are refused, as upstream gives them no back end."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator
from typing import Any

from .errors import RuneRuntimeError
from .limits import allocate, check_length, new_item_bytes
from .std_u64 import U64_MAX
from .values import NONE, Option, some

_SEQUENCE_ITERATORS: frozenset[type] = frozenset(type(iter(x)) for x in ([0], (), range(0), "", "é"))


def _state(it: Iterator[Any]) -> Any:
    """The pickle state of a C iterator: ``(rebuild, arguments[, position])``."""
    return it.__reduce__()


class Ends:
    """A window ``lo..hi`` over a sequence, consumed from either end."""

    __slots__ = ("hi", "items", "lo")

    def __init__(self, items: Any, lo: int, hi: int) -> None:
        self.items, self.lo, self.hi = items, lo, hi

    def __iter__(self) -> Ends:
        return self

    def __next__(self) -> Any:
        if self.lo < self.hi:
            self.lo += 1
            return self.items[self.lo - 1]
        raise StopIteration

    def next_back(self) -> Any:
        if self.lo < self.hi:
            self.hi -= 1
            return self.items[self.hi]
        raise StopIteration

    def __length_hint__(self) -> int:
        return self.hi - self.lo

    def copy(self) -> Ends:
        return Ends(self.items, self.lo, self.hi)


class Mapped:
    """``map(f)`` over a double-ended iterator: double-ended itself."""

    __slots__ = ("f", "inner")

    def __init__(self, inner: Any, f: Any) -> None:
        self.inner, self.f = inner, f

    def __iter__(self) -> Mapped:
        return self

    def __next__(self) -> Any:
        return self.f(next(self.inner))

    def next_back(self) -> Any:
        return self.f(self.inner.next_back())

    def __length_hint__(self) -> int:
        return operator.length_hint(self.inner)

    def copy(self) -> Mapped:
        return Mapped(self.inner.copy(), self.f)


class Backwards:
    """``rev()``: the other end first."""

    __slots__ = ("inner",)

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __iter__(self) -> Backwards:
        return self

    def __next__(self) -> Any:
        return self.inner.next_back()

    def next_back(self) -> Any:
        return next(self.inner)

    def __length_hint__(self) -> int:
        return operator.length_hint(self.inner)

    def copy(self) -> Backwards:
        return Backwards(self.inner.copy())


_DOUBLE_ENDED = (Ends, Mapped, Backwards)


def double_ended(it: Iterator[Any], what: str) -> Any:
    """``it`` as an iterator with ``next_back``; ``what`` names the method for the error."""
    if isinstance(it, _DOUBLE_ENDED):
        return it
    t = type(it)
    if t in _SEQUENCE_ITERATORS:
        reduced = _state(it)
        sequence = reduced[1][0]
        lo = reduced[2] if len(reduced) > 2 else len(sequence)
        return Ends(sequence, lo, len(sequence))
    if t is map:
        reduced = _state(it)
        if len(reduced[1]) == 2:
            return Mapped(double_ended(reduced[1][1], what), reduced[1][0])
    if t is itertools.chain or t is itertools.count:
        raise RuneRuntimeError(f"`{what}` needs a double-ended iterator, and an endless one (`0..`) is not")
    if type(it) is Peekable and not it.buf:
        return double_ended(it.it, what)
    from .iterator_back import back_of

    backed = back_of(it, what)  # an adaptor over double-ended sources, or a refusal naming `it`
    if backed is not None:
        return backed
    items: list[Any] = []
    for chunk in iter(lambda: list(itertools.islice(it, 65_536)), []):
        check_length(len(items) + len(chunk), "iterator")
        allocate(len(chunk), "iterator", new_item_bytes(chunk[0]))
        items += chunk
    return Ends(items, 0, len(items))


class Peekable:
    """``peekable()``: ``peek`` looks at the next item without consuming it."""

    __slots__ = ("buf", "it")

    def __init__(self, it: Iterator[Any]) -> None:
        self.it = it
        self.buf: list[Any] = []

    def __iter__(self) -> Peekable:
        return self

    def __next__(self) -> Any:
        if self.buf:
            return self.buf.pop()
        return next(self.it)

    def peek(self) -> Option:
        if not self.buf:
            for v in self.it:
                self.buf.append(v)
                break
            else:
                return NONE
        return some(self.buf[0])

    def __length_hint__(self) -> int:
        return len(self.buf) + operator.length_hint(self.it)


class Chained:
    """``chain(other)``: one iterator, then the other; knows the bounds of both."""

    __slots__ = ("first", "second")

    def __init__(self, first: Iterator[Any] | None, second: Iterator[Any]) -> None:
        self.first = first
        self.second = second

    def __iter__(self) -> Chained:
        return self

    def __next__(self) -> Any:
        if self.first is not None:
            for v in self.first:
                return v
            self.first = None
        return next(self.second)


def size_hint(it: Iterator[Any]) -> tuple[int, Option]:
    """``(lower, Some(upper))`` as upstream's adaptors report them; ``(0, None)`` when unknown."""
    t = type(it)
    if t in _SEQUENCE_ITERATORS or isinstance(it, _DOUBLE_ENDED):
        n = operator.length_hint(it)
        return (n, some(n))
    if t is map and len(_state(it)[1]) == 2:
        return size_hint(_state(it)[1][1])
    if t is filter:  # any number of the source's items may pass
        return (0, size_hint(_state(it)[1][1])[1])
    if t is itertools.chain or t is itertools.count:  # `0..`: endless
        return (U64_MAX, NONE)
    if type(it) is Chained:
        lo1, hi1 = size_hint(it.first) if it.first is not None else (0, some(0))
        lo2, hi2 = size_hint(it.second)
        return (lo1 + lo2, some(hi1.value + hi2.value) if hi1.is_some and hi2.is_some else NONE)
    if type(it) is Peekable:
        lower, upper = size_hint(it.it)
        k = len(it.buf)
        return (lower + k, some(upper.value + k) if upper.is_some else NONE)
    from .iterator_back import hint_of

    return hint_of(it)


def next_back(it: Any) -> Option:
    try:
        return some(it.next_back())
    except StopIteration:
        return NONE


def nth_back(it: Any, n: int) -> Option:
    from .iterator_back import drop_back  # a window drops at once, anything else item by item

    try:
        drop_back(it, n)
    except StopIteration:
        return NONE
    return next_back(it)


def copy_iterator(it: Iterator[Any]) -> Any:
    """An independent iterator over what ``it`` has left (``it`` itself becomes a window too)."""
    ends = double_ended(it, "clone")
    return ends, ends.copy()
