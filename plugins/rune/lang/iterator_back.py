"""The back end of iterator adaptors: ``rev``, ``next_back`` and ``nth_back`` through ``filter``,
``filter_map``, ``enumerate``, ``zip``, ``take``, ``skip``, ``chain``, ``flat_map`` and
``peekable`` without collecting, as upstream's ``DoubleEndedIterator`` adaptors do
(``crates/rune/src/modules/iter.rs``).

``iterator_ends.double_ended`` turns an iterator into a double-ended one when the back end is
first asked for; for an adaptor it asks ``back_of`` here, which rebuilds the adaptor over the
double-ended form of its source. Upstream's conditions hold: ``enumerate``, ``take`` and
``skip`` read the back only of a source whose exact length is known (``ExactSizeIterator``),
``zip`` of two such sources (Rust's rule; upstream has no ``zip`` at this version); a
generator, a map or set iterator and an endless range have no back end, and asking for it is
an error naming them instead of collecting what may never end. A ``VecDeque``'s iterator goes
on as a window over the deque's items (``DequeEnds``).

``filter_map``, ``take``, ``skip`` and ``flat_map`` are these classes from the start; the
others start as Python's own ``filter``, ``enumerate`` and ``zip`` (C code), whose state
``__reduce__`` exposes."""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Iterator
from typing import Any

from . import iterator_ends as ends
from .errors import RuneRuntimeError
from .limits import STATE
from .values import NONE, Option, some

__all__ = [
    "BACK_ADAPTORS",
    "FilterMapped",
    "FlatMapped",
    "ReadByGenerator",
    "Skipped",
    "Taken",
    "back_of",
    "drop_back",
    "exact_length",
    "hint_of",
]


def _source(it: Iterator[Any], what: str) -> Any:
    return ends.double_ended(it, what)


def exact_length(it: Any, what: str) -> int:
    """Items left in double-ended ``it``; an error naming ``it`` when only its items know it."""
    t = type(it)
    if t is ends.Ends or t is DequeEnds:
        return int(it.hi - it.lo)
    if t is ends.Mapped or t is ends.Backwards:
        return exact_length(it.inner, what)
    length = getattr(it, "length", None)
    if length is None:
        raise RuneRuntimeError(f"`{what}` needs to know how many items are left, and `{_rune_name(it)}` does not")
    return int(length(what))


def drop_back(it: Any, k: int) -> None:
    """Drop ``k`` items from the back of double-ended ``it`` (fewer if it has fewer): at once
    from a window, else one by one, each with a budget tick (nothing else may tick)."""
    t = type(it)
    if t is ends.Ends or t is DequeEnds:
        it.hi = max(it.lo, it.hi - max(k, 0))
    elif t is Enumerated:
        drop_back(it.inner, k)
    elif t is Skipped:  # the items after the skipped ones
        it.to_back("nth_back")
        drop_back(it.inner, min(k, max(exact_length(it.inner, "nth_back` of `skip") - it.n, 0)))
    elif t is Taken:  # the last of the taken items: fewer are taken
        it.to_back("nth_back")
        it.n = max(min(it.n, exact_length(it.inner, "nth_back` of `take")) - max(k, 0), 0)
    else:
        for _ in zip(range(k), STATE.run):
            it.next_back()


def _rune_name(it: Any) -> str:
    return getattr(it, "RUNE_NAME", "Iterator")


class Filtered:
    """``filter(f)`` read from both ends; ``keep`` returns a bool (checked already)."""

    __slots__ = ("inner", "keep")
    RUNE_NAME = "Filter"

    def __init__(self, inner: Any, keep: Callable[[Any], bool]) -> None:
        self.inner, self.keep = inner, keep

    def __iter__(self) -> Filtered:
        return self

    def __next__(self) -> Any:
        keep = self.keep
        for v in self.inner:
            if keep(v):
                return v
        raise StopIteration

    def next_back(self) -> Any:
        while True:
            v = self.inner.next_back()
            if self.keep(v):
                return v

    def size_hint(self) -> tuple[int, int | None]:
        return 0, _hint(self.inner)[1]

    def copy(self) -> Filtered:
        return Filtered(self.inner.copy(), self.keep)


def _wants_option(v: Any) -> Option:
    if type(v) is not Option:
        raise RuneRuntimeError(f"the function of `filter_map` must return an `Option`, not `{type(v).__name__}`")
    return v


class ReadByGenerator:
    """An adaptor whose front is read by a generator (``front_items``) until its back is first
    needed: C consumers (``sum``, ``collect``, ``for``) resume that generator instead of calling
    ``__next__``. The generator keeps its state in the adaptor (``inner``, counts), so the
    adaptor goes on from where it stopped once ``to_back`` drops it."""

    __slots__ = ("gen", "inner")

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.gen: Iterator[Any] | None = self.front_items()

    def front_items(self) -> Iterator[Any]:
        raise NotImplementedError

    def step(self) -> Any:
        """The next item from the front, without the generator."""
        raise NotImplementedError

    def __iter__(self) -> Any:
        return self.gen if self.gen is not None else self

    def __next__(self) -> Any:
        return next(self.gen) if self.gen is not None else self.step()

    def to_back(self, what: str) -> None:
        self.gen = None
        self.inner = _source(self.inner, what)


class FilterMapped(ReadByGenerator):
    """``filter_map(f)``: the values of the ``Some`` results of ``f``."""

    __slots__ = ("f",)
    RUNE_NAME = "FilterMap"

    def __init__(self, inner: Any, f: Callable[[Any], Any]) -> None:
        self.f = f
        super().__init__(inner)

    def front_items(self) -> Iterator[Any]:
        f = self.f
        for v in self.inner:
            o = f(v)
            if type(o) is not Option:
                _wants_option(o)
            if o.is_some:
                yield o.value

    def step(self) -> Any:
        f = self.f
        for v in self.inner:
            o = _wants_option(f(v))
            if o.is_some:
                return o.value
        raise StopIteration

    def next_back(self) -> Any:
        self.to_back("next_back")
        while True:
            o = _wants_option(self.f(self.inner.next_back()))
            if o.is_some:
                return o.value

    def size_hint(self) -> tuple[int, int | None]:
        return 0, _hint(self.inner)[1]

    def copy(self) -> FilterMapped:
        self.to_back("clone")
        return FilterMapped(self.inner.copy(), self.f)


class Enumerated:
    """``enumerate()`` read from both ends: an item from the back is numbered by the length left."""

    __slots__ = ("count", "inner")
    RUNE_NAME = "Enumerate"

    def __init__(self, inner: Any, count: int) -> None:
        self.inner, self.count = inner, count

    def __iter__(self) -> Enumerated:
        return self

    def __next__(self) -> tuple[int, Any]:
        v = next(self.inner)
        i = self.count
        self.count = i + 1
        return i, v

    def next_back(self) -> tuple[int, Any]:
        left = exact_length(self.inner, "next_back` of `enumerate")
        v = self.inner.next_back()
        return self.count + left - 1, v

    def length(self, what: str) -> int:
        return exact_length(self.inner, what)

    def size_hint(self) -> tuple[int, int | None]:
        return _hint(self.inner)

    def copy(self) -> Enumerated:
        return Enumerated(self.inner.copy(), self.count)


class Zipped:
    """``zip(other)`` read from both ends: the longer side first loses its extra items from the
    back, so pairs match as they do from the front (Rust's ``Zip``)."""

    __slots__ = ("a", "b")
    RUNE_NAME = "Zip"

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def __iter__(self) -> Zipped:
        return self

    def __next__(self) -> tuple[Any, Any]:
        return next(self.a), next(self.b)

    def next_back(self) -> tuple[Any, Any]:
        what = "next_back` of `zip"
        la, lb = exact_length(self.a, what), exact_length(self.b, what)
        drop_back(self.a, la - lb)
        drop_back(self.b, lb - la)
        return self.a.next_back(), self.b.next_back()

    def length(self, what: str) -> int:
        return min(exact_length(self.a, what), exact_length(self.b, what))

    def size_hint(self) -> tuple[int, int | None]:
        (la, ha), (lb, hb) = _hint(self.a), _hint(self.b)
        return min(la, lb), (min(ha, hb) if ha is not None and hb is not None else ha if hb is None else hb)

    def copy(self) -> Zipped:
        return Zipped(self.a.copy(), self.b.copy())


def _count(n: Any, what: str) -> int:
    if type(n) is not int or n < 0:
        raise RuneRuntimeError(f"`{what}` expects a count of items (an integer >= 0), found `{n!r}`")
    return n


class Taken(ReadByGenerator):
    """``take(n)``: at most ``n`` items; from the back, the ``n``-th from the front first."""

    __slots__ = ("n",)
    RUNE_NAME = "Take"

    def __init__(self, inner: Any, n: int) -> None:
        self.n = _count(n, "take")
        super().__init__(inner)

    def front_items(self) -> Iterator[Any]:
        if self.n <= 0:
            return
        for v in self.inner:
            self.n -= 1
            yield v
            if self.n <= 0:
                return

    def step(self) -> Any:
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return next(self.inner)

    def next_back(self) -> Any:
        if self.n <= 0:
            raise StopIteration
        self.to_back("next_back")
        left = exact_length(self.inner, "next_back` of `take")
        drop_back(self.inner, left - self.n)  # the items past the n-th are never reached
        self.n -= 1
        return self.inner.next_back()

    def length(self, what: str) -> int:
        self.to_back(what)
        return min(self.n, exact_length(self.inner, what))

    def size_hint(self) -> tuple[int, int | None]:
        lo, hi = _hint(self.inner)
        return min(lo, self.n), self.n if hi is None else min(hi, self.n)

    def copy(self) -> Taken:
        self.to_back("clone")
        return Taken(self.inner.copy(), self.n)


class Skipped(ReadByGenerator):
    """``skip(n)``: the first ``n`` items are dropped when the front is first read (a budget
    tick each); from the back, items are read while more than ``n`` are left."""

    __slots__ = ("n",)
    RUNE_NAME = "Skip"

    def __init__(self, inner: Any, n: int) -> None:
        self.n = _count(n, "skip")
        super().__init__(inner)

    def skip(self) -> None:
        n, self.n = self.n, 0
        for _ in zip(itertools.islice(self.inner, n), STATE.run):
            pass

    def front_items(self) -> Iterator[Any]:
        if self.n:
            self.skip()
        yield from self.inner

    def step(self) -> Any:
        if self.n:
            self.skip()
        return next(self.inner)

    def next_back(self) -> Any:
        self.to_back("next_back")
        if exact_length(self.inner, "next_back` of `skip") <= self.n:
            raise StopIteration
        return self.inner.next_back()

    def length(self, what: str) -> int:
        self.to_back(what)
        return max(exact_length(self.inner, what) - self.n, 0)

    def size_hint(self) -> tuple[int, int | None]:
        lo, hi = _hint(self.inner)
        return max(lo - self.n, 0), None if hi is None else max(hi - self.n, 0)

    def copy(self) -> Skipped:
        self.to_back("clone")
        return Skipped(self.inner.copy(), self.n)


class FlatMapped(ReadByGenerator):
    """``flat_map(f)`` / ``flatten()``: the items of each iterable ``f`` returns, from either
    end (an iterable read from the back must be double-ended itself)."""

    __slots__ = ("back", "f", "front")
    RUNE_NAME = "FlatMap"

    def __init__(self, inner: Any, f: Callable[[Any], Any] | None) -> None:
        self.f = f
        self.front: Any = None
        self.back: Any = None
        super().__init__(inner)

    def _items(self, v: Any) -> Any:
        from .runtime import iterate

        return iterate(v if self.f is None else self.f(v))

    def front_items(self) -> Iterator[Any]:
        from .runtime import iterate

        f = self.f
        for v in self.inner:
            self.front = front = iterate(v if f is None else f(v))
            yield from front
        self.front = None

    def step(self) -> Any:
        while True:
            if self.front is not None:
                for v in self.front:
                    return v
                self.front = None
            for v in self.inner:
                self.front = self._items(v)
                break
            else:
                if self.back is not None:
                    for v in self.back:
                        return v
                    self.back = None
                raise StopIteration

    def next_back(self) -> Any:
        self.to_back("next_back")
        while True:
            if self.back is not None:
                try:
                    return self.back.next_back()
                except StopIteration:
                    self.back = None
            try:
                self.back = _source(self._items(self.inner.next_back()), "next_back")
            except StopIteration:
                if self.front is None:
                    raise
                self.front = _source(self.front, "next_back")
                return self.front.next_back()

    def size_hint(self) -> tuple[int, int | None]:
        return 0, None

    def copy(self) -> FlatMapped:
        self.to_back("clone")
        out = FlatMapped(self.inner.copy(), self.f)
        out.gen = None
        if self.front is not None:
            self.front = _source(self.front, "clone")
            out.front = self.front.copy()
        if self.back is not None:
            out.back = self.back.copy()  # read from the back already: double-ended
        return out


class ChainedEnds(ends.Chained):
    """``chain(other)`` read from both ends: the back of ``second`` first."""

    __slots__ = ()
    RUNE_NAME = "Chain"
    first: Any
    second: Any

    def next_back(self) -> Any:
        try:
            return self.second.next_back()
        except StopIteration:
            if self.first is None:
                raise
            return self.first.next_back()

    def length(self, what: str) -> int:
        return (0 if self.first is None else exact_length(self.first, what)) + exact_length(self.second, what)

    def size_hint(self) -> tuple[int, int | None]:
        lo1, hi1 = (0, 0) if self.first is None else _hint(self.first)
        lo2, hi2 = _hint(self.second)
        return lo1 + lo2, None if hi1 is None or hi2 is None else hi1 + hi2

    def copy(self) -> ChainedEnds:
        return ChainedEnds(None if self.first is None else self.first.copy(), self.second.copy())


class Peeked:
    """A ``peekable`` whose peeked item is kept at the front while the back is read."""

    __slots__ = ("inner", "item")
    RUNE_NAME = "Peekable"

    def __init__(self, inner: Any, item: list[Any]) -> None:
        self.inner, self.item = inner, item

    def __iter__(self) -> Peeked:
        return self

    def __next__(self) -> Any:
        if self.item:
            return self.item.pop()
        return next(self.inner)

    def next_back(self) -> Any:
        try:
            return self.inner.next_back()
        except StopIteration:
            if not self.item:
                raise
            return self.item.pop()

    def length(self, what: str) -> int:
        return len(self.item) + exact_length(self.inner, what)

    def size_hint(self) -> tuple[int, int | None]:
        lo, hi = _hint(self.inner)
        return lo + len(self.item), None if hi is None else hi + len(self.item)

    def copy(self) -> Peeked:
        return Peeked(self.inner.copy(), list(self.item))


BACK_ADAPTORS = (Filtered, FilterMapped, Enumerated, Zipped, Taken, Skipped, FlatMapped, ChainedEnds, Peeked)


def _hint(it: Any) -> tuple[int, int | None]:
    lower, upper = ends.size_hint(it)
    return lower, upper.value if upper.is_some else None


_FRONT_CODES = frozenset(cls.front_items.__code__ for cls in (FilterMapped, Taken, Skipped, FlatMapped))


def _owner(it: Any) -> Any:
    """The adaptor whose front generator ``it`` is (Python's ``map``, ``zip``... over an adaptor
    here hold that generator), an empty window for a finished one, else ``it``."""
    if getattr(it, "gi_code", None) not in _FRONT_CODES:
        return it
    frame = it.gi_frame
    return ends.Ends((), 0, 0) if frame is None else frame.f_locals["self"]


def hint_of(it: Any) -> tuple[int, Option]:
    """``size_hint`` of ``enumerate``, ``zip`` and the adaptors here; ``(0, None)`` otherwise."""
    it = _owner(it)
    t = type(it)
    if t is enumerate:
        lower, upper = _hint(it.__reduce__()[1][0])
    elif t is zip and len(it.__reduce__()[1]) == 2:
        lower, upper = Zipped(*it.__reduce__()[1]).size_hint()
    elif isinstance(it, BACK_ADAPTORS):
        lower, upper = it.size_hint()
    elif t is ends.Ends or t is DequeEnds:
        lower = upper = it.hi - it.lo
    else:
        return 0, NONE
    return lower, NONE if upper is None else some(upper)


def back_of(it: Any, what: str) -> Any:
    """``it`` rebuilt over double-ended sources when it is an adaptor that has a back end, None
    when nothing is known about it; an error naming it when upstream gives it no back end."""
    it = _owner(it)
    t = type(it)
    if t is filter:
        keep, inner = it.__reduce__()[1]
        return Filtered(_source(inner, what), keep)
    if t is enumerate:
        inner, count = it.__reduce__()[1]
        return Enumerated(_source(inner, what), count)
    if t is zip:
        state = it.__reduce__()
        if len(state[1]) == 2:
            return Zipped(_source(state[1][0], what), _source(state[1][1], what))
    if t is Taken or t is Skipped or t is FilterMapped or t is FlatMapped:
        it.to_back(what)
        return it
    if isinstance(it, BACK_ADAPTORS) or t is ends.Ends or t is DequeEnds:
        return it  # built over double-ended sources already
    deque = _deque_window(it)
    if deque is not None:
        return deque
    if t is ends.Chained:
        first = None if it.first is None else _source(it.first, what)
        return ChainedEnds(first, _source(it.second, what))
    if t is ends.Peekable and it.buf:
        return Peeked(_source(it.it, what), list(it.buf))
    refused = None if what == "clone" else _refused(it)  # a clone may collect what is left
    if refused is not None:
        raise RuneRuntimeError(
            f"`{what}` needs a double-ended iterator, and {refused} is not one"
            f" (upstream's `DoubleEndedIterator`); collect it into a vector first"
        )
    return None


_DEQUE_ITERATOR: type = type(iter(collections.deque[Any]()))


class DequeEnds(ends.Ends):
    """The rest of a ``VecDeque``'s iterator as a window over its items; like the iterator, it
    fails once the deque changes size (upstream's iterator holds a borrow)."""

    __slots__ = ("size",)

    def __init__(self, items: Any, lo: int, hi: int) -> None:
        super().__init__(items, lo, hi)
        self.size = len(items)

    def _unchanged(self) -> None:
        if len(self.items) != self.size:
            raise RuneRuntimeError(
                "the VecDeque was modified while being iterated over; collect what to change first"
            )

    def __next__(self) -> Any:
        self._unchanged()
        return super().__next__()

    def next_back(self) -> Any:
        self._unchanged()
        return super().next_back()

    def copy(self) -> DequeEnds:
        out = DequeEnds(self.items, self.lo, self.hi)
        out.size = self.size
        return out


def _deque_window(it: Any) -> DequeEnds | None:
    """A window over what is left of a ``VecDeque``'s iterator (``std_vec_deque``: a guarded
    Python deque iterator), None for any other iterator."""
    code = getattr(it, "gi_code", None)
    frame = it.gi_frame if code is not None and code.co_name == "_guarded" else None
    if frame is None or frame.f_locals.get("what") != "VecDeque":
        return None
    source = frame.f_locals.get("items")
    if type(source) is not _DEQUE_ITERATOR:
        return None
    state: Any = source.__reduce__()
    deque, position = state[1]  # (deque, index of the next item)
    window = DequeEnds(deque, position, len(deque))
    it.close()  # the window reads on from here: the generator must not
    return window


def _refused(it: Any) -> str | None:
    """How to name an iterator upstream gives no back end, or None."""
    t = type(it)
    if t is itertools.count or t is itertools.chain:
        return "an endless range (`0..`)"
    code = getattr(it, "gi_code", None)
    if code is None:
        return None
    if code.co_filename.startswith("<rune"):
        return "a generator (`Generator`)"
    frame = it.gi_frame
    what = frame.f_locals.get("what") if frame is not None and code.co_name == "_guarded" else None
    if what in ("map", "set"):
        return f"the iterator of a `Hash{what.capitalize()}`"
    return None
