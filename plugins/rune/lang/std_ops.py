"""``std::ops`` / ``std::cmp`` free functions (``eq``, ``partial_eq``, ``cmp``, ``partial_cmp``,
``hash``, ``min``, ``max``) and the comparison methods every value answers (``a.eq(b)``, ``a.lt(b)``)."""

from __future__ import annotations

import math
from typing import Any

from .errors import RuneRuntimeError
from .runtime import cmp, eq
from .std_collections import _TUPLE, _VEC, hash_key
from .std_types import ordering_of
from .std_u64 import refuse_total
from .total_equality import refuse_nan
from .values import NONE, Instance, Option, some


def _has_nan(a: Any, b: Any) -> bool:
    return (type(a) is float and math.isnan(a)) or (type(b) is float and math.isnan(b))


def partial_eq(a: Any, b: Any) -> bool:
    """``PartialEq``: NaN is unequal to itself, as with ``==``."""
    return eq(a, b)


def total_eq(a: Any, b: Any) -> bool:
    """``Eq``: as ``==``, except that meeting a NaN is an error (upstream's f64 ``EQ``)."""
    refuse_total("eq", a, b)
    if eq(a, b):
        return True
    refuse_nan(a, b)
    return False


def partial_cmp(a: Any, b: Any) -> Option:
    """``PartialOrd``: ``None`` when NaN takes part."""
    if _has_nan(a, b):
        return NONE
    return some(ordering_of(cmp(a, b)))


def total_cmp(a: Any, b: Any) -> Instance:
    """``Ord``: a NaN cannot be ordered."""
    if _has_nan(a, b):
        raise RuneRuntimeError(f"cannot order {a!r} and {b!r}: NaN has no total order")
    refuse_total("cmp", a, b)
    return ordering_of(cmp(a, b))


def _sequence_blind(key: Any) -> Any:
    """A ``hash_key`` with every tuple read as a vector: upstream hashes a vector and a tuple of the
    same items alike (they stay distinct keys, being unequal)."""
    if type(key) is not tuple:
        return key
    head = _VEC if key[0] is _TUPLE else key[0]
    return (head, *map(_sequence_blind, key[1:]))


def hash_value(v: Any) -> int:
    """``std::ops::hash``: the hash a map or set gives ``v`` as a key (``std_collections.hash_key``),
    so exactly the values that can be keys hash, and equal keys hash equally within one process."""
    return hash(_sequence_blind(hash_key(v))) & 0x7FFF_FFFF_FFFF_FFFF


def _min(a: Any, b: Any) -> Any:
    """``std::cmp::min``: by ``Ord`` (a NaN is an error), the first of equal values."""
    return b if total_cmp(a, b).type.name == "Greater" else a


def _max(a: Any, b: Any) -> Any:
    """``std::cmp::max``: by ``Ord`` (a NaN is an error), the second of equal values."""
    return a if total_cmp(a, b).type.name == "Greater" else b


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
    "eq": partial_eq,  # the method is `PartialEq::eq` upstream; `std::ops::eq` is the total one
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

