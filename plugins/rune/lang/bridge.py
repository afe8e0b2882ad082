"""Lossless conversion between Rune values and Python/JSON values.

Mapping: i64 <-> int, f64 <-> float, String/char -> str, bool <-> bool, unit <-> None,
Vec <-> list, Tuple -> list, Object <-> dict (key order kept), and Option/Result as the
one-key objects ``{"Some": v}`` / ``{"None": null}`` / ``{"Ok": v}`` / ``{"Err": e}``.
That is for Python callers of ``Unit.call``; JSON data crossing a tool's boundary is written and
read the way upstream's serde does it (``to_json`` / ``from_json``, in ``json_values``).
"""

from __future__ import annotations

from typing import Any

from .errors import RuneRuntimeError
from .json_values import to_json
from .runtime import I64_MAX, I64_MIN, type_name
from .std_u64 import U64
from .values import NONE, Bytes, Char, Instance, Option, Result, some

__all__ = ["from_python", "to_json", "to_python"]  # to_json: JSON data, serde's way (``json_values``)


def to_python(v: Any) -> Any:
    """Convert a Rune value to plain Python data.

    Option maps to ``{"Some": value}`` / ``{"None": None}`` and Result to ``{"Ok": value}`` /
    ``{"Err": value}`` so the distinction survives JSON; structs become dicts of their fields."""
    t = type(v)
    if v is None or t in (int, float, bool, str):
        return v
    if t is Char:
        return str(v)
    if t in (list, tuple):
        return [to_python(x) for x in v]
    if t is dict:
        return {k: to_python(x) for k, x in v.items()}
    if t is Option:
        return {"Some": to_python(v.value)} if v.is_some else {"None": None}
    if t is Result:
        return {"Ok" if v.is_ok else "Err": to_python(v.value)}
    if t is Instance:
        if v.type.kind == "named":
            return {k: to_python(x) for k, x in zip(v.type.fields, v.values)}
        if v.type.kind == "tuple":
            return [to_python(x) for x in v.values]
        return v.type.name
    if t is Bytes:
        return list(v)
    if hasattr(t, "to_python"):  # std::collections: HashMap, HashSet, VecDeque
        return v.to_python(to_python)
    raise RuneRuntimeError(f"`{type_name(v)}` values cannot cross to Python")


def from_python(v: Any) -> Any:
    """Convert Python data to Rune values; the inverse of ``to_python`` for JSON-like data."""
    t = type(v)
    if v is None or t in (float, bool, str):
        return v
    if t is int:
        if not I64_MIN <= v <= I64_MAX:
            raise RuneRuntimeError(f"integer {v} does not fit in i64")
        return v
    if t in (list, tuple):
        return [from_python(x) for x in v]
    if t is dict:
        if len(v) == 1:
            ((k, x),) = v.items()
            if k == "Some":
                return some(from_python(x))
            if k == "None" and x is None:
                return NONE
            if k in ("Ok", "Err"):
                return Result(k == "Ok", from_python(x))
        return {str(k): from_python(x) for k, x in v.items()}
    if isinstance(v, (Option, Result, Instance, Char, U64)):  # already Rune values
        return v
    if callable(v):
        return v
    raise RuneRuntimeError(f"Python `{t.__name__}` values cannot cross to Rune")
