"""Fused iterator pipelines (``src.iter().map(..).filter(..).sum()`` as one loop) and bounds of
``%``: same results, overflow errors and budget as the adaptors and plain arithmetic."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import (
    RuneBudgetExceeded,
    RuneRuntimeError,
    compile_source,
)

I64_MAX = 2**63 - 1


def _rem(a: int, b: int) -> int:
    """Rune's remainder: truncated, with the sign of ``a``."""
    r = abs(a) % b
    return -r if a < 0 else r


def _run(src: str, *args: Any, budget: int = 10**7) -> Any:
    return compile_source(src, "fusion.rn").call("main", *args, budget=budget)


RESULTS = [
    (
        "bench pipeline",
        "fn main() { let k = 3; (0..50000).iter().map(|x| x * k).filter(|x| x % 2 == 0).map(|x| x + 1).sum() }",
        (),
        sum(x + 1 for x in (x * 3 for x in range(50000)) if x % 2 == 0),
    ),
    ("inclusive range", "fn main() { (1..=10).iter().map(|x| x * x).sum() }", (), 385),
    ("empty range", "fn main() { (5..2).iter().map(|x| x * 2).sum() }", (), 0),
    ("empty count", "fn main() { (5..5).iter().filter(|x| true).count() }", (), 0),
    ("count", "fn main() { (0..100).iter().filter(|x| x % 3 == 0).count() }", (), 34),
    (
        "negative remainders",
        "fn main() { (-10..10).iter().map(|x| x % 3).sum() }",
        (),
        sum(_rem(x, 3) for x in range(-10, 10)),
    ),
    ("bounded sum", "fn main() { (0..10).iter().map(|x| x % 7).sum() }", (), sum(x % 7 for x in range(10))),
    (
        "ends from parameters",
        "fn main(a, b) { (a..b).iter().map(|x| x - 1).sum() }",
        (-3, 4),
        sum(x - 1 for x in range(-3, 4)),
    ),
    ("constant map", "fn main() { (0..4).iter().map(|x| 5).sum() }", (), 20),
    ("captured map", "fn main() { let k = 2; (0..3).iter().map(|x| k).sum() }", (), 6),
    # the filter's `x` is the enclosing local, not the parameter of the previous closure
    (
        "closure scopes",
        "fn main() { let x = 100; (0..3).iter().map(|x| x + 1).filter(|y| x > y).sum() }",
        (),
        6,
    ),
    ("shadowed parameter", "fn main() { (0..4).iter().map(|x| x * 10).map(|x| x + 1).sum() }", (), 64),
    ("float elements", "fn main() { (0..3).iter().map(|x| 1.5).sum() }", (), 4.5),
    ("vector source", "fn main() { [1.5, 2.5].iter().map(|x| x * 2.0).sum() }", (), 8.0),
    ("string source", 'fn main() { ["a", "bb", "cc"].iter().filter(|s| s.len() == 2).count() }', (), 2),
    ("mixed sign sum", "fn main() { (0..5).iter().map(|x| 2 - x).sum() }", (), 0),
]


@pytest.mark.parametrize(("src", "args", "expected"), [r[1:] for r in RESULTS], ids=[r[0] for r in RESULTS])
def test_pipeline_results(src: str, args: tuple[Any, ...], expected: Any) -> None:
    assert _run(src, *args) == expected


ERRORS = [
    (
        "map overflow",
        "fn main() { (0..3).iter().map(|x| x * 4611686018427387904).sum() }",
        (),
        "integer overflow",
    ),
    (
        "sum overflow",
        "fn main() { (0..3).iter().map(|x| 4611686018427387904).sum() }",
        (),
        "integer overflow",
    ),
    (
        "sum underflow",
        "fn main() { (0..3).iter().map(|x| -4611686018427387904 - x).sum() }",
        (),
        "integer overflow",
    ),
    (
        "overflow at the range's end",
        "fn main() { (9223372036854775806..=9223372036854775807).iter().map(|x| x + 1).count() }",
        (),
        "integer overflow",
    ),
    (
        "overflow with parameter ends",
        "fn main(n, k) { (0..n).iter().map(|x| x * k).sum() }",
        (3, 2**62),
        "integer overflow",
    ),
    ("int and float", "fn main() { (0..3).iter().map(|x| x * 1.5).sum() }", (), "`i64 * f64`"),
    ("float range end", "fn main(n) { (0..n).iter().map(|x| x).sum() }", (2.5,), "only integer ranges"),
    ("bool filter", "fn main() { (0..3).iter().filter(|x| x).count() }", (), "bool"),
]


@pytest.mark.parametrize(("src", "args", "message"), [r[1:] for r in ERRORS], ids=[r[0] for r in ERRORS])
def test_pipeline_errors(src: str, args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(RuneRuntimeError, match=re.escape(message)):
        _run(src, *args)


@pytest.mark.parametrize(
    "src",
    [
        "fn main() { (0..1000000000000).iter().map(|x| x).sum() }",
        "fn main() { (0..1000000000000).iter().filter(|x| false).count() }",
        # a unit end makes an endless range: the general path, metered by the budget
        "fn main() { let n = (); (0..n).iter().map(|x| x).sum() }",
    ],
)
def test_budget_stops_pipelines(src: str) -> None:
    with pytest.raises(RuneBudgetExceeded):
        _run(src, budget=10_000)


@pytest.mark.parametrize(
    ("bind", "checked"),
    [
        ("let k = 3;", False),  # bounded: x * k and the sum provably fit in i64
        ("let k = 3; if k > 0 { k += 1; };", True),  # reassigned in a branch: no bounds after it
    ],
)
def test_range_pipeline_is_one_typed_loop(bind: str, checked: bool, generated: Callable[[str], str]) -> None:
    code = generated(f"fn main() {{ {bind} (0..50).iter().map(|x| x * k).filter(|x| x % 2 == 0).sum() }}")
    assert "_invoke" not in code and "type(" not in code  # elements of a literal range are ints
    assert "compress(_range(0, 50, False), _s)" in code  # one budget tick per element
    assert ("_overflow('*')" in code and "_overflow('+')" in code) is checked


NESTED = (
    "fn main() {{ let s = {init}; for i in {lo}..{hi} {{ for j in 0..3 {{ s {op}= (i * j) % 7; }} }} s }}"
)
REMAINDERS = [
    ("benchmark", {"init": 0, "lo": 0, "hi": 300, "op": "+"}, None),
    ("negative", {"init": 0, "lo": -20, "hi": 20, "op": "+"}, None),
    ("subtract", {"init": 0, "lo": 0, "hi": 20, "op": "-"}, None),
    ("upward overflow", {"init": I64_MAX - 3, "lo": 0, "hi": 20, "op": "+"}, "integer overflow"),
    ("downward overflow", {"init": -I64_MAX + 3, "lo": -20, "hi": 0, "op": "+"}, "integer overflow"),
    ("subtract overflow", {"init": -I64_MAX + 3, "lo": 0, "hi": 20, "op": "-"}, "integer overflow"),
]


@pytest.mark.parametrize(("params", "error"), [r[1:] for r in REMAINDERS], ids=[r[0] for r in REMAINDERS])
def test_remainder_bounds_keep_overflow_checks(params: dict[str, Any], error: str | None) -> None:
    src = NESTED.format(**params)
    if error is not None:
        with pytest.raises(RuneRuntimeError, match=error):
            _run(src)
        return
    sign = 1 if params["op"] == "+" else -1
    expected = params["init"] + sign * sum(
        _rem(i * j, 7) for i in range(params["lo"], params["hi"]) for j in range(3)
    )
    assert _run(src) == expected


def test_remainder_of_a_non_negative_int_needs_a_one_sided_check(generated: Callable[[str], str]) -> None:
    code = generated(NESTED.format(init=0, lo=0, hi=300, op="+"))
    assert "> 9223372036854775807" in code
    assert "-9223372036854775808 <=" not in code
