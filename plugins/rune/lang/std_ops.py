"""``std::ops`` / ``std::cmp`` free functions (``eq``, ``partial_eq``, ``cmp``, ``partial_cmp``,
``hash``, ``min``, ``max``) and the comparison methods every value answers (``a.eq(b)``, ``a.lt(b)``)."""

from __future__ import annotations

import math
from typing import Any

from .errors import RuneRuntimeError
from .runtime import cmp, eq, type_name
from .std_types import ordering_of
from .values import NONE, Bytes, Char, Instance, Option, RangeValue, Result, some


def _has_nan(a: Any, b: Any) -> bool:
    return (type(a) is float and math.isnan(a)) or (type(b) is float and math.isnan(b))


def partial_eq(a: Any, b: Any) -> bool:
    """``PartialEq``: NaN is unequal to itself, as with ``==``."""
    return eq(a, b)


def total_eq(a: Any, b: Any) -> bool:
    """``Eq`` (upstream's f64 implements it too, comparing as ``==`` does)."""
    return eq(a, b)


def partial_cmp(a: Any, b: Any) -> Option:
    """``PartialOrd``: ``None`` when NaN takes part."""
    if _has_nan(a, b):
        return NONE
    return some(ordering_of(cmp(a, b)))


def total_cmp(a: Any, b: Any) -> Instance:
    """``Ord``: a NaN cannot be ordered."""
    if _has_nan(a, b):
        raise RuneRuntimeError(f"cannot order {a!r} and {b!r}: NaN has no total order")
    return ordering_of(cmp(a, b))


def _hash_key(v: Any) -> Any:
    t = type(v)
    if t in (int, bool, str, Char):
        return (t.__name__, v)
    if t is float:
        raise RuneRuntimeError("`f64` values cannot be hashed")
    if v is None:
        return ("unit",)
    if t in (list, tuple):  # upstream hashes a vector and a tuple of the same items alike
        return ("sequence", *map(_hash_key, v))
    if t is Bytes:
        return ("bytes", bytes(v))
    if t is dict:
        return ("object", *((k, _hash_key(x)) for k, x in v.items()))
    if t is Option:
        return ("option", v.is_some, _hash_key(v.value) if v.is_some else None)
    if t is Result:
        return ("result", v.is_ok, _hash_key(v.value))
    if t is Instance:
        hasher = v.type.methods.get("hash")
        if hasher is not None:
            return ("custom", id(v.type), _hash_key(hasher(v)))
        return ("instance", id(v.type), *map(_hash_key, v.values))
    if t is RangeValue:
        return ("range", _hash_key(v.start), _hash_key(v.end), v.inclusive)
    raise RuneRuntimeError(f"`{type_name(v)}` values cannot be hashed")


def hash_value(v: Any) -> int:
    """``std::ops::hash``: equal values hash equally within one process."""
    return hash(_hash_key(v)) & 0x7FFF_FFFF_FFFF_FFFF


def _min(a: Any, b: Any) -> Any:
    return b if cmp(b, a) < 0 else a


def _max(a: Any, b: Any) -> Any:
    return b if cmp(b, a) >= 0 else a


OPS_FUNCTIONS: dict[str, Any] = {
    "eq": total_eq,
    "partial_eq": partial_eq,
    "cmp": total_cmp,
    "partial_cmp": partial_cmp,
    "hash": hash_value,
}
CMP_FUNCTIONS: dict[str, Any] = {"min": _min, "max": _max}

# Methods every comparable value has when its own table does not define them.
COMPARISON_METHODS: dict[str, Any] = {
    "eq": total_eq,
    "partial_eq": partial_eq,
    "ne": lambda a, b: not eq(a, b),
    "cmp": total_cmp,
    "partial_cmp": partial_cmp,
    "lt": lambda a, b: cmp(a, b) < 0,
    "le": lambda a, b: cmp(a, b) <= 0,
    "gt": lambda a, b: cmp(a, b) > 0,
    "ge": lambda a, b: cmp(a, b) >= 0,
    "hash": hash_value,
}

