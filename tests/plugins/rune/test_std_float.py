"""f64 methods follow IEEE 754 as Rust does: NaN for a domain error, infinity for an overflow,
halfway cases rounded away from zero, `as i64` saturating."""

from __future__ import annotations

import math

import pytest
from toolmesh.plugins.rune.lang import compile_source

INF, NAN = math.inf, math.nan


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("(-1.0).sqrt()", NAN),
        ("(9.0).sqrt()", 3.0),
        ("(-0.0).sqrt()", -0.0),
        ("(2.5).round()", 3.0),
        ("(-2.5).round()", -3.0),
        ("(0.49999999999999994).round()", 0.0),
        ("(-0.4).round()", -0.0),
        ("(2.7).floor()", 2.0),
        ("(-2.2).ceil()", -2.0),
        ("(1.0 / 0.0).floor()", INF),
        ("(0.0 / 0.0).trunc()", NAN),
        ("(0.0).ln()", -INF),
        ("(-1.0).ln()", NAN),
        ("(2.0).powf(2000.0)", INF),
        ("(-2.0).powf(2001.0)", -INF),
        ("(-8.0).powf(1.0 / 3.0)", NAN),
        ("(0.0).powf(-1.0)", INF),
        ("(-0.0).powf(-1.0)", -INF),
        ("(2.0).powi(3)", 8.0),
        ("(1000.0).exp()", INF),
        ("(1.0 / 0.0).sin()", NAN),
        ("(0.0 / 0.0).min(1.0)", 1.0),
        ("(1.0).max(0.0 / 0.0)", 1.0),
        ("(0.0 / 0.0).to_integer()", 0),
        ("(1e30).to_integer()", 2**63 - 1),
        ("(-1e30).to_integer()", -(2**63)),
        ("(-2.9).to_integer()", -2),
    ],
)
def test_float_methods(expr: str, expected: float) -> None:
    value = compile_source(f"fn main() {{ {expr} }}", "f.rn").call("main")
    assert type(value) is type(expected)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == expected
        assert math.copysign(1.0, value) == math.copysign(1.0, expected)


@pytest.mark.parametrize("arg", [-4.0, NAN, 16.0])
def test_inline_sqrt_of_an_unknown_value(arg: float) -> None:
    """`x.sqrt()` on a parameter takes the inline path (guarded by `x >= 0.0`)."""
    value = compile_source("fn f(x) { x.sqrt() }", "f.rn").call("f", arg)
    assert value == 4.0 if arg == 16.0 else math.isnan(value)
