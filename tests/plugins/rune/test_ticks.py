"""Budget ticks: functions whose paths cannot call or loop take no tick there, and the budget
still stops every unbounded run, however the function is reached."""

from __future__ import annotations

import pytest
from toolmesh.plugins.rune.lang import RuneBudgetExceeded, compile_source
from toolmesh.plugins.rune.lang import nodes as n
from toolmesh.plugins.rune.lang.parser import parse
from toolmesh.plugins.rune.lang.ticks import ticks_at_entry


@pytest.mark.parametrize(
    ("fn", "at_entry"),
    [
        ("fn f(x) { x * x }", False),  # cannot call or loop
        ("fn f(n) { if n < 2 { n } else { f(n - 1) + f(n - 2) } }", False),  # base case is plain
        ("fn f(n) { if n < 2 { g(n) } else if n < 5 { 1 } else { g(n) } }", False),
        ("fn f(n) { let m = n * 2; if m < 2 { m } else { f(m) } }", False),
        ("fn f(n) { if g(n) { 1 } else { f(n) } }", True),  # the condition calls
        ("fn f(n) { if n < 2 { g(n) } else { f(n) } }", True),  # no plain branch
        ("fn f(n) { let m = g(n); if m < 2 { m } else { f(m) } }", True),  # a statement calls
        ("fn f(n) { while n > 0 { n -= 1; } n }", True),
        ('fn f(n) { println!("{}", n); n }', True),
        ("fn f(n) { let c = || n; 1 }", True),
    ],
)
def test_where_a_function_ticks(fn: str, at_entry: bool) -> None:
    (decl,) = parse(fn).items
    assert isinstance(decl, n.FnDecl)
    assert ticks_at_entry(decl.body) is at_entry


SQ = "fn sq(x) { x * x } "
EXP = "fn f(n) { if n < 1 { 0 } else { f(n - 1) + f(n - 1) } } "


@pytest.mark.parametrize(
    "source",
    [
        SQ + "fn main() { (0..1000000000).iter().map(sq).count() }",  # host code drives the calls
        SQ + "fn main() { let g = sq; let s = 0; loop { s += g(2); } }",  # through a value
        SQ + "fn main() { let s = 0; loop { s = sq(2); } }",  # direct calls in a loop
        EXP + "fn main() { f(60) }",  # exponential recursion ticks in its recursive branch
        EXP + "fn main() { let v = [60]; v.iter().map(f).count() }",
    ],
)
def test_budget_stops_unbounded_runs(source: str) -> None:
    with pytest.raises(RuneBudgetExceeded):
        compile_source(source, "ticks.rn").call("main", budget=10_000)


def test_plain_functions_give_the_same_results() -> None:
    unit = compile_source(SQ + "fn main() { let s = 0; for i in 0..10 { s += sq(i); } s }", "ticks.rn")
    assert unit.call("main") == sum(i * i for i in range(10))
    assert unit.call("sq", 7) == 49
    assert unit.call("sq", 1.5) == 2.25
