"""Rust's format spec, ``[[fill]align][sign][#][0][width][.precision][type]``, applied to one value:
``{:+}``, ``{:#x}`` (two's complement for negative integers, as for i64), ``{:08.3}``, ``{:e}``,
``{:#?}`` (pretty debug, one item a line) and ``{:.*}`` (the precision taken from the arguments)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from .errors import RuneRuntimeError
from .limits import TextBuilder, check_length
from .std_u64 import U64
from .values import Instance, Option, Result

_SPEC = re.compile(
    r"(?:(?P<fill>.)(?=[<^>]))?(?P<align>[<^>])?(?P<sign>[+-])?(?P<alt>#)?(?P<zero>0(?=\d))?"
    r"(?P<width>\d+)?(?:\.(?P<precision>\d+))?(?P<kind>\?|x\?|X\?|[xXobeE])?",
    re.DOTALL,
)
_RADIX = {"x": "x", "X": "X", "o": "o", "b": "b"}
_PREFIX = {"x": "0x", "X": "0x", "o": "0o", "b": "0b"}


def format_float(f: float) -> str:
    """A float as Rune displays it: `NaN`, `inf`, `1e20`, shortest round-trip digits otherwise."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    text = repr(f)
    if "e" in text:
        mant, exp = text.split("e")
        text = f"{mant}e{int(exp)}"
    return text


def apply_spec(value: Any, spec: str, display: Callable[[Any], str], debug: Callable[[Any], str]) -> str:
    """``value`` formatted by ``spec`` (the text after ``:`` in ``{:spec}``)."""
    m = _SPEC.fullmatch(spec)
    if m is None:
        raise RuneRuntimeError(f"unsupported format spec `{{:{spec}}}`")
    kind, alt, precision = m["kind"] or "", bool(m["alt"]), m["precision"]
    if precision is not None:
        check_length(int(precision), "formatted number")
    is_number = type(value) in (int, float, U64)
    sign = ""
    if kind in _RADIX:
        if type(value) is not int and type(value) is not U64:
            raise RuneRuntimeError(f"`{{:{kind}}}` formats integers, not {display(value)!r}")
        body = format(value & 0xFFFF_FFFF_FFFF_FFFF if value < 0 else value, _RADIX[kind])
        if alt:
            sign = _PREFIX[kind]
    elif kind in ("e", "E"):
        body = _exponent(float(value) if is_number else value, precision, kind)
    elif kind == "?" and alt:
        body = pretty(value, debug)
    elif kind == "?":
        body = _fixed(value, precision) if type(value) is float and precision else debug(value)
    elif type(value) is float and precision is not None:
        body = _fixed(value, precision)
    elif type(value) in (str,) and precision is not None:
        body = value[: int(precision)]
    else:
        body = display(value)
    if is_number and kind not in _RADIX and body.startswith("-"):
        sign, body = "-", body[1:]
    elif is_number and m["sign"] == "+" and kind not in _RADIX:
        sign = "+"
    width = int(m["width"] or 0)
    check_length(width, "padded string")
    if m["zero"] and is_number:
        return sign + body.rjust(width - len(sign), "0")
    text = sign + body
    if len(text) >= width:
        return text
    fill = m["fill"] or " "
    align = m["align"] or (">" if is_number else "<")
    pad = width - len(text)
    if align == "<":
        return text + fill * pad
    if align == ">":
        return fill * pad + text
    return fill * (pad // 2) + text + fill * (pad - pad // 2)


def _fixed(value: float, precision: str | None) -> str:
    if precision is None:
        return format_float(value)
    if not math.isfinite(value):
        return format_float(value)
    return f"{value:.{int(precision)}f}"


def _exponent(value: Any, precision: str | None, kind: str) -> str:
    if type(value) is not float:
        raise RuneRuntimeError(f"`{{:{kind}}}` formats numbers")
    if not math.isfinite(value):
        return format_float(value)
    text = f"{value:.{int(precision)}e}" if precision is not None else _shortest_exponent(value)
    mantissa, _, exp = text.partition("e")
    text = f"{mantissa}e{int(exp)}"
    return text.upper() if kind == "E" else text


def _shortest_exponent(value: float) -> str:
    return format(Decimal(repr(value)).normalize(), "e")


def pretty(v: Any, debug: Callable[[Any], str]) -> str:
    """``{:#?}``: containers one item a line, indented by four spaces, with trailing commas."""
    out = TextBuilder("formatted string")
    _pretty_into(v, out.add, "", debug)
    return out.text()


def _pretty_into(v: Any, add: Callable[[str], None], indent: str, debug: Callable[[Any], str]) -> None:
    t = type(v)
    inner = indent + "    "
    if t is list or t is tuple:
        items: list[tuple[str | None, Any]] = [(None, x) for x in v]
        _block(items, "[" if t is list else "(", "]" if t is list else ")", add, indent, debug)
    elif t is dict:
        _block([(debug(k), x) for k, x in v.items()], "{", "}", add, indent, debug)
    elif t is Option and v.is_some:
        _block([(None, v.value)], "Some(", ")", add, indent, debug)
    elif t is Result:
        _block([(None, v.value)], "Ok(" if v.is_ok else "Err(", ")", add, indent, debug)
    elif t is Instance and v.type.kind != "unit":
        ty = v.type
        if ty.kind == "tuple":
            _block([(None, x) for x in v.values], f"{ty.name}(", ")", add, indent, debug)
        else:
            _block(list(zip(ty.fields, v.values)), f"{ty.name} {{", "}", add, indent, debug)
    else:
        add(debug(v).replace("\n", "\n" + inner) if indent else debug(v))


def _block(items: list[tuple[str | None, Any]], open_: str, close: str, add: Callable[[str], None],
           indent: str, debug: Callable[[Any], str]) -> None:
    if not items:
        add(open_.rstrip() + close)
        return
    inner = indent + "    "
    add(open_ + "\n")
    for key, x in items:
        add(inner + ("" if key is None else f"{key}: "))
        _pretty_into(x, add, inner, debug)
        add(",\n")
    add(indent + close)
