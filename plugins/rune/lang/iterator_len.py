"""``len()`` of an iterator: upstream's ``ExactSizeIterator::len`` (the ``LEN`` protocol).

Upstream implements ``LEN`` for the iterators that know how many items are left: ranges,
``Vec`` / tuple / object / set / deque iterators and ``rev``, ``chain``, ``enumerate``, ``map``,
``peekable``, ``skip`` and ``take`` over them (not a map's iterator, whose ``SIZE_HINT`` is exact
all the same). Here that is an iterator whose size hint is exact; the adaptors whose count depends
on the items (``filter``, ``filter_map``, ``flat_map``) and an iterator without an exact hint (a
generator, ``0..``) are the missing method upstream reports."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .collection_hints import collection_hint
from .errors import RuneRuntimeError
from .iterator_ends import size_hint
from .values import Option, some

_ITEM_DEPENDENT = frozenset({"filter", "Filtered", "FilterMapped", "FlatMapped"})


def _depends_on_items(it: Any) -> bool:
    """Whether ``it`` or an adaptor it wraps (``map(f, filter(..))``) counts only what passes."""
    while it is not None:
        if type(it).__name__ in _ITEM_DEPENDENT:
            return True
        if type(it) is map:
            it = it.__reduce__()[1][1]  # (function, source): the source map reads
        else:
            it = getattr(it, "it", None) or getattr(it, "inner", None)
    return False


def iterator_size_hint(it: Iterator[Any]) -> tuple[int, Option]:
    """``size_hint()``: exact for a collection's own iterator, else what the adaptors report."""
    found = collection_hint(it)
    if found is not None:
        return found[0], some(found[1])
    return size_hint(it)


def exact_len(it: Iterator[Any]) -> int:
    """The number of items ``it`` has left, when it knows it without reading them."""
    found = collection_hint(it)
    if found is not None:
        if found[2]:
            return found[0]
        raise RuneRuntimeError(
            "missing method `len` on `Iterator`: a `HashMap`'s iterators have no `len` upstream; "
            "`size_hint()` gives what is left"
        )
    lower, upper = size_hint(it)
    if upper.is_some and upper.value == lower and not _depends_on_items(it):
        return lower
    raise RuneRuntimeError(
        "missing method `len` on `Iterator`: this iterator does not know how many items are left "
        "(upstream's `ExactSizeIterator`); count them with `count()`"
    )
