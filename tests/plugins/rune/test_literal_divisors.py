"""An int divided by a literal that is no number fails as Rune says it does (``unsupported operation``),
not with an error of the code generator; a positive int literal keeps the inline ``%`` and ``/``."""

from __future__ import annotations

import re

import pytest
from toolmesh.plugins.rune.lang import RuneRuntimeError, compile_source


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('x % "a"', "unsupported operation `i64 % String`"),
        ('x / "a"', "unsupported operation `i64 / String`"),
        ('x % b"a"', "unsupported operation `i64 % Bytes`"),
        ("x / ()", "unsupported operation `i64 / ()`"),
        ("x % 2.5", "unsupported operation `i64 % f64`"),
    ],
)
def test_a_literal_divisor_of_another_type_is_an_unsupported_operation(expression: str, message: str) -> None:
    unit = compile_source(f"fn divide() {{ let x = 5; {expression} }}\nfn ok() {{ 7 % 3 }}")
    with pytest.raises(RuneRuntimeError, match=f"^<script>:1:28: {re.escape(message)}"):
        unit.call("divide")
    assert unit.call("ok") == 1  # the unit still runs


def test_int_literal_divisors_still_compute() -> None:
    unit = compile_source("let x = -7; let s = 0; for i in 0..10 { s += i % 7 } [s + x % 3, x / 2, 7 / 2]")
    assert unit.call("main") == [23, -3, 3]
