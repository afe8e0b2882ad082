"""The rest of ``std::i64`` / ``std::f64``: checked, wrapping and saturating integer arithmetic,
the float math functions, ``std::f64::consts``, and ``parse::<T>()`` / ``to::<T>()`` for each ``T``."""

from __future__ import annotations

import math
import sys
from typing import Any

from .errors import RunePanic, RuneRuntimeError
from .runtime import I64_MAX, I64_MIN
from .std_float import to_integer
from .std_u64 import parse_u64
from .values import NONE, Char, Option, Result, some

_WRAP = 2**64


def _wrap(v: int) -> int:
    return ((v + 2**63) % _WRAP) - 2**63


def _saturate(v: int) -> int:
    return I64_MAX if v > I64_MAX else max(v, I64_MIN)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _trunc_rem(a: int, b: int) -> int:
    return a - b * _trunc_div(a, b)


def _nonzero(b: int, op: str) -> None:
    if b == 0:
        raise RunePanic(f"attempt to {op} with a divisor of zero")


def _int_rem_euclid(a: int, b: int) -> int:
    _nonzero(b, "calculate the remainder")
    return a % abs(b)


def _int_div_euclid(a: int, b: int) -> int:
    _nonzero(b, "divide")
    return _saturate((a - a % abs(b)) // b)


def _checked_rem(a: int, b: int) -> Option:
    if b == 0 or (a == I64_MIN and b == -1):
        return NONE
    return some(_trunc_rem(a, b))


def _wrapping_div(a: int, b: int) -> int:
    _nonzero(b, "divide")
    return _wrap(_trunc_div(a, b))


def _wrapping_rem(a: int, b: int) -> int:
    _nonzero(b, "calculate the remainder")
    return 0 if b == -1 else _trunc_rem(a, b)


def _saturating_pow(a: int, exp: int) -> int:
    if exp < 0:
        raise RuneRuntimeError(f"negative exponent {exp} in `saturating_pow`")
    if abs(a) >= 2 and exp > 64:
        return I64_MAX if a > 0 or exp % 2 == 0 else I64_MIN
    return _saturate(a**exp)


INT_METHODS: dict[str, Any] = {
    "checked_rem": _checked_rem,
    "wrapping_div": _wrapping_div,
    "wrapping_rem": _wrapping_rem,
    "wrapping_neg": lambda a: _wrap(-a),
    "saturating_mul": lambda a, b: _saturate(a * b),
    "saturating_pow": _saturating_pow,
    "saturating_abs": lambda a: _saturate(abs(a)),
    "to::f64": float,
    "to::i64": lambda a: a,
    "rem_euclid": _int_rem_euclid,
    "div_euclid": _int_div_euclid,
}


def _clamp(f: float, lo: float, hi: float) -> float:
    if not lo <= hi:
        raise RunePanic(f"min > max, or either was NaN. min = {lo!r}, max = {hi!r}")
    return lo if f < lo else min(f, hi)


def _log(f: float, base: float) -> float:
    try:
        return math.log(f, base)
    except (ValueError, ZeroDivisionError):
        if f == 0.0:
            return -math.inf
        return math.nan


def _guarded(fn: Any) -> Any:
    def method(*args: float) -> float:
        try:
            return fn(*args)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.inf

    return method


def _log_of(fn: Any) -> Any:
    def method(f: float) -> float:
        if f > 0.0:
            return fn(f)
        return -math.inf if f == 0.0 else math.nan

    return method


def _div_euclid(a: float, b: float) -> float:
    q = math.trunc(a / b) if math.isfinite(a / b) else a / b
    if math.isfinite(q) and math.fmod(a, b) < 0.0:
        return float(q - 1) if b > 0.0 else float(q + 1)
    return float(q)


def _rem_euclid(a: float, b: float) -> float:
    r = math.fmod(a, b)
    return r + abs(b) if r < 0.0 else r


def _is_normal(f: float) -> bool:
    return math.isfinite(f) and abs(f) >= sys.float_info.min


FLOAT_METHODS: dict[str, Any] = {
    "asin": _guarded(math.asin),
    "acos": _guarded(math.acos),
    "atan": math.atan,
    "atan2": math.atan2,
    "sinh": _guarded(math.sinh),
    "cosh": _guarded(math.cosh),
    "tanh": math.tanh,
    "cbrt": lambda f: math.copysign(abs(f) ** (1.0 / 3.0), f) if math.isfinite(f) else f,
    "exp2": _guarded(lambda f: 2.0**f),
    "log": _log,
    "log2": _log_of(math.log2),
    "log10": _log_of(math.log10),
    "clamp": _clamp,
    "div_euclid": _div_euclid,
    "rem_euclid": _rem_euclid,
    "to_degrees": math.degrees,
    "to_radians": math.radians,
    "signum": lambda f: f if math.isnan(f) else math.copysign(1.0, f),
    "is_sign_positive": lambda f: math.copysign(1.0, f) > 0,
    "is_sign_negative": lambda f: math.copysign(1.0, f) < 0,
    "is_normal": _is_normal,
    "is_subnormal": lambda f: f != 0.0 and math.isfinite(f) and abs(f) < sys.float_info.min,
    "hypot": math.hypot,
    "mul_add": lambda a, b, c: a * b + c,
    "recip": lambda f: 1.0 / f if f != 0.0 else math.copysign(math.inf, f),
    "fract": lambda f: f - math.trunc(f) if math.isfinite(f) else math.nan,
    "to::i64": to_integer,
    "to::f64": lambda f: f,
}

F64_CONSTS: dict[str, float] = {
    "E": math.e,
    "FRAC_1_PI": 1 / math.pi,
    "FRAC_1_SQRT_2": 1 / math.sqrt(2),
    "FRAC_2_PI": 2 / math.pi,
    "FRAC_2_SQRT_PI": 2 / math.sqrt(math.pi),
    "FRAC_PI_2": math.pi / 2,
    "FRAC_PI_3": math.pi / 3,
    "FRAC_PI_4": math.pi / 4,
    "FRAC_PI_6": math.pi / 6,
    "FRAC_PI_8": math.pi / 8,
    "LN_10": math.log(10),
    "LN_2": math.log(2),
    "LOG10_E": math.log10(math.e),
    "LOG2_E": math.log2(math.e),
    "LOG10_2": math.log10(2),
    "LOG2_10": math.log2(10),
    "PI": math.pi,
    "SQRT_2": math.sqrt(2),
    "TAU": math.tau,
}
F64_EXTRA: dict[str, float] = {"MIN_POSITIVE": sys.float_info.min}


# --- parse::<T>() ------------------------------------------------------------------------


def parse_int(s: str, lo: int = I64_MIN, hi: int = I64_MAX) -> Result:
    """Rust's integer ``from_str``: an optional sign and ASCII digits, nothing else."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not s:
        return Result(False, "cannot parse integer from empty string")
    if not body or not body.isascii() or not body.isdigit():
        return Result(False, "invalid digit found in string")
    v = int(s)
    if v > hi:
        return Result(False, "number too large to fit in target type")
    if v < lo:
        too_small = "number too small to fit in target type"
        return Result(False, too_small if lo else "invalid digit found in string")
    return Result(True, v)


def parse_float(s: str) -> Result:
    """Rust's ``f64::from_str``: decimal or exponent notation, ``inf``, ``NaN``; no spaces or ``_``."""
    if s != s.strip() or "_" in s or not s or s.lower().lstrip("+-") in ("infinite", "nan(0)"):
        return Result(False, "invalid float literal")
    try:
        return Result(True, float(s))
    except ValueError:
        return Result(False, "invalid float literal")


def parse_char(s: str) -> Result:
    if not s:
        return Result(False, "cannot parse char from empty string")
    if len(s) > 1:
        return Result(False, "too many characters in string")
    return Result(True, Char(s))


def parse_bool(s: str) -> Result:
    if s in ("true", "false"):
        return Result(True, s == "true")
    return Result(False, "provided string was not `true` or `false`")


STRING_PARSERS: dict[str, Any] = {
    "parse": parse_int,
    "parse::i64": parse_int,
    "parse::u64": parse_u64,
    "parse::f64": parse_float,
    "parse::char": parse_char,
    "parse::bool": parse_bool,
    "parse::String": lambda s: Result(True, s),
}


def turbofish_missing(type_name: str, name: str) -> RuneRuntimeError:
    method, _, target = name.partition("::")
    return RuneRuntimeError(f"`{method}::<{target}>` is not available on `{type_name}`")


