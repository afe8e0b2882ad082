"""Total equality (``Eq``, ``std::ops::eq``) meeting a NaN: upstream's error, not ``false``.

Upstream compares two values for total equality in order (vector and tuple items, an object's
fields, a variant's payload) and stops at the first unequal pair; a pair of floats where one is
NaN is ``IllegalFloatComparison`` ("Cannot perform a comparison of the floats .."). ``==`` and
``partial_eq`` stay partial: NaN is just unequal there."""

from __future__ import annotations

import math
from typing import Any

from .errors import RuneRuntimeError
from .runtime import eq
from .values import Instance, Option, Result


def _nan_met(a: Any, b: Any) -> bool:
    """Whether comparing ``a`` with ``b`` in order meets a NaN before another unequal pair."""
    ta = type(a)
    if ta is float and type(b) is float:
        return math.isnan(a) or math.isnan(b)
    if ta is not type(b):
        return False
    if ta is Option or ta is Result:
        same_tag = a.is_some == b.is_some if ta is Option else a.is_ok == b.is_ok
        return same_tag and _nan_met(a.value, b.value)
    if ta is Instance:
        if a.type is not b.type:
            return False
        a, b = a.values, b.values
    elif ta is dict:
        if a.keys() != b.keys():
            return False
        a, b = list(a.values()), [b[k] for k in a]
    elif ta is not list and ta is not tuple:
        return False
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if _nan_met(x, y):
            return True
        if not eq(x, y):
            return False
    return False


def refuse_nan(a: Any, b: Any) -> None:
    """Raise upstream's error when total equality of ``a`` and ``b`` (found unequal) met a NaN."""
    if _nan_met(a, b):
        raise RuneRuntimeError(
            "cannot compare floats for total equality when one is NaN (std::ops::eq, Eq); "
            "use `==` or `std::ops::partial_eq`, where NaN is unequal to everything"
        )
