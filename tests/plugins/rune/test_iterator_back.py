"""``rev`` / ``next_back`` / ``nth_back`` through adaptors read the source from the back as
upstream's ``DoubleEndedIterator`` adaptors do, without collecting it first; iterators upstream
gives no back end (generators, map and set iterators, endless ranges) are an error naming them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneBudgetExceeded, RuneError

Rune = Callable[..., tuple[str, Any]]

BIG = "(0..1000000000).iter()"  # a billion items: collecting them would end at the budget


def _value(rune: Rune, expr: str, budget: int = 10_000) -> Any:
    return rune(f"fn main() {{ {expr} }}", budget=budget)[1]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (f"{BIG}.filter(|x| x % 7 == 3).rev().next()", {"Some": 999999997}),
        (f"{BIG}.map(|x| x * 2).filter(|x| x % 3 == 0).map(|x| x + 1).rev().take(2).collect::<Vec>()",
         [1999999999, 1999999993]),
        (f"{BIG}.enumerate().rev().next()", {"Some": [999999999, 999999999]}),
        (f"{BIG}.skip(3).enumerate().nth_back(1)", {"Some": [999999995, 999999998]}),
        (f"{BIG}.zip(10..13).rev().collect::<Vec>()", [[2, 12], [1, 11], [0, 10]]),
        (f"{BIG}.filter_map(|x| if x % 2 == 1 {{ Some(x * 10) }} else {{ None }}).next_back()",
         {"Some": 9999999990}),
        (f"{BIG}.take(5).rev().next()", {"Some": 4}),
        (f"{BIG}.skip(999999998).rev().collect::<Vec>()", [999999999, 999999998]),
        (f"[1, 2].iter().chain({BIG}).next_back()", {"Some": 999999999}),
        (f"{BIG}.flat_map(|x| [x, -x]).nth_back(2)", {"Some": -999999998}),
        (f"{BIG}.nth_back(999999990)", {"Some": 9}),
        # a mapped item dropped from the back is computed (its function may print), as upstream
        ("(0..1000).iter().map(|x| x + 1).enumerate().zip(0..2).next_back()", {"Some": [[1, 2], 1]}),
    ],
)
def test_the_back_is_read_lazily(rune: Rune, expr: str, expected: Any) -> None:
    assert _value(rune, expr) == expected


CHAINS = [
    "filter(|x| x % 3 != 0)",
    "map(|x| x * 10).filter(|x| x > 20)",
    "enumerate()",
    "zip([10, 20, 30, 40])",
    "filter_map(|x| if x > 4 { Some(-x) } else { None })",
    "take(4)",
    "skip(2)",
    "chain([100, 200].iter())",
    "flat_map(|x| [x, x * 100])",
    "flatten_pairs",
    "skip(1).take(5).enumerate().map(|(i, x)| i * 1000 + x)",
]


def _chain(chain: str) -> str:
    if chain == "flatten_pairs":
        return "[[1, 2], [], [3]].iter().flatten()"
    return f"[1, 2, 3, 4, 5, 6, 7, 8].iter().{chain}"


@pytest.mark.parametrize("chain", CHAINS)
def test_from_the_back_is_the_front_reversed(rune: Rune, chain: str) -> None:
    forward, backward = _value(
        rune, f"({_chain(chain)}.collect::<Vec>(), {_chain(chain)}.rev().collect::<Vec>())"
    )
    assert backward == forward[::-1]


@pytest.mark.parametrize("chain", CHAINS)
def test_both_ends_meet_in_the_middle(rune: Rune, chain: str) -> None:
    src = f"""let it = {_chain(chain)}; let front = []; let back = [];
        loop {{
            match it.next() {{ Some(x) => front.push(x), None => break }}
            match it.next_back() {{ Some(x) => back.push(x), None => break }}
        }}
        (front, back, {_chain(chain)}.collect::<Vec>())"""
    front, back, whole = _value(rune, src)
    assert front + back[::-1] == whole


def test_a_peeked_item_stays_in_front(rune: Rune) -> None:
    src = """let it = [1, 2, 3].iter().peekable(); let p = it.peek();
        (p, it.next_back(), it.next_back(), it.next_back(), it.next_back(), it.next())"""
    assert _value(rune, src) == [{"Some": 1}, {"Some": 3}, {"Some": 2}, {"Some": 1}, {"None": None}, {"None": None}]


def test_zip_drops_the_longer_sides_extra_items_from_the_back(rune: Rune) -> None:
    assert _value(rune, "[1, 2, 3, 4].iter().zip([7, 8]).rev().collect::<Vec>()") == [[2, 8], [1, 7]]
    assert _value(rune, "[1].iter().zip([7, 8, 9].iter().map(|x| x * 2)).next_back()") == {"Some": [1, 14]}


@pytest.mark.parametrize(
    ("expr", "hint"),
    [
        ("[1, 2, 3].iter().enumerate().size_hint()", [3, {"Some": 3}]),
        ("[1, 2, 3].iter().zip([1, 2]).size_hint()", [2, {"Some": 2}]),
        ("[1, 2, 3].iter().take(2).size_hint()", [2, {"Some": 2}]),
        ("[1, 2, 3].iter().skip(1).size_hint()", [2, {"Some": 2}]),
        ("[1, 2, 3].iter().filter_map(|x| Some(x)).size_hint()", [0, {"Some": 3}]),
    ],
)
def test_size_hints(rune: Rune, expr: str, hint: Any) -> None:
    assert _value(rune, expr) == hint


@pytest.mark.parametrize(
    ("expr", "named"),
    [
        ("fn_gen().iter().rev()", "a generator (`Generator`)"),
        ("fn_gen().iter().map(|x| x).next_back()", "a generator (`Generator`)"),
        ("{ let m = HashMap::new(); m.insert(1, 2); m.iter().rev() }", "`HashMap`"),
        ("{ let m = HashMap::new(); m.insert(1, 2); m.keys().nth_back(0) }", "`HashMap`"),
        ("{ let s = HashSet::new(); s.insert(1); s.iter().filter(|x| true).rev() }", "`HashSet`"),
        ("(0..).iter().map(|x| x).rev()", "endless"),
        ("[1, 2, 3].iter().filter(|x| x > 1).enumerate().next_back()", "`Filter` does not"),
        ("[1, 2, 3].iter().flat_map(|x| [x]).take(1).next_back()", "`FlatMap` does not"),
        ("[1, 2].iter().filter(|x| true).zip([1]).rev().next()", "`Filter` does not"),
    ],
)
def test_no_back_end_is_an_error_naming_the_iterator(rune: Rune, expr: str, named: str) -> None:
    src = f"""use std::collections::{{HashMap, HashSet}};
        fn fn_gen() {{ yield 1; yield 2; }}
        fn main() {{ {expr} }}"""
    with pytest.raises(RuneError, match="double-ended|how many items") as caught:
        rune(src, budget=100_000)
    assert named in str(caught.value)


def test_reading_the_back_stays_within_the_budget(rune: Rune) -> None:
    with pytest.raises(RuneBudgetExceeded):  # a closure call per item: each takes a tick
        _value(rune, f"{BIG}.filter(|x| x < 0).next_back()")
    with pytest.raises(RuneBudgetExceeded):  # skipping a billion items ticks too
        _value(rune, "(0..1000000000000).iter().skip(999999999999).next()")
    assert _value(rune, f"{BIG}.nth_back(999999999)") == {"Some": 0}  # a window drops at once


def test_counts_must_be_counts(rune: Rune) -> None:
    with pytest.raises(RuneError, match="take"):
        _value(rune, "[1].iter().take(-1)")


@pytest.mark.parametrize(
    "source",
    [
        "[1, 2, 3].iter().flat_map(|x| [x, x])",
        "[1, 2, 3].iter().filter(|x| x != 2).enumerate()",
        "[1, 2, 3].iter().zip([4, 5, 6]).skip(1)",
        "fn_gen().iter()",
        "{ let m = HashMap::new(); m.insert(1, 2); m.insert(3, 4); m.keys() }",
    ],
)
def test_a_clone_reads_on_independently(rune: Rune, source: str) -> None:
    src = f"""use std::collections::HashMap;
        fn fn_gen() {{ yield 1; yield 2; }}
        fn main() {{ let a = {source}; a.next(); let b = a.clone(); (a.collect::<Vec>(), b.collect::<Vec>()) }}"""
    a, b = rune(src)[1]
    assert a == b and a


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (f"{BIG}.skip(5).map(|x| x * 2).rev().next()", {"Some": 1999999998}),
        (f"{BIG}.take(5).zip({BIG}.skip(2)).next_back()", {"Some": [4, 6]}),
        (f"{BIG}.filter_map(|x| Some(x)).map(|x| -x).next_back()", {"Some": -999999999}),
        (f"{BIG}.flat_map(|x| [x]).enumerate().map(|p| p.1).nth(3)", {"Some": 3}),
        ("{ let it = [1, 2, 3, 4].iter().skip(1); it.next(); it.map(|x| x * 10).rev().collect::<Vec>() }", [40, 30]),
        ("{ let it = [1, 2, 3].iter().take(2); it.next(); it.next(); it.map(|x| x).next_back() }", {"None": None}),
    ],
)
def test_adaptors_over_these_adaptors(rune: Rune, expr: str, expected: Any) -> None:
    assert _value(rune, expr) == expected


DEQUE = "use std::collections::VecDeque; fn main() { let d = VecDeque::new(); for i in 0..6 { d.push_back(i); } BODY }"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("let it = d.iter(); it.next(); (it.next_back(), it.map(|x| x * 10).rev().collect::<Vec>())",
         [{"Some": 5}, [40, 30, 20, 10]]),
        ("d.iter().enumerate().rev().next()", {"Some": [5, 5]}),
        ("d.iter().filter(|x| x % 2 == 0).nth_back(1)", {"Some": 2}),
    ],
)
def test_a_deque_iterator_is_read_from_the_back_in_place(rune: Rune, body: str, expected: Any) -> None:
    assert rune(DEQUE.replace("BODY", body))[1] == expected


def test_a_deque_changed_while_read_from_the_back_is_an_error(rune: Rune) -> None:
    with pytest.raises(RuneError, match="VecDeque was modified while being iterated"):
        rune(DEQUE.replace("BODY", "let it = d.iter(); it.next_back(); d.push_back(9); it.next_back()"))
