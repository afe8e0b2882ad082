"""Checks the code generator proves unnecessary -- i64 range checks of locals with known bounds,
index tests of vectors, type tests inside float regions -- must give the same results and the
same Rune errors as the checked code, and every loop iteration still takes a budget tick."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneBudgetExceeded, RuneRuntimeError, compile_source

PRIMES = """
const MAX = 10_000;
fn main() {
    let mask = [];
    mask.resize(MAX, true);
    mask[0] = false;
    mask[1] = false;
    let found = 0;
    for p in 2..MAX {
        if mask[p] {
            found += 1;
            let i = 2 * p;
            while i < MAX {
                mask[i] = false;
                i += p;
            }
        }
    }
    found
}
"""

ADVANCE = """
fn advance(bodies, dt) {
    for i in 0..bodies.len() {
        let bi = bodies[i];
        let bix = bi.x;
        let biv = bi.v;
        let bim = bi.m;
        for j in i + 1..bodies.len() {
            let bj = bodies[j];
            let d = bix - bj.x;
            let mag = (d * d + 0.01).sqrt();
            mag = dt / (mag * mag * mag);
            biv = biv - d * bj.m * mag;
            bj.v = bj.v + d * bim * mag;
        }
        bi.v = biv;
        bi.x = bix + dt * biv;
    }
}
fn main(bodies, steps) {
    for s in 0..steps {
        advance(bodies, 0.01);
    }
    bodies
}
"""


def _advance(bodies: list[dict[str, Any]], dt: float) -> None:
    for i, bi in enumerate(bodies):
        bix, biv, bim = bi["x"], bi["v"], bi["m"]
        for bj in bodies[i + 1 :]:
            d = bix - bj["x"]
            mag = math.sqrt(d * d + 0.01)
            mag = dt / (mag * mag * mag)
            biv = biv - d * bj["m"] * mag
            bj["v"] = bj["v"] + d * bim * mag
        bi["v"] = biv
        bi["x"] = bix + dt * biv


def _bodies() -> list[dict[str, Any]]:
    return [{"x": float(k), "v": 0.5 - k / 4, "m": 1.0 + k} for k in range(4)]


def _run(src: str, *args: Any, budget: int = 10**7) -> Any:
    return compile_source(src, "ops.rn").call("main", *args, budget=budget)


def test_primes() -> None:
    assert _run(PRIMES) == 1229


def test_float_regions_compute_like_python() -> None:
    expected = _bodies()
    for _ in range(50):
        _advance(expected, 0.01)
    assert _run(ADVANCE, _bodies(), 50) == expected


RESULTS = [
    (
        "monotone index",
        "fn main() { let v = [0, 0, 0, 0, 0]; let i = 1; while i < 5 { v[i] = i; i += 2; } v }",
        [0, 1, 0, 3, 0],
    ),
    (
        "decreasing index",
        "fn main() { let v = [1, 2, 3]; let i = 2; let s = 0; while i >= 0 { s += v[i]; i -= 1; } s }",
        6,
    ),
    (
        "index from range",
        "fn main() { let v = [4, 5, 6]; let s = 0; for i in 0..v.len() { s += v[i] * (i + 1); } s }",
        32,
    ),
    ("inclusive range", "fn main() { let s = 0; for i in 1..=4 { s += i; } s }", 10),
    ("range end from a parameter", "fn main(n) { let s = 0; for i in 0..n { s += i; } s }", 6),
    (
        "bounds after a branch",
        "fn f(c) { let i = 0; if c { i = 2; } let v = [7, 8, 9]; v[i] } fn main() { f(true) + f(false) }",
        16,
    ),
    (
        "shadowed step",
        "fn main() { let i = 0; let p = 1; let n = 0; while i < 3 { let p = 2; i += p; n += 1; } n }",
        2,
    ),
    ("store then read", "fn main() { let o = #{x: 1.5}; o.x = o.x * 2.0; let y = o.x + 1.0 * 2.0; y }", 5.0),
    (
        "aliased objects",
        "fn f(a, b, k) { a.x = 5.0 * k; let y = b.x * 2.0; y } fn main() { let o = #{x: 1.0}; f(o, o, 2.0) }",
        20.0,
    ),
    (
        "struct fields",
        "struct P { x, y } fn main() { let p = P { x: 1.5, y: 2.5 }; p.x * p.x + p.y * 2.0 }",
        7.25,
    ),
    ("integer fields", "fn main() { let o = #{x: 3, y: 4}; let d = o.x * o.x + o.y * o.y; d }", 25),
    (
        "shadowed before a region",
        "fn g() {} fn main() { let x = 1.5; g(); let x = x * 2.0 + 1.0; let y = x * x; y }",
        16.0,
    ),
    (
        "field reads",
        "fn main() { let o = #{x: 1, y: [2]}; let a = o.x; let b = o.y; let o = b; [a, o] }",
        [1, [2]],
    ),
]


@pytest.mark.parametrize(("name", "src", "expected"), RESULTS, ids=[r[0] for r in RESULTS])
def test_results(name: str, src: str, expected: Any) -> None:
    args = (4,) if "main(n)" in src else ()
    assert _run(src, *args) == expected


def test_float_division_by_zero_in_a_region() -> None:
    inf, nan = _run("fn main() { let a = 1.0; let b = 0.0; [a * 2.0 / (b * 3.0), b * 1.0 / (b * 2.0)] }")
    assert inf == math.inf and math.isnan(nan)


ERRORS = [
    # i64 overflow still raises where the bounds do not prove it away
    (
        "overflow in a monotone loop",
        "fn main() { let i = 9223372036854775800; while i > 0 { i += 5; } i }",
        "integer overflow in `+`",
    ),
    (
        "overflow of a doubled local",
        "fn main() { let i = 4611686018427387904; while i < 9223372036854775807 { i += i; } i }",
        "integer overflow in `+`",
    ),
    (
        "overflow of the start",
        "fn main() { let v = [true]; let p = 4611686018427387904; let i = 2 * p; while i < 10 { v[i] = false; i += p; } }",
        "integer overflow in `*`",
    ),
    # negative and out-of-range indexes raise Rune's errors (Python would wrap or raise IndexError)
    (
        "negative store",
        "fn main() { let v = [1, 2, 3]; let i = 2; while i > -5 { v[i] = 0; i -= 1; } }",
        "index -1 out of bounds for length 3",
    ),
    (
        "negative read",
        "fn main() { let v = [1, 2, 3]; let i = 2; let s = 0; while i > -5 { s += v[i]; i -= 1; } }",
        "index -1 out of bounds for length 3",
    ),
    (
        "negative after a branch",
        "fn f(c) { let v = [1, 2]; let i = 0; if c { i = -1; } v[i] } fn main() { f(true) }",
        "index -1 out of bounds for length 2",
    ),
    (
        "negative at the next iteration",
        "fn main() { let v = [1, 2]; let i = 0; let s = 0; for k in 0..3 { s += v[i]; i = i - 1; } }",
        "index -1 out of bounds for length 2",
    ),
    (
        "store past the end",
        "fn main() { let m = []; m.resize(5, true); let i = 2; while i < 10 { m[i] = false; i += 2; } }",
        "index 6 out of bounds for length 5",
    ),
    (
        "read past the end",
        "fn main() { let m = []; m.resize(5, true); let n = 0; for p in 0..10 { if m[p] { n += 1; } } }",
        "index 5 out of bounds for length 5",
    ),
    (
        "bound by a captured local named like a constant",
        (
            "const N = 0; fn main() { let N = -5; let v = [1, 2, 3];"
            " let c = || { let i = 2; let s = 0; while i > N { s += v[i]; i -= 1; } s }; c() }"
        ),
        "index -1 out of bounds for length 3",
    ),
    # indexing something that is not a vector
    (
        "index an object",
        "fn f(v) { let s = 0; for i in 0..2 { s += v[i]; } s } fn main() { f(#{}) }",
        "missing key 0 in object",
    ),
    (
        "index a string",
        'fn f(v) { let s = 0; for i in 0..2 { s += v[i]; } s } fn main() { f("ab") }',
        "cannot index `String` with `i64`",
    ),
    (
        "store into an object",
        "fn f(v) { for i in 0..2 { v[i] = 1; } } fn main() { f(#{}) }",
        "cannot assign into `Object` with `i64` index",
    ),
    # int and float never mix, in or out of float regions
    (
        "int field in a region",
        "fn main() { let b = #{x: 1.0, y: 2}; let dx = b.x * 2.0; let dy = b.y * 2.0; dx + dy }",
        "`i64 * f64`",
    ),
    (
        "int field in a loop",
        "fn main() { let v = [#{x: 1.0}, #{x: 2}]; let a = 0.0; for o in v { a = a + o.x * 2.0; a = a * 1.5; } }",
        "`i64 * f64`",
    ),
    (
        "int argument",
        "fn f(b, k) { let d = b.x * k; let e = d * d + 1.0; e } fn main() { f(#{x: 1.0}, 2) }",
        "`f64 * i64`",
    ),
    (
        "carried local becomes int",
        "fn main() { let a = 0.0; for i in 0..3 { a = a * 2.0 + 1.0; if i == 1 { a = 5; } } }",
        "`i64 * f64`",
    ),
    (
        "int shadowed before a region",
        "fn g() {} fn f(k) { let x = k; g(); let x = x * 2.0 + 1.0; x } fn main() { f(2) }",
        "`i64 * f64`",
    ),
    (
        "missing field in a group",
        "fn main() { let o = #{x: 1.0}; let a = o.x; let b = o.y; a }",
        "missing field `y` in object",
    ),
    (
        "field of a non-object in a group",
        "fn f(o) { let a = o.x; let b = o.y; a } fn main() { f(5) }",
        "`i64` has no field `x`",
    ),
    (
        "missing field in a region",
        "fn main() { let b = #{x: 1.0}; let z = b.x * 2.0 + b.y * 3.0; z }",
        "missing field `y` in object",
    ),
]


@pytest.mark.parametrize(("name", "src", "fragment"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name: str, src: str, fragment: str) -> None:
    with pytest.raises(RuneRuntimeError, match=re.escape(fragment)):
        _run(src)


@pytest.mark.parametrize(
    "src",
    [
        "fn main() { let a = 1.0; loop { a = a * 1.5 + 0.5; } }",
        "fn main() { let i = 0; let v = [0]; while i < 10 { v[i] = 1; i += 0; } }",
        "fn main() { let o = #{x: 1.0}; for i in 0.. { o.x = o.x * 0.5 + 1.0; } }",
    ],
)
def test_budget_still_stops_loops(src: str) -> None:
    with pytest.raises(RuneBudgetExceeded):
        _run(src, budget=10_000)


def test_primes_inner_loop_is_unchecked(generated: Callable[[str], str]) -> None:
    code = generated(PRIMES)
    inner = code[code.index("for _ in _s:") :]
    inner = inner[: inner.index("else:\n")]
    assert "_overflow" not in inner and "len(" not in inner  # `i` is in 4..9999 there
    assert "_set_index" in inner  # out-of-range stores still raise Rune's error
    assert "_overflow('+')" in code  # the unbounded counter is still checked


def test_float_region_keeps_the_checked_version(generated: Callable[[str], str]) -> None:
    code = generated(ADVANCE)
    assert "_sub(" in code and "_mul(" in code  # the general version of the region
    assert "compress(" in code  # for loops still take one tick per item
    assert code.count("is float") >= 3
