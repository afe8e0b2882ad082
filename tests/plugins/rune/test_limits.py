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


def test_overlapping_runs_in_threads_restore_the_recursion_limit() -> None:
    """Runs that start and end in different orders in several threads leave the process limit as found."""
    import sys
    import threading

    unit = compile_source("fn spin(n) { let i = 0; while i < n { i += 1; } i }", "spin.rn")
    before = sys.getrecursionlimit()
    first = threading.Thread(target=unit.call, args=("spin", 300_000))
    second = threading.Thread(target=unit.call, args=("spin", 3_000_000))
    first.start()
    second.start()  # starts while the first runs and ends after it
    first.join()
    second.join()
    assert sys.getrecursionlimit() == before
