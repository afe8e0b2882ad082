"""Rune values as JSON data and back, the way upstream Rune's serde implementation writes and reads them.

Upstream (``runtime/value/serde.rs`` with serde_json) writes ``()`` as ``null``, ``Some(v)`` as
``v`` and ``None`` as ``null`` at any depth, a ``char`` as a one-character string, ``Bytes`` as an
array of numbers, vectors and tuples as arrays, objects as objects, and ``i64``/``u64``/``f64`` as
numbers; it reads ``null`` as ``()``, arrays as vectors and objects as objects (a one-key object
``{"Some": 1}`` is an object like any other). Where upstream's serializer refuses a value, this one
writes what serde's own conventions give, so that tools can return their data:

- ``Ok(v)`` / ``Err(e)`` as ``{"Ok": v}`` / ``{"Err": e}`` (serde's ``Result``);
- structs and enum variants as ``#[derive(Serialize)]`` writes them: a struct as an object of
  its fields, a one-field tuple struct as its field, a tuple struct as an array, an empty struct
  as ``null``; a variant externally tagged: ``"Name"``, ``{"Name": v}``, ``{"Name": [..]}``,
  ``{"Name": {..}}``;
- ``HashMap`` as an object (integer keys become strings, as serde_json writes map keys),
  ``HashSet`` and ``VecDeque`` as arrays.

Still refused, naming where in the value the culprit is: ``inf`` and ``NaN`` (serde_json would
write ``null``, silently), ranges, functions, futures, generators and other values without data.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import RuneRuntimeError
from .formatting import format_float
from .runtime import I64_MAX, I64_MIN, type_name
from .shared_string import SharedString
from .values import Bytes, Char, Instance, Option, RangeValue, Result

__all__ = ["from_json", "to_json"]


class _Refused(Exception):
    """A value with no JSON form; ``path`` is filled in on the way out of the containers."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []


def to_json(v: Any, what: str = "the value") -> Any:
    """Rune value ``v`` as JSON data (``None``, bool, int, float, str, list, dict), as described in
    the module docstring; raises ``RuneRuntimeError`` naming ``what`` and the place in it when a
    part of ``v`` cannot be JSON."""
    try:
        return _json(v)
    except _Refused as refused:
        path = "".join(refused.path).removeprefix(".")
        place = f"{what} at {path}" if path else what
        raise RuneRuntimeError(f"{place} {refused.reason}") from None
    except RecursionError:
        raise RuneRuntimeError(
            f"{what} is nested too deeply to become JSON (vectors or objects inside each other"
            " hundreds of levels deep); flatten it"
        ) from None


def _json(v: Any) -> Any:
    t = type(v)
    if t is str or t is int or t is bool or v is None:
        return v
    if t is float:
        if math.isfinite(v):
            return v
        raise _Refused(
            f"is the float {format_float(v)}, which JSON cannot carry;"
            " check with `is_finite()`, or return it as a string"
        )
    if t is list or t is tuple:
        return _sequence(v)
    if t is dict:
        return _object(v)
    if t is Option:
        return _json(v.value) if v.is_some else None
    if t is Result:
        return {"Ok": _inside(v.value, ".Ok")} if v.is_ok else {"Err": _inside(v.value, ".Err")}
    if t is Char or t is SharedString:
        return str(v)
    if t is Bytes:
        return list(v)
    if t is Instance:
        return _instance(v)
    if t is RangeValue:
        raise _Refused(
            "is a range, which has no JSON form (upstream's serde refuses it too);"
            " collect it with `.iter().collect::<Vec>()` or return its ends as `#{start, end}`"
        )
    if hasattr(t, "to_python"):  # u64, HashMap, HashSet, VecDeque
        data = v.to_python(_json)
        return _string_keys(data) if type(data) is dict else data
    raise _Refused(
        f"is a `{type_name(v)}`, which has no JSON form; return data instead"
        " (numbers, strings, vectors, objects, Option, Result or structs of them)"
    )


def _inside(v: Any, segment: str) -> Any:
    try:
        return _json(v)
    except _Refused as refused:
        refused.path.insert(0, segment)
        raise


def _sequence(items: Any) -> list[Any]:
    out = []
    for i, x in enumerate(items):
        t = type(x)
        if t is int or t is str:  # most items of most arrays
            out.append(x)
        else:
            out.append(_inside(x, f"[{i}]"))
    return out


def _object(fields: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, x in fields.items():
        t = type(x)
        out[k] = x if t is int or t is str else _inside(x, f".{k}")
    return out


def _instance(v: Instance) -> Any:
    info = v.type
    if info.kind == "named":
        data: Any = _object(dict(zip(info.fields, v.values, strict=True)))
    elif info.kind == "tuple" and len(v.values) == 1:
        data = _inside(v.values[0], ".0")  # a newtype: serde writes its one field
    elif info.kind == "tuple":
        data = _sequence(v.values)
    else:
        data = None
    if info.enum_name is None:
        return data
    return info.name if info.kind not in ("named", "tuple") else {info.name: data}


def _string_keys(data: dict[Any, Any]) -> dict[str, Any]:
    """A map's keys as JSON object keys: integers as their decimal text, as serde_json writes them."""
    if all(type(k) is str for k in data):
        return data
    out = {str(k): x for k, x in data.items()}
    if len(out) != len(data):
        clash = next(k for k in data if type(k) is not str and str(k) in data)
        raise _Refused(
            f"is a map with both {clash} and \"{clash}\" as keys, which are the same JSON key;"
            " convert the keys to strings first"
        )
    return out


def from_json(v: Any) -> Any:
    """JSON data ``v`` as a Rune value, as upstream's serde reads it: ``null`` is ``()``, an array
    a ``Vec``, an object an ``Object`` (whatever its keys); integers must fit in an ``i64``."""
    t = type(v)
    if t is str or t is bool or t is float or v is None:
        return v
    if t is int:
        if not I64_MIN <= v <= I64_MAX:
            raise RuneRuntimeError(f"integer {v} does not fit in i64")
        return v
    if t is list:
        return [from_json(x) for x in v]
    if t is dict:
        return {str(k): from_json(x) for k, x in v.items()}
    raise RuneRuntimeError(f"a Python `{t.__name__}` is not JSON data and cannot become a Rune value")
