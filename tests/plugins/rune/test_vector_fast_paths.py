"""Fast paths of vector methods keep their meaning: ``x.push(v)`` on a value of unknown type tests
for a vector first (the common case) while a string still grows in its place and anything else
goes through the method call; ``join`` of strings still checks the run's memory before building."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneError, RuneLimitError, compile_source

Rune = Callable[..., tuple[str, Any]]

SRC = """fn main(items) {
    for i in 0..3 { items[i % 2].push('z'); }
    items
}"""


def test_a_vector_is_tested_first(generated: Callable[[str], str]) -> None:
    code = generated(SRC)
    vector, string = code.index("is list and len("), code.index("is str")
    assert vector < string


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([[1], [2]], [[1, "z", "z"], [2, "z"]]),
        (["a", "b"], ["azz", "bz"]),  # a string element grows where it is
        ([[], "s"], [["z", "z"], "sz"]),
    ],
)
def test_push_reaches_vectors_and_strings(rune: Rune, items: list[Any], expected: list[Any]) -> None:
    assert rune(SRC, "main", items)[1] == expected


def test_push_on_anything_else_is_rune_error(rune: Rune) -> None:
    with pytest.raises(RuneError, match="push"):
        rune(SRC, "main", [1, 2])


JOIN = 'fn main() {{ let v = []; for i in 0..1000 {{ v.push("{c}".repeat(1000)); }} v.join("") }}'


def test_join_counts_wide_text_before_building_it() -> None:
    # a million characters: one byte each when ASCII, four otherwise (the items cost as much again)
    assert len(compile_source(JOIN.format(c="e")).call("main", max_memory=2_500_000)) == 1_000_000
    with pytest.raises(RuneLimitError, match="joined string of 1000000 elements"):
        compile_source(JOIN.format(c="é")).call("main", max_memory=6_000_000)
    assert len(compile_source(JOIN.format(c="é")).call("main", max_memory=9_000_000)) == 1_000_000
