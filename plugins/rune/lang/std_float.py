"""Methods of ``f64``. Rust's float methods never fail: a domain error gives NaN and an
overflow an infinity (IEEE 754), where Python's ``math`` raises or returns a complex number."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .formatting import display
from .runtime import I64_MAX, I64_MIN

_NAN, _INF = math.nan, math.inf


def sqrt(f: float) -> float:
    return math.sqrt(f) if f >= 0.0 else _NAN  # NaN fails the test too


def ln(f: float) -> float:
    if f > 0.0:
        return math.log(f)
    return -_INF if f == 0.0 else _NAN


def _integral(fn: Callable[[float], int]) -> Callable[[float], float]:
    """``floor``/``ceil``/``trunc`` returning a float; infinities and NaN come back unchanged."""
    return lambda f: float(fn(f)) if math.isfinite(f) else f


def round_half_away(f: float) -> float:
    """Rust's ``round``: halfway cases away from zero (Python's ``round`` goes to even)."""
    if not math.isfinite(f):
        return f
    t = math.trunc(f)
    if abs(f - t) >= 0.5:  # exact: ``f - trunc(f)`` has no rounding error
        t += 1 if f > 0 else -1
    return math.copysign(float(t), f)


def powf(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return -_INF if a < 0 and _odd(b) else _INF
    except ValueError:  # 0 to a negative power (a pole), or a negative base to a fraction
        if a == 0.0:
            return math.copysign(_INF, a) if _odd(b) else _INF
        return _NAN


def _odd(b: float) -> bool:
    return math.isfinite(b) and b == math.floor(b) and math.fmod(b, 2.0) != 0.0


def _unary(fn: Callable[[float], float], overflow: float = _INF) -> Callable[[float], float]:
    """``fn`` with Python's errors mapped to the IEEE results: ValueError is NaN."""

    def method(f: float) -> float:
        try:
            return fn(f)
        except ValueError:
            return _NAN
        except OverflowError:
            return overflow

    return method


def to_integer(f: float) -> int:
    """``f as i64``: truncates, saturates at the i64 limits, NaN gives 0."""
    if math.isnan(f):
        return 0
    if f >= 2.0**63:
        return I64_MAX
    return I64_MIN if f < -(2.0**63) else int(f)


def _min(a: float, b: float) -> float:
    return b if math.isnan(a) else a if math.isnan(b) or a <= b else b  # NaN is ignored


def _max(a: float, b: float) -> float:
    return b if math.isnan(a) else a if math.isnan(b) or a >= b else b


FLOAT: dict[str, Any] = {
    "abs": abs,
    "sqrt": sqrt,
    "floor": _integral(math.floor),
    "ceil": _integral(math.ceil),
    "trunc": _integral(math.trunc),
    "round": round_half_away,
    "powf": powf,
    "powi": lambda a, n: powf(a, float(n)),
    "min": _min,
    "max": _max,
    "to_string": display,
    "is_nan": math.isnan,
    "is_infinite": math.isinf,
    "is_finite": math.isfinite,
    "sin": _unary(math.sin),
    "cos": _unary(math.cos),
    "tan": _unary(math.tan),
    "ln": ln,
    "exp": _unary(math.exp),
    "to_integer": to_integer,
    "clone": lambda f: f,
}
