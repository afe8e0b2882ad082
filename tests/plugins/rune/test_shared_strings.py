"""Strings are shared, mutable values as upstream: every holder of a string sees its mutations;
lengths, offsets and capacities count UTF-8 bytes."""

from __future__ import annotations

from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneRuntimeError, compile_source


def run(body: str, *items: str) -> Any:
    source = "\n".join([*items, "pub fn main() {\n" + body + "\n}\n"])
    return compile_source(source, "shared.rn").call("main")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # `let b = a` hands out the same string, `clone` a new one
        ('let a = "h"; let b = a; b.push(\'i\'); let c = b.clone(); c.push(\'!\'); [a, b, c]', ["hi", "hi", "hi!"]),
        ('let a = "x"; let b = a; b = "other"; b.push_str("!"); [a, b]', ["x", "other!"]),
        # a string kept by a vector, a tuple, an object, an Option
        ('let a = "x"; let v = [a]; v[0].push(\'y\'); a', "xy"),
        ('let a = "x"; let t = (1, a); let s = t.1; s.push_str("z"); a', "xz"),
        ('let a = "x"; let o = #{k: a}; o.k.push(\'!\'); a', "x!"),
        ('let a = "x"; let v = []; v.push(a); a.push(\'2\'); v', ["x2"]),
        ('let a = "x"; let o = Some(a); a.push(\'?\'); o', {"Some": "x?"}),
        # `+=` is upstream's ADD_ASSIGN: it appends in place
        ('let a = "x"; let b = a; b += "yz"; [a, b]', ["xyz", "xyz"]),
        ('let a = "x"; let b = a + "y"; b.push(\'!\'); [a, b]', ["x", "xy!"]),
        # the shared string reads as a string everywhere
        (
            (
                'let a = "b"; let b = a; b.push(\'c\'); [a == "bc", "bc" == a, a < "c", a.len(), `${a}`,'
                ' "abc".contains(a), a.to_uppercase(), a is String, format!("{:?}", a)]'
            ),
            [True, True, True, 2, "bc", True, "BC", True, '"bc"'],
        ),
        ('let a = "7"; let b = a; b.push(\'1\'); [i64::parse(a), a.parse::<i64>()]', [{"Ok": 71}, {"Ok": 71}]),
        ('let k = "w"; let m = #{}; let v = [k]; m[k] = 1; k.push(\'x\'); m', {"w": 1}),
    ],
)
def test_holders_share_one_string(body: str, expected: Any) -> None:
    assert run(body) == expected


def test_a_function_mutates_the_callers_string() -> None:
    assert run('let a = "hi"; exclaim(a); exclaim(a); a', 'fn exclaim(s) { s.push_str("!"); }') == "hi!!"
    # a closure's capture is the same string too
    assert run('let a = "a"; let f = || a.push(\'b\'); f(); f(); a') == "abb"


def test_a_string_in_a_map_keeps_its_key() -> None:
    body = 'let k = "w"; let m = std::collections::HashMap::new(); m.insert(k, 1); [m.get("w"), m.contains_key(k)]'
    assert run(body) == [{"Some": 1}, True]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('let s = "おはよう"; [s.char_at(0), s.char_at(1), s.char_at(3), s.char_at(12)]',
         [{"Some": "お"}, {"None": None}, {"Some": "は"}, {"None": None}]),
        ('let s = "おはよう"; [s.get(0..3), s.get(1..3), s.get(0..99), s[3..6], s.len()]',
         [{"Some": "お"}, {"None": None}, {"None": None}, "は", 12]),
        ('let s = "おは"; let t = s; t.push(\'x\'); [s.len(), s.get(6..7), s.char_at(6)]',
         [7, {"Some": "x"}, {"Some": "x"}]),
    ],
)
def test_offsets_are_utf8_bytes(body: str, expected: Any) -> None:
    assert run(body) == expected


def test_a_slice_off_a_char_boundary_panics() -> None:
    with pytest.raises(RuneRuntimeError, match="missing string slice"):
        run('let s = "おはよう"; s[1..3]')


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('let s = String::with_capacity(10); s.push_str("abc"); [s.len(), s.capacity()]', [3, 10]),
        ('let s = "foo"; s.clear(); [s.len(), s.capacity(), s.is_empty()]', [0, 3, True]),
        ('let s = String::new(); s.reserve(10); s.capacity()', 10),
        # Rust's amortized growth: at least double, at least 8
        ('let s = String::with_capacity(10); s.push_str("0123456789x"); s.capacity()', 20),
        ('let s = "ab"; s.reserve(1); s.capacity()', 8),
        ('let s = "ab"; s.reserve_exact(1); s.capacity()', 3),
        ('let s = "foo"; s.reserve(100); s.shrink_to_fit(); s.capacity()', 3),
        ('let s = String::with_capacity(4); let t = s; t.push(\'é\'); [s.len(), s.capacity()]', [2, 4]),
        ('let v = Vec::with_capacity(10); v.push(1); [v.len(), v.capacity() >= 10]', [1, True]),
    ],
)
def test_capacity_follows_upstream(body: str, expected: Any) -> None:
    assert run(body) == expected


def test_push_takes_a_char() -> None:
    with pytest.raises(RuneRuntimeError, match="takes a `char`"):
        run('let s = String::with_capacity(4); s.push("ab")')
