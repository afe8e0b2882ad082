"""``String`` methods that work on UTF-8 byte offsets (``get``, ``char_at``, ``is_char_boundary``)
and ``split`` by a string, a char, a char predicate or a closure; ``get`` of a range on any sequence."""

from __future__ import annotations

from typing import Any

from .errors import RuneRuntimeError
from .iterators import RuneIterator
from .values import NONE, Char, Option, RangeValue, some


def range_slice_or_none(r: RangeValue, n: int) -> slice | None:
    """``get(range)``: ``None`` where indexing would raise."""
    start = r.start or 0
    end = n if r.end is None else (r.end + 1 if r.inclusive else r.end)
    if type(start) is not int or type(end) is not int or start < 0 or end > n or start > end:
        return None
    return slice(start, end)


def str_get(s: str, r: Any) -> Option:
    """``String::get``: ``None`` out of bounds or off a UTF-8 character boundary."""
    if type(r) is not RangeValue:
        return NONE
    data = s.encode()
    window = range_slice_or_none(r, len(data))
    if window is None or not (char_boundary(data, window.start) and char_boundary(data, window.stop)):
        return NONE
    return some(data[window].decode())


def char_boundary(data: bytes, i: int) -> bool:
    """``String::is_char_boundary`` on the string's UTF-8 bytes (the end counts as a boundary)."""
    return i == len(data) or (0 <= i < len(data) and (data[i] & 0xC0) != 0x80)


def char_at(s: str, i: int) -> Option:
    """``String::char_at``: the char starting at byte ``i``, ``None`` inside one or out of bounds."""
    data = s.encode()
    if type(i) is not int or not (0 <= i < len(data)) or not char_boundary(data, i):
        return NONE
    return some(Char(data[i:i + 4].decode(errors="ignore")[:1]))


def split(s: str, sep: Any) -> RuneIterator:
    """``split`` by a string, a char, a char predicate (``char::is_numeric``) or a closure."""
    if type(sep) is str or type(sep) is Char:
        if sep == "":
            return RuneIterator(iter(["", *s, ""]))  # Rust: an empty match at every boundary
        return RuneIterator(iter(s.split(sep)))
    if callable(sep):
        return RuneIterator(split_where(s, sep))
    raise RuneRuntimeError(f"cannot split a string by `{type(sep).__name__}`")


def split_where(s: str, matches: Any) -> Any:
    """The pieces of ``s`` between the chars ``matches`` accepts (a predicate must return a bool)."""
    start = 0
    for i, c in enumerate(s):
        hit = matches(Char(c))
        if type(hit) is not bool:
            raise RuneRuntimeError("a `split` predicate must return a bool")
        if hit:
            yield s[start:i]
            start = i + 1
    yield s[start:]
