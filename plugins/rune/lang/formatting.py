"""Rendering values as text: ``{}`` (``display``), ``{:?}`` (``debug``) and Rust-style format
strings, under the per-value size cap (see ``limits``): big containers and strings are written
piece by piece and stop as soon as the text would pass the cap."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import RuneRuntimeError
from .format_spec import apply_spec
from .limits import TextBuilder
from .values import Bytes, Char, Function, Future, Instance, Module, Option, RangeValue, Result, TypeInfo

__all__ = ["debug", "display", "format_float", "format_string"]


def format_float(f: float) -> str:
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    text = repr(f)
    if "e" in text:
        mant, exp = text.split("e")
        text = f"{mant}e{int(exp)}"
    return text


def display(v: Any) -> str:
    """The ``{}`` rendering of a value."""
    t = type(v)
    if t is str or t is Char:
        return str(v)
    if t is int:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return format_float(v)
    return debug(v)


def debug(v: Any) -> str:
    """The ``{:?}`` rendering of a value."""
    t = type(v)
    if t is str:
        if len(v) > _QUOTED_INLINE:
            return _debug_text(v)
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if t is Char:
        return "'" + (v if v != "'" else "\\'") + "'"
    if t in (int, bool, float):
        return display(v)
    if v is None:
        return "()"
    if t in _SCALAR_DEBUG:
        return _SCALAR_DEBUG[t](v)
    if t in (list, tuple, dict, Option, Result, Instance) or hasattr(t, "debug_into"):
        return _debug_text(v)  # std::collections types have `debug_into`
    return repr(v)


_QUOTED_INLINE = 4096  # longer strings are quoted under the per-value cap


def _debug_text(v: Any) -> str:
    text = TextBuilder("formatted string")
    _debug_into(v, text.add)
    return text.text()


def _debug_into(v: Any, add: Callable[[str], None]) -> None:
    """Write the ``{:?}`` rendering of ``v`` piece by piece (containers may be big)."""
    t = type(v)
    if t is list or t is tuple:
        add("[" if t is list else "(")
        for i, x in enumerate(v):
            if i:
                add(", ")
            _debug_into(x, add)
        add("]" if t is list else ("," if len(v) == 1 else "") + ")")
    elif t is dict:
        add("{")
        for i, (k, x) in enumerate(v.items()):
            add(", " if i else "")
            _debug_into(k, add)
            add(": ")
            _debug_into(x, add)
        add("}")
    elif t is Option:
        if v.is_some:
            add("Some(")
            _debug_into(v.value, add)
            add(")")
        else:
            add("None")
    elif t is Result:
        add("Ok(" if v.is_ok else "Err(")
        _debug_into(v.value, add)
        add(")")
    elif t is Instance:
        ty = v.type
        if ty.kind == "unit":
            add(ty.name)
            return
        add(f"{ty.name}(" if ty.kind == "tuple" else f"{ty.name} {{ ")
        names = ty.fields if ty.kind != "tuple" else [None] * len(v.values)
        for i, (name, x) in enumerate(zip(names, v.values)):
            add(", " if i else "")
            if name is not None:
                add(f"{name}: ")
            _debug_into(x, add)
        add(")" if ty.kind == "tuple" else " }")
    elif t is str:
        for start in range(0, len(v), _QUOTED_INLINE):
            piece = v[start : start + _QUOTED_INLINE]
            quoted = piece.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            add(('"' if start == 0 else "") + quoted)
        add('"' if v else '""')
    elif hasattr(t, "debug_into"):
        v.debug_into(add, _debug_into)
    else:
        add(debug(v))


def _debug_range(v: RangeValue) -> str:
    s = "" if v.start is None else debug(v.start)
    e = "" if v.end is None else debug(v.end)
    return f"{s}..{'=' if v.inclusive else ''}{e}"


_SCALAR_DEBUG: dict[type, Callable[[Any], str]] = {
    RangeValue: _debug_range,
    Bytes: lambda v: "[" + ", ".join(map(str, v)) + "]",  # upstream debug-prints the byte values
    Function: lambda v: f"fn {v.name}",
    TypeInfo: lambda v: v.full_name,
    Future: lambda v: "Future",
    Module: lambda v: f"mod {v.name}",
}


def format_string(fmt: str, args: list[Any], named: dict[str, Any] | None = None) -> str:
    """Implement Rust-style ``{}``, ``{:?}``, ``{0}``, ``{name}`` and simple width/precision specs."""
    out = TextBuilder("formatted string")
    i = 0
    auto = 0
    n = len(fmt)
    while i < n:
        c = fmt[i]
        if c == "{":
            if i + 1 < n and fmt[i + 1] == "{":
                out.add("{")
                i += 2
                continue
            j = fmt.index("}", i)
            spec = fmt[i + 1 : j]
            i = j + 1
            key, _, fspec = spec.partition(":")
            if ".*" in fspec:  # `{:.*}`: the precision is the next positional argument
                if auto >= len(args) or type(args[auto]) is not int or args[auto] < 0:
                    raise RuneRuntimeError("`{:.*}` needs a non-negative integer precision argument first")
                fspec = fspec.replace(".*", f".{args[auto]}")
                auto += 1
            if key == "":
                if auto >= len(args):
                    raise RuneRuntimeError("format string references a missing argument")
                value = args[auto]
                auto += 1
            elif key.isdigit():
                value = args[int(key)]
            else:
                if named is None or key not in named:
                    raise RuneRuntimeError(f"format string references unknown name `{key}`")
                value = named[key]
            out.add(_apply_spec(value, fspec))
        elif c == "}" and i + 1 < n and fmt[i + 1] == "}":
            out.add("}")
            i += 2
        else:
            j = i + 1
            while j < n and fmt[j] not in "{}":
                j += 1
            out.add(fmt[i:j])
            i = j
    return out.text()


def _apply_spec(value: Any, spec: str) -> str:
    if not spec:
        return display(value)
    if spec == "?":
        return debug(value)
    return apply_spec(value, spec, display, debug)
