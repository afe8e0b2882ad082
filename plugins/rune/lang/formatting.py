"""Rendering values as text: ``{}`` (``display``), ``{:?}`` (``debug``) and Rust-style format
strings, under the per-value size cap (see ``limits``): big containers and strings are written
piece by piece and stop as soon as the text would pass the cap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import RuneRuntimeError
from .format_spec import apply_spec, format_float
from .limits import TextBuilder
from .shared_string import SharedString
from .std_any import Type
from .std_u64 import U64
from .values import (
    Bytes,
    Char,
    Function,
    Future,
    Generator,
    Instance,
    Module,
    Option,
    RangeValue,
    Result,
    Stream,
    TypeInfo,
)

__all__ = ["debug", "display", "format_float", "format_string", "format_with_options"]


def display(v: Any) -> str:
    """The ``{}`` rendering of a value."""
    t = type(v)
    if t is str or t is Char or t is SharedString:
        return str(v)
    if t is int:
        return str(v)
    if t is bool:
        return "true" if v else "false"
    if t is float:
        return format_float(v)
    shown = getattr(v, "rune_display", None)  # std::mem::Snapshot
    if shown is not None:
        return shown()
    return debug(v)


def debug(v: Any) -> str:
    """The ``{:?}`` rendering of a value."""
    t = type(v)
    if t is SharedString:
        v, t = str(v), str
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
    if callable(v):  # a std or host function taken as a value
        return "native function"
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
    elif t is str or t is SharedString:
        v = str(v)
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
    U64: int.__repr__,  # no suffix, as upstream's Debug and Display
    RangeValue: _debug_range,
    Bytes: lambda v: "[" + ", ".join(map(str, v)) + "]",  # upstream debug-prints the byte values
    Function: lambda v: f"fn {v.name}",
    TypeInfo: lambda v: v.full_name,
    Future: lambda v: "Future",
    Module: lambda v: f"mod {v.name}",
    # upstream's Rust `Debug` of these: `Generator { completed: false }`, `Type(0x1cad9186c9641c4f)`
    Generator: lambda v: f"Generator {{ completed: {display(v.finished)} }}",
    Stream: lambda v: f"Stream {{ completed: {display(v.finished)} }}",
    Type: Type.rune_display,
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


def format_with_options(value: Any, options: dict[str, Any]) -> str:
    """``#[builtin] format!(value, fill = '0', width = 10, precision = 2)``: ``value`` under those options."""
    unknown = set(options) - {"fill", "width", "precision", "format_type"}
    if unknown:
        raise RuneRuntimeError(f"`format!` option `{min(unknown)}` is not supported")
    fill = str(options.get("fill", ""))
    if len(fill) > 1:
        raise RuneRuntimeError(f"`format!` fill must be one character, not {fill!r}")
    align = ("<" if type(value) not in (int, float, U64) else ">") if fill else ""
    width = options.get("width")
    precision = options.get("precision")
    for name, number in (("width", width), ("precision", precision)):
        if number is not None and (type(number) is not int or number < 0):
            raise RuneRuntimeError(f"`format!` {name} must be a non-negative integer")
    spec = f"{fill}{align}{'' if width is None else width}{'' if precision is None else f'.{precision}'}"
    spec += str(options.get("format_type", ""))
    return apply_spec(value, spec, display, debug) if spec else display(value)
