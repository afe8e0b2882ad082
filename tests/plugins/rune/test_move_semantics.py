"""Moves as upstream: ``drop``, methods that take their receiver by value and ``move`` closures
leave every holder with a value that cannot be read; ``std::mem::snapshot`` shows the state."""

from __future__ import annotations

from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneRuntimeError, compile_source


def run(body: str) -> Any:
    return compile_source("pub fn main() {\n" + body + "\n}\n", "moves.rn").call("main")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("let v = Some(42); let w = v; drop(v); [is_readable(v), is_writable(w)]", [False, False]),
        ('let s = "hi"; let t = s; drop(t); is_readable(s)', False),
        ('let s = "hello"; let b = s.into_bytes(); [is_readable(s), b == b"hello"]', [False, True]),
        ('let s = "hello"; let b = s.as_bytes(); is_readable(s)', True),
        ('let b = b"ab"; let v = b.into_vec(); [is_readable(b), v]', [False, [97, 98]]),
        ("let n = 1; drop(n); [is_readable(n), std::mem::snapshot(n).is_none()]", [True, True]),
        ("let v = [1]; [is_readable(v), is_writable(v)]", [True, True]),
    ],
)
def test_moved_values_cannot_be_read(body: str, expected: Any) -> None:
    assert run(body) == expected


def test_a_moved_value_is_an_error_to_use() -> None:
    with pytest.raises(RuneRuntimeError, match="moved"):
        run('let s = "hi"; let t = s; drop(t); s.len()')
    with pytest.raises(RuneRuntimeError, match="moved"):
        run("let v = Some(1); drop(v); v.map(|x| x + 1)")


def test_a_move_closure_takes_its_captures() -> None:
    body = """
        let v = [1, 2, 3];
        let u = v;
        let closure = move || { v };
        let s = std::mem::snapshot(u)?;
        [s.is_exclusive(), s.is_readable(), s.is_writable(), closure(), `${s}`]
    """
    assert run(body) == [True, False, False, [1, 2, 3], "MX000000"]
    # without `move` the closure shares them
    assert run("let v = [1]; let f = || v.len(); [is_readable(v), f()]") == [True, 1]


def test_an_iterator_borrows_its_vector_until_dropped() -> None:
    body = """
        let v = [1, 2, 3];
        let before = std::mem::snapshot(v)?.shared();
        let it = v.iter();
        let during = std::mem::snapshot(v)?.shared();
        drop(it);
        let after = std::mem::snapshot(v)?;
        [before, during, after.shared(), after.is_exclusive(), `${after}`, format!("{:?}", after)]
    """
    assert run(body) == [0, 1, 0, False, "--000000", "Snapshot(--000000)"]


def test_moves_belong_to_their_run() -> None:
    unit = compile_source("pub fn main(v) { drop(v); is_readable(v) }", "moves.rn")
    assert unit.call("main", [1]) is False
    assert unit.call("main", [2]) is False  # a new run: nothing of the last one is kept
