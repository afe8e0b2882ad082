"""``std::ops::hash`` agrees with the map-key rules of ``std::collections`` (``hash_key``).

Exactly the values that can be a ``HashMap`` key or ``HashSet`` value hash (upstream's ``HASH``
protocol: integers, floats but NaN, strings, bytes, tuples, vectors, ``Option``, ``Result``);
values that are equal keys hash equally (``0.0`` and ``-0.0``); a vector and a tuple of the same
items hash alike, as upstream's doc example asserts, while staying distinct keys.
"""

from __future__ import annotations

import pytest
from toolmesh.plugins.rune.lang import RuneRuntimeError, compile_source

KEYS = [
    "1",
    "-7",
    "1.5",
    "0.0",
    "-0.0",
    '"a"',
    'b"ab"',
    "(1, 2)",
    "[1, 2]",
    "[]",
    "Some(1)",
    "None",
    "Ok([1])",
    "Err((1, 2.5))",
    "Some([(1, 2), [3]])",
]
NOT_KEYS = ["true", "'c'", "()", "#{a: 1}", "0.0 / 0.0", "[0.0 / 0.0]", "1..2", "|| 1", "Some(#{})"]


def _run(body: str) -> object:
    source = f"use std::ops::hash; use std::collections::{{HashMap, HashSet}}; fn main() {{ {body} }}"
    return compile_source(source, "hash.rn").call("main")


@pytest.mark.parametrize("left", KEYS)
def test_equal_keys_hash_equally_and_distinct_keys_stay_distinct(left: str) -> None:
    for right in KEYS:
        same_key, same_hash = _run(
            f"let s = HashSet::new(); s.insert({left}); [s.contains({right}), hash({left}) == hash({right})]"
        )
        if same_key:
            assert same_hash, f"{left} and {right} are one key but hash differently"


def test_zero_and_negative_zero_are_one_key_and_one_hash() -> None:
    assert _run("let m = HashMap::new(); m.insert(0.0, 1); [m.get(-0.0), hash(0.0) == hash(-0.0)]") == [
        {"Some": 1},
        True,
    ]


def test_a_vector_and_a_tuple_hash_alike_but_are_distinct_keys() -> None:
    assert _run("let s = HashSet::from_iter([[1, 2]]); [hash([1, 2]) == hash((1, 2)), s.contains((1, 2))]") == [
        True,
        False,
    ]
    assert _run("hash(Some([1, (2, 3)])) == hash(Some((1, [2, 3])))") is True


def test_hash_is_stable_within_a_run_and_tells_values_apart() -> None:
    assert _run('[hash("a") == hash("a"), hash("a") != hash("b"), hash(1) != hash(1.0), hash(Ok(1)) != hash(Err(1))]') == [
        True,
        True,
        True,
        True,
    ]


@pytest.mark.parametrize("value", NOT_KEYS)
def test_what_cannot_be_a_key_cannot_be_hashed(value: str) -> None:
    with pytest.raises(RuneRuntimeError) as as_key:
        _run(f"let s = HashSet::new(); s.insert({value})")
    with pytest.raises(RuneRuntimeError) as hashed:
        _run(f"hash({value})")
    # the same refusal, worded the same way
    assert as_key.value.message == hashed.value.message
