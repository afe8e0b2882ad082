"""Budgets and caps stop hostile scripts with Rune errors, never Python crashes."""

import pytest
from toolmesh.plugins.rune.lang import (
    RuneBudgetExceeded,
    RuneError,
    RuneLimitError,
    RuneRuntimeError,
    compile_source,
)
from toolmesh.plugins.rune.lang.limits import STATE


def test_infinite_loop_hits_budget() -> None:
    unit = compile_source("fn main() { loop { } }", "l.rn")
    with pytest.raises(RuneBudgetExceeded) as info:
        unit.call("main", budget=10_000)
    assert isinstance(info.value, TimeoutError)
    assert "timeout" in str(info.value)


def test_infinite_recursion_via_calls_hits_budget_or_depth() -> None:
    unit = compile_source("fn f(n) { f(n + 1) } fn main() { f(0) }")
    with pytest.raises(RuneLimitError, match="recursion limit"):
        unit.call("main")


def test_deep_recursion_limit_is_configurable() -> None:
    unit = compile_source("fn f(n) { if n == 0 { 0 } else { 1 + f(n - 1) } }")
    assert unit.call("f", 100, max_depth=200) == 100
    with pytest.raises(RuneLimitError):
        unit.call("f", 300, max_depth=200)


def test_budget_is_reset_between_calls() -> None:
    unit = compile_source("fn main() { let i = 0; while i < 500 { i += 1; } i }")
    for _ in range(3):
        assert unit.call("main", budget=1_000) == 500


@pytest.mark.parametrize(
    "src",
    [
        'fn main() { "x".repeat(100000000) }',
        'fn main() { let s = "xxxxxxxxxx"; loop { s = s + s; } }',
        "fn main() { let v = []; v.resize(100000000, 0); v.len() }",
    ],
)
def test_memory_heavy_growth_is_capped(src: str) -> None:
    with pytest.raises(RuneLimitError):
        compile_source(src).call("main")


@pytest.mark.parametrize(
    "src",
    [
        "fn main() { __import__ }",
        "fn main() { open }",
        'fn main() { "".__class__ }',
        "fn main() { [].__class__.__bases__ }",
        'fn main() { eval("1") }',
    ],
)
def test_no_python_escape(src: str) -> None:
    with pytest.raises(RuneError):
        compile_source(src).call("main")


def test_host_module_is_the_only_door() -> None:
    unit = compile_source("fn main() { host::double(21) }", modules={"host": {"double": lambda x: x * 2}})
    assert unit.call("main") == 42
    with pytest.raises(RuneRuntimeError, match="missing item"):
        compile_source("fn main() { host::double(1) }").call("main")


@pytest.mark.parametrize(
    "src",
    [
        "fn main() { (0..).iter().count() }",
        "fn main() { (0..).iter().map(|x| x).sum() }",
        "fn main() { (5..).iter().filter(|x| false).collect::<Vec>() }",
    ],
)
def test_endless_iterator_hits_budget(src: str) -> None:
    with pytest.raises(RuneBudgetExceeded):
        compile_source(src).call("main", budget=100_000)


def test_endless_iterator_can_still_be_taken() -> None:
    unit = compile_source("fn main() { (3..).iter().take(4).collect::<Vec>() }")
    assert unit.call("main", budget=100) == [3, 4, 5, 6]


def test_collect_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(STATE, "max_length", 1000)  # the real cap, scaled down for the test
    with pytest.raises(RuneLimitError, match="exceeds the limit of 1000"):
        compile_source("fn main() { (0..).iter().collect::<Vec>() }").call("main", budget=10**9)


def test_runs_never_change_the_process_recursion_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The depth limit is scoped to the run: other threads keep the process's limit while scripts run."""
    import sys

    def refuse(limit: int) -> None:
        raise AssertionError(f"a run set the process's recursion limit to {limit}")

    monkeypatch.setattr(sys, "setrecursionlimit", refuse)
    unit = compile_source("fn f(n) { if n == 0 { 0 } else { 1 + f(n - 1) } }", "deep.rn")
    assert unit.call("f", 150, max_depth=200) == 150
    assert unit.call("f", 800) == 800
    with pytest.raises(RuneLimitError, match="recursion limit of 900 calls"):
        unit.call("f", 5000)


def test_a_run_stops_at_its_deadline() -> None:
    import time

    unit = compile_source("fn main() { let i = 0; loop { i = (i + 1) % 7; } }", "spin.rn")
    started = time.monotonic()
    with pytest.raises(RuneBudgetExceeded, match="deadline passed"):
        unit.call("main", budget=10**12, deadline=started + 0.2)
    assert time.monotonic() - started < 10  # a safety bound: the budget alone would take hours


BIG = 'let s = "x".repeat(6000000);'


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (f"{BIG} s + s", "string of 12000000"),
        (f'{BIG} format!("{{}}{{}}", s, s)', "formatted string of 12000000"),
        (f'{BIG} format!("{{:?}}", [s, s])', "formatted string of 1"),
        (f"{BIG} `${{s}}-${{s}}`", "formatted string of 12000001"),
        (f'{BIG} s.replace("x", "xy")', "string of 12000000"),
        (f"{BIG} s.push_str(s); s", "string of 12000000"),
        (f"{BIG} s.insert_str(0, s); s", "string of 12000000"),
        (f'{BIG} [s, s].join("")', "joined string of 1"),
        ('format!("{:>20000000}", 1)', "padded string of 20000000"),
        ("let v = []; v.resize(20000000, 0); v", "vector of 20000000"),
        ("let v = []; v.extend(0..); v", "vector of 1"),
    ],
)
def test_every_path_checks_the_size_before_building(body: str, what: str) -> None:
    with pytest.raises(RuneLimitError, match=f"{what}\\d* elements exceeds the limit of 10000000"):
        compile_source(f"fn main() {{ {body} }}").call("main")


@pytest.mark.parametrize(
    "body",
    [
        'let v = []; loop { v.push("x".repeat(1000000) + "y"); }',
        'let s = "x".repeat(1000000); let v = []; loop { v.push(`${s}!`); }',
        'let s = "x".repeat(1000000); let v = []; loop { v.push(s.replace("x", "y")); }',
        "let v = []; v.resize(100000, 0); let w = []; loop { w.push(v.clone()); }",
        "let vs = []; loop { vs.push((0..100000).iter().collect::<Vec>()); }",
        'let s = "x".repeat(1000000); let v = []; loop { v.push(s.as_bytes()); }',
        "let o = #{}; for i in 0..1000 { o[`k${i}`] = i; } let w = []; loop { w.push(o.clone()); }",
        "let v = []; loop { v.push(1); }",
        "let o = #{}; let i = 0; loop { o[`k${i}`] = i; i += 1; }",
        "let o = #{}; let i = 0; loop { o.insert(`k${i}`, i); i += 1; }",
    ],
)
def test_values_a_run_keeps_count_against_its_memory_budget(body: str) -> None:
    with pytest.raises(RuneLimitError, match="over its budget of 16777216 bytes"):
        compile_source(f"fn main() {{ {body} }}").call("main", max_memory=16 << 20)


def test_memory_budget_is_per_run() -> None:
    unit = compile_source('fn main() { "x".repeat(3000000).len() }')
    for _ in range(5):  # 3 MB each, 15 MB together: each run has its own 4 MB
        assert unit.call("main", max_memory=4 << 20) == 3000000


def test_pow_refuses_huge_exponents_at_once() -> None:
    with pytest.raises(RuneRuntimeError, match="integer overflow in `pow`"):
        compile_source("fn main() { 2.pow(100000000) }").call("main")


def test_json_results_refuse_inf_and_nan() -> None:
    from toolmesh.plugins.rune.lang import to_json

    unit = compile_source("fn main() { #{ok: 1.5, bad: [0.0 / 0.0]} } fn inf() { -1.0 / 0.0 }")
    assert to_json(unit.call("main", raw=True)["ok"]) == 1.5
    with pytest.raises(RuneRuntimeError, match=r"the result at bad\[0\] is the float NaN"):
        to_json(unit.call("main", raw=True), "the result")
    with pytest.raises(RuneRuntimeError, match="the value is the float -inf, which JSON cannot carry"):
        to_json(unit.call("inf", raw=True))
