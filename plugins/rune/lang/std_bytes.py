"""``std::bytes::Bytes``: the byte-string methods and constructors beyond ``len``/``push``/``pop``.

``Bytes`` is a ``bytearray``; its capacity is the larger of its length and what ``with_capacity``
/ ``reserve`` asked for, kept on the value (Python does not expose a bytearray's allocation)."""

from __future__ import annotations

from typing import Any

from .errors import RuneRuntimeError
from .limits import allocate, check_length
from .runtime import iterate, type_name
from .std_u64 import BYTE_VALUES, U64, byte_values
from .values import NONE, Bytes, Option, Result, some


def _byte(v: Any) -> int:
    if (type(v) is not int and type(v) is not U64) or not 0 <= v <= 255:
        raise RuneRuntimeError(f"expected a byte (an integer in 0..=255), found `{type_name(v)}` {v!r}")
    return int(v)  # an i64 or a u64 (`240u8`) converts, as upstream's `u8` argument


def from_vec(items: Any) -> Bytes:
    values = [_byte(v) for v in iterate(items)]
    allocate(len(values), "byte string", 1)
    return Bytes(values)


def with_capacity(n: int) -> Bytes:
    check_length(n, "byte string")
    b = Bytes()
    b.cap = n
    return b


def capacity(b: Bytes) -> int:
    return max(len(b), getattr(b, "cap", 0))


def _reserve(b: Bytes, n: int) -> None:
    check_length(len(b) + n, "byte string")
    b.cap = max(capacity(b), len(b) + n)


def _shrink(b: Bytes) -> None:
    b.cap = len(b)


def _remove(b: Bytes, i: int) -> int:
    if not 0 <= i < len(b):
        raise RuneRuntimeError(f"index {i} out of bounds for a byte string of length {len(b)}")
    return BYTE_VALUES[b.pop(i)]


def _insert(b: Bytes, i: int, v: Any) -> None:
    if not 0 <= i <= len(b):
        raise RuneRuntimeError(f"insertion index {i} out of bounds for a byte string of length {len(b)}")
    check_length(len(b) + 1, "byte string")
    b.insert(i, _byte(v))


def _extend_str(b: Bytes, s: str) -> None:
    data = str(s).encode()
    check_length(len(b) + len(data), "byte string")
    allocate(len(data), "byte string", 1)
    b.extend(data)


def _get(b: Bytes, i: Any) -> Option:
    from .std_strings import range_slice_or_none
    from .values import RangeValue

    if type(i) is RangeValue:
        s = range_slice_or_none(i, len(b))
        return NONE if s is None else some(Bytes(b[s]))
    return some(BYTE_VALUES[b[i]]) if type(i) is int and 0 <= i < len(b) else NONE


BYTES_METHODS: dict[str, Any] = {
    "into_vec": byte_values,
    "as_vec": byte_values,
    "extend_str": _extend_str,
    "remove": _remove,
    "insert": _insert,
    "first": lambda b: some(BYTE_VALUES[b[0]]) if b else NONE,
    "last": lambda b: some(BYTE_VALUES[b[-1]]) if b else NONE,
    "clear": lambda b: b.clear(),
    "capacity": capacity,
    "reserve": _reserve,
    "reserve_exact": _reserve,
    "shrink_to_fit": _shrink,
    "get": _get,
    "iter": lambda b: _iter(b),
}


def _iter(b: Bytes) -> Any:
    from .iterators import RuneIterator

    return RuneIterator(iter(byte_values(b)))


def string_from_utf8(data: Any) -> Result:
    """``String::from_utf8``: ``Err`` naming the first invalid byte."""
    try:
        return Result(True, bytes(data).decode())
    except UnicodeDecodeError as exc:
        return Result(False, f"invalid utf-8 sequence of 1 bytes from index {exc.start}")
    except TypeError:
        raise RuneRuntimeError(f"`String::from_utf8` needs `Bytes`, found `{type_name(data)}`") from None


BYTES_NS: dict[str, Any] = {
    "new": Bytes,
    "with_capacity": with_capacity,
    "from_vec": from_vec,
}
