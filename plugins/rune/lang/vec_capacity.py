"""The capacity of a ``Vec``: what ``with_capacity``/``reserve`` asked for, or the room CPython's
list has already allocated, and never less than the length.

A vector is a Python ``list``, which cannot carry a reserved size (an empty list owns no
storage), so what a run reserves is recorded in a registry of that run, keyed by the list's
identity; the registry holds the list, so the identity stays its own until the run ends.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from .errors import RuneRuntimeError
from .limits import ITEM_BYTES, STATE, allocate

__all__ = ["capacity", "reserve", "with_capacity"]

_EMPTY_LIST_SIZE = sys.getsizeof([])


class _Reserved(threading.local):
    def __init__(self) -> None:
        self.run: Any = None
        self.lists: dict[int, tuple[list, int]] = {}


_RESERVED = _Reserved()


def _registry() -> dict[int, tuple[list, int]]:
    reserved = _RESERVED
    if reserved.run is not STATE.run:
        reserved.run, reserved.lists = STATE.run, {}
    return reserved.lists


def _count(n: Any, what: str) -> int:
    if type(n) is not int or n < 0:
        raise RuneRuntimeError(f"`Vec::{what}` takes a non-negative integer, not {n!r}")
    return n


def with_capacity(n: Any) -> list:
    """``Vec::with_capacity(n)``: an empty vector with room for ``n`` items."""
    allocate(_count(n, "with_capacity"), "vector", ITEM_BYTES)
    v: list = []
    if n:
        _registry()[id(v)] = (v, n)
    return v


def reserve(v: list, additional: Any) -> None:
    """``Vec::reserve``: room for at least ``additional`` more items."""
    need = len(v) + _count(additional, "reserve")
    if capacity(v) < need:
        allocate(need, "vector", ITEM_BYTES)
        _registry()[id(v)] = (v, max(need, 2 * capacity(v)))


def capacity(v: list) -> int:
    """``Vec::capacity``: at least the length."""
    allocated = (sys.getsizeof(v) - _EMPTY_LIST_SIZE) // 8
    entry = _RESERVED.lists.get(id(v)) if _RESERVED.run is STATE.run else None
    reserved = entry[1] if entry is not None and entry[0] is v else 0
    return max(len(v), allocated, reserved)
