"""The Rune ``Iterator`` value: a lazy Python iterator with Rune's adaptor methods."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from collections.abc import Iterator as PyIterator
from typing import Any

from .errors import RuneRuntimeError
from .iterator_back import FilterMapped, FlatMapped, ReadByGenerator, Skipped, Taken
from .iterator_ends import (
    Backwards,
    Chained,
    Peekable,
    copy_iterator,
    double_ended,
    next_back,
    nth_back,
)
from .iterator_len import exact_len, iterator_size_hint
from .iterator_typed import typed_consumers
from .limits import STATE, allocate, check_length, new_item_bytes
from .runtime import I64_MAX, I64_MIN, cmp, op_add, op_mul
from .std_u64 import unsigned_hint
from .values import NONE, Function, Option, some


class RuneIterator:
    __slots__ = ("it",)

    def __init__(self, it: PyIterator[Any]) -> None:
        self.it = it

    def __rune_iter__(self) -> PyIterator[Any]:
        return self.it


def _call(f: Any, *args: Any) -> Any:
    return f(*args)


def _truth(v: Any) -> bool:
    if type(v) is not bool:
        raise RuneRuntimeError("predicate must return a bool")
    return v


_INT_ONLY = frozenset({int})


_COLLECT_CHUNK = 65_536
_SUM_CHUNK = 4096  # values summed at a time: the iterator may be long


def _sum(values_of: Iterable[Any]) -> Any:
    it = iter(values_of)
    result: Any = None
    for values in iter(lambda: list(itertools.islice(it, _SUM_CHUNK)), []):
        if set(map(type, values)) <= _INT_ONLY and type(result) in (int, type(None)):
            total = sum(values, result or 0)
            # Partial sums of same-signed values are monotonic: no intermediate overflow.
            if I64_MIN <= total <= I64_MAX and (min(values) >= 0 or max(values) <= 0):
                result = total
                continue
        for v in values:
            result = v if result is None else op_add(result, v)
    return 0 if result is None else result


def _product(it: PyIterator[Any]) -> Any:
    total: Any = None
    for v in it:
        total = v if total is None else op_mul(total, v)
    return 1 if total is None else total


def _extreme(it: PyIterator[Any], sign: int) -> Option:
    best: Any = None
    found = False
    for v in it:
        if not found or cmp(v, best) * sign > 0:
            best, found = v, True
    return some(best) if found else NONE


def _nth(it: PyIterator[Any], k: int) -> Option:
    for v in itertools.islice(it, k, k + 1):
        return some(v)
    return NONE


def _find(it: PyIterator[Any], f: Any) -> Option:
    for v in it:
        if _truth(f(v)):
            return some(v)
    return NONE


def _position(it: PyIterator[Any], f: Any) -> Option:
    for i, v in enumerate(it):
        if _truth(f(v)):
            return some(i)
    return NONE


def _fold(it: PyIterator[Any], init: Any, f: Any) -> Any:
    acc = init
    for v in it:
        acc = f(acc, v)
    return acc


def _last(it: PyIterator[Any]) -> Option:
    out = NONE
    for v in it:
        out = some(v)
    return out


def _filter(it: PyIterator[Any], f: Any) -> PyIterator[Any]:
    def keep(v: Any) -> bool:
        k = f(v)
        if k is True or k is False:
            return k
        raise RuneRuntimeError("predicate must return a bool")

    return filter(keep, it)  # Python's filter: `iterator_back` reads its source from the back


def _chain(it: PyIterator[Any], other: Any) -> PyIterator[Any]:
    from .runtime import iterate

    return Chained(it, iterate(other))


def _zip(it: PyIterator[Any], other: Any) -> PyIterator[Any]:
    from .runtime import iterate

    return zip(it, iterate(other))


def _step_by(it: PyIterator[Any], n: int) -> PyIterator[Any]:
    return itertools.islice(it, 0, None, n)


def _reduce(it: PyIterator[Any], f: Any) -> Option:
    for acc in it:
        for v in it:
            acc = f(acc, v)
        return some(acc)
    return NONE


def _next_back(self: RuneIterator) -> Option:
    self.it = double_ended(self.it, "next_back")
    return next_back(self.it)


def _nth_back(self: RuneIterator, n: int) -> Option:
    self.it = double_ended(self.it, "nth_back")
    return nth_back(self.it, n)


def _peek(self: RuneIterator) -> Option:
    if type(self.it) is not Peekable:
        self.it = Peekable(self.it)
    return self.it.peek()


def _clone(self: RuneIterator) -> RuneIterator:
    self.it, other = copy_iterator(self.it)
    return RuneIterator(other)


# Methods that change which Python iterator the Rune iterator wraps.
_IN_PLACE: dict[str, Callable[..., Any]] = {
    "next_back": _next_back,
    "nth_back": _nth_back,
    "peek": _peek,
    "clone": _clone,
    "size_hint": lambda self: unsigned_hint(iterator_size_hint(self.it)),
    "len": lambda self: exact_len(self.it),
}


def _next(self: RuneIterator) -> Option:
    for v in self.it:
        return some(v)
    return NONE


def _collect(values_of: Iterable[Any]) -> list:
    it = iter(values_of)
    values: list[Any] = []
    for chunk in iter(lambda: list(itertools.islice(it, _COLLECT_CHUNK)), []):
        # the length is not known in advance: the vector is checked as it grows, a chunk at a time
        check_length(len(values) + len(chunk), "collected vector")
        allocate(len(chunk), "collected vector", new_item_bytes(chunk[0]))
        values += chunk
    return values


# Adaptors return new iterators; consumers return values.
ADAPTORS: dict[str, Callable[..., Any]] = {
    "map": lambda it, f: map(f, it),
    "filter": _filter,
    "filter_map": FilterMapped,
    "enumerate": lambda it: enumerate(it),
    "zip": _zip,
    "take": Taken,
    "skip": Skipped,
    "take_while": lambda it, f: itertools.takewhile(lambda v: _truth(f(v)), it),
    "skip_while": lambda it, f: itertools.dropwhile(lambda v: _truth(f(v)), it),
    "rev": lambda it: Backwards(double_ended(it, "rev")),
    "chain": _chain,
    "flat_map": FlatMapped,
    "flatten": lambda it: FlatMapped(it, None),
    "step_by": _step_by,
    "peekable": Peekable,
    "iter": lambda it: it,
    "into_iter": lambda it: it,
    "cloned": lambda it: it,
    "copied": lambda it: it,
    "inspect": lambda it, f: ((f(v), v)[1] for v in it),
}

CONSUMERS: dict[str, Callable[..., Any]] = {
    "collect": _collect,
    "collect::Vec": _collect,
    "collect::Tuple": lambda it: tuple(_collect(it)),
    "sum": _sum,
    "product": _product,
    "count": lambda it: sum(1 for _ in it),
    "fold": _fold,
    "reduce": _reduce,
    "max": lambda it: _extreme(it, 1),
    "min": lambda it: _extreme(it, -1),
    "nth": _nth,
    "find": _find,
    "position": _position,
    "last": _last,
    "all": lambda it, f: all(_truth(f(v)) for v in it),
    "any": lambda it, f: any(_truth(f(v)) for v in it),
    "for_each": lambda it, f: (list(map(f, it)), None)[1],
    **typed_consumers(_sum, _product),
}


def _bind(f: Any) -> Any:
    """A Rune function as a plain Python callable with the current run bound (no extra frame)."""
    if type(f) is Function:
        return functools.partial(f.fn, STATE.run)
    return f


def iterator_method(it: RuneIterator, name: str, args: list[Any]) -> Any:
    if name == "filter" and len(args) == 1 and type(args[0]) is Function and args[0].returns_bool:
        return RuneIterator(filter(_bind(args[0]), it.it))  # the predicate always gives a bool
    args = [_bind(a) for a in args]
    if name == "next":
        return _next(it)
    if name in _IN_PLACE:
        return _IN_PLACE[name](it, *args)
    if name in ADAPTORS:
        made = ADAPTORS[name](it.it, *args)
        # an adaptor of `iterator_back` is kept itself: its `__iter__` hands out a generator
        return RuneIterator(made if isinstance(made, ReadByGenerator) else iter(made))
    if name in CONSUMERS:
        return CONSUMERS[name](it.it, *args)
    if "::" in name:  # `collect::<Vec<_>>()`: a target type with no conversion of its own
        return iterator_method(it, name.partition("::")[0], args)
    raise RuneRuntimeError(f"missing method `{name}` on `Iterator`")
