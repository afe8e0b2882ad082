"""How many items the iterator of a ``HashMap``, ``HashSet`` or ``VecDeque`` has left.

Their iterators are generators that turn Python's "changed size during iteration" into Rune's
error (``std_collections._guarded``), so they cannot say how much is left themselves; the table
below remembers, per generator, the dict or deque iterator it reads, which can. Upstream gives
all of them an exact ``SIZE_HINT``, and ``LEN`` (``len()``) to the set and deque iterators only."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any
from weakref import WeakKeyDictionary

_SOURCES: WeakKeyDictionary[Any, tuple[Iterator[Any], bool]] = WeakKeyDictionary()


def sized(guarded: Iterator[Any], source: Iterator[Any], has_len: bool) -> Iterator[Any]:
    """``guarded``, remembered as reading ``source`` (``has_len``: upstream's ``LEN`` exists)."""
    _SOURCES[guarded] = (source, has_len)
    return guarded


def collection_hint(it: Any) -> tuple[int, int, bool] | None:
    """``(left, left, has_len)`` for a collection's iterator, or None for any other iterator."""
    try:
        found = _SOURCES.get(it)
    except TypeError:  # not weakly referenceable: not one of ours
        return None
    if found is None:
        return None
    left = operator.length_hint(found[0])
    return left, left, found[1]
