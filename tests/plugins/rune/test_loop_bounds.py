"""Bounds that hold through a loop (``seed = (seed * k + c) % m``) and divisors known only when
the code runs: the checks they drop cannot fail, and every check that can still fails."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneError

Rune = Callable[..., tuple[str, Any]]

LCG = """fn main(seed, n) {
    let out = [];
    for i in 0..n {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        let x = (seed / 65536) % 2000;
        out.push(x * x / 2000);
    }
    out
}"""


def _truncated(a: int, b: int) -> tuple[int, int]:
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
    return q, a - q * b


def _lcg(seed: int, n: int) -> list[int]:
    out = []
    for _ in range(n):
        seed = _truncated(seed * 1103515245 + 12345, 2147483648)[1]
        x = _truncated(_truncated(seed, 65536)[0], 2000)[1]
        out.append(_truncated(x * x, 2000)[0])
    return out


def test_a_remainder_updated_local_keeps_its_bounds(generated: Callable[[str], str]) -> None:
    code = generated(LCG.replace("fn main(seed, n) {", "fn main(n) {\n    let seed = 42;"))
    loop = code[code.index("for i_") :]
    assert "_overflow" not in loop  # seed stays in 0..2^31, so seed * k + c fits an i64
    assert ">= 0" not in loop  # and `%` / `/` need no sign test


@pytest.mark.parametrize("seed", [42, 0, -42, -2147483647])
def test_bounded_loops_compute_like_rune(rune: Rune, seed: int) -> None:
    source = LCG.replace("fn main(seed, n) {", "fn main(n) {\n    let seed = " + str(seed) + ";")
    assert rune(source, "main", 300)[1] == _lcg(seed, 300)
    assert rune(LCG, "main", seed, 300)[1] == _lcg(seed, 300)  # a parameter: no bounds at all


def test_a_growing_remainder_is_still_checked(rune: Rune) -> None:
    # s * 1000003 leaves the i64 range at the fourth iteration: no bounds hold there.
    src = "fn main() { let s = 3; for i in 0..10 { s = s * 1000003 % 9223372036854775807; } s }"
    with pytest.raises(RuneError, match="integer overflow"):
        rune(src)


def test_a_shadowed_name_in_the_loop_keeps_the_checks(rune: Rune) -> None:
    # The `y` that `s = y % 10` reads is the loop's own: the outer `y` says nothing about it.
    src = """fn main() {
        let y = 2; let s = 0; let t = 0;
        for i in 0..2 { t = s - 9223372036854775800; let y = -9; s = y % 10; }
        t
    }"""
    with pytest.raises(RuneError, match="integer overflow"):
        rune(src)


@pytest.mark.parametrize(
    ("a", "b"), [(7, 3), (-7, 3), (7, -3), (-7, -3), (0, 5), (9223372036854775807, 2), (-9223372036854775807, 10)]
)
def test_divisors_known_when_running(rune: Rune, a: int, b: int) -> None:
    src = "fn main(a, b) { [a / b, a % b] }"
    assert rune(src, "main", a, b)[1] == list(_truncated(a, b))


@pytest.mark.parametrize(
    ("args", "message"),
    [((1, 0), "divide by zero|division by zero"), ((-9223372036854775808, -1), "overflow"), ((7, 1.5), "i64")],
)
def test_runtime_divisors_keep_rune_errors(rune: Rune, args: tuple[Any, Any], message: str) -> None:
    with pytest.raises(RuneError, match=message):
        rune("fn main(a, b) { let k = a + 0; k / b }", "main", *args)


def test_runtime_divisor_is_inline(generated: Callable[[str], str]) -> None:
    code = generated("fn f(n) { let t = 0; for i in 0..100 { t += i % n + i / n; } t }")
    # the helper when the divisor is not positive; `i` >= 0 needs no sign test
    assert re.search(r"i_\d+ % n_\d+ if n_\d+_int and n_\d+ > 0 else _rem\(i_\d+, n_\d+\)", code)
    assert re.search(r"i_\d+ // n_\d+ if n_\d+_int and n_\d+ > 0 else _div\(i_\d+, n_\d+\)", code)
