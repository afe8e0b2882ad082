"""Integer clones keep Rune's semantics: results, errors, limits and traces are those of the
generic code, whichever version a call reaches."""

from __future__ import annotations

import re
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneBudgetExceeded, RuneError, RuneRuntimeError, compile_source
from toolmesh.plugins.rune.lang.codegen import CodeGen
from toolmesh.plugins.rune.lang.specialize import Clone

FIB = "fn fib(n) { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }"
MUTUAL = """
fn a(n) { if n < 1 { 0 } else { b(n - 1) + 1 } }
fn b(n) { if n < 1 { 0 } else { a(n - 1) * 2 } }
"""
STRING_ON_ONE_SIDE = """
fn a(n) { if n < 1 { 0 } else { b(n - 1) + 1 } }
fn b(n) { if n < 1 { "x" } else { a(n - 1) } }
"""


def _clone(source: str, name: str) -> Clone | None:
    unit = compile_source(source, "clone.rn")
    unit.compile_all()
    codegen: CodeGen = unit.codegen
    return codegen.clones.get(codegen.declared[id(unit.lookup(name))].pyname)


@pytest.mark.parametrize(
    ("source", "fn", "args", "expected"),
    [
        (FIB + " fn main() { fib(20) }", "main", (), 6765),
        (FIB, "fib", (20,), 6765),  # from the host: the generic code dispatches to the clone
        (FIB, "fib", (2.0,), None),  # floats: `n < 2` compares f64 with i64 and fails below
        ("fn sq(x) { x * x }", "sq", (1.5,), 2.25),
        ("fn sq(x) { x * x }", "sq", (-3,), 9),
        (MUTUAL + " fn main() { a(5) }", "main", (), 7),
        (
            "fn half(n) { if n < 1 { 1.0 } else { half(n - 1) / 2.0 } } fn main() { half(3) }",
            "main",
            (),
            0.125,
        ),
        ("fn f(n) { let n = `${n}`; n } fn main() { f(4) }", "main", (), "4"),
        ("fn f(n) { n = n + 1; n } fn main() { f(4) }", "main", (), 5),
        ("fn f(n) { let g = |x| x * 10; g(n) + 1 } fn main() { f(4) }", "main", (), 41),
        (
            'fn f(n, s) { if n < 1 { s } else { f(n - 1, s + "!") } } fn main() { f(2, "a") }',
            "main",
            (),
            "a!!",
        ),
    ],
)
def test_results_match_the_generic_semantics(
    source: str, fn: str, args: tuple[Any, ...], expected: Any
) -> None:
    unit = compile_source(source, "clone.rn")
    if expected is None:
        with pytest.raises(RuneRuntimeError, match="cannot compare"):
            unit.call(fn, *args)
    else:
        assert unit.call(fn, *args) == expected


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("fn p(n) { if n == 0 { 1 } else { 2 * p(n - 1) } } fn main() { p(63) }", "integer overflow"),
        (FIB.replace("n - 2", "n - 2.0") + " fn main() { fib(5) }", "`i64 - f64`"),
        ("fn f(n) { if n < 1 { 1.0 } else { f(n - 1) + 1 } } fn main() { f(2) }", "`f64 + i64`"),
        (STRING_ON_ONE_SIDE + " fn main() { a(1) }", "`String + i64`"),
    ],
)
def test_errors_still_raise_in_clones(source: str, fragment: str) -> None:
    with pytest.raises(RuneError, match=re.escape(fragment)):
        compile_source(source, "clone.rn").call("main")


def test_power_of_two_below_the_limit_is_exact() -> None:
    unit = compile_source("fn p(n) { if n == 0 { 1 } else { 2 * p(n - 1) } }")
    assert unit.call("p", 62) == 2**62


@pytest.mark.parametrize(
    ("source", "name", "returns"),
    [
        (FIB, "fib", int),
        (MUTUAL, "a", int),
        (MUTUAL, "b", int),
        ("fn half(n) { if n < 1 { 1.0 } else { half(n - 1) / 2.0 } }", "half", float),
        # A string on one side: neither function's result is typed.
        (STRING_ON_ONE_SIDE, "b", None),
        ("fn f(n) { if n < 1 { return 0; } f(n - 1)? }", "f", None),  # `?` may return early
        ("fn f(n) { if n > 0 { n } }", "f", None),  # unit when n <= 0
        ('fn f(n) { if n > 0 { return n; } panic!("no") }', "f", int),
    ],
)
def test_inferred_return_types(source: str, name: str, returns: type | None) -> None:
    clone = _clone(source, name)
    assert clone is not None
    assert clone.returns is returns


@pytest.mark.parametrize(
    "source",
    [
        "fn f(n) { n = n + 1; n }",  # assigned
        "fn f(n) { let n = 2; n * 2 }",  # rebound
        "fn f(v) { v.len() }",  # not a numeric operand
        "fn f(n) { for x in 0..n { yield x; } }",  # a generator
    ],
)
def test_functions_without_a_clone(source: str) -> None:
    assert _clone(source, "f") is None


def test_budget_and_depth_limits_hold_inside_clones() -> None:
    exponential = compile_source(
        "fn f(n) { if n < 1 { 0 } else { f(n - 1) + f(n - 1) } } fn main() { f(60) }"
    )
    with pytest.raises(RuneBudgetExceeded):
        exponential.call("main", budget=10_000)
    deep = compile_source("fn f(n) { if n == 0 { 0 } else { 1 + f(n - 1) } }")
    assert deep.call("f", 100, max_depth=200) == 100
    with pytest.raises(RuneError, match="recursion limit"):
        deep.call("f", 300, max_depth=200)


def test_panic_trace_names_the_rune_function() -> None:
    unit = compile_source('fn f(n) { if n == 0 { panic!("boom") } f(n - 1) } fn main() { f(2) }', "t.rn")
    with pytest.raises(RuneRuntimeError) as info:
        unit.call("main")
    assert [frame.function for frame in info.value.trace] == ["f", "f", "f", "main"]
