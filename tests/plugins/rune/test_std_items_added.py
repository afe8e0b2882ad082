"""The std items that were missing from the inventory (test_std_items.py), with upstream's semantics:
``f64::parse`` and the exponent constants, ``std::panic`` / ``panic``, ``stringify!``,
``std::ops::ControlFlow``, ``String::split_str``, ``len()`` of exact-size iterators and
``std::any::Type``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RunePanic, RuneRuntimeError

Run = Callable[..., tuple[str, Any]]

_DEQUE = "std::collections::VecDeque::from_iter([1, 2])"
_SET = "std::collections::HashSet::from_iter([1, 2, 3])"
_MAP = "std::collections::HashMap::from_iter([(1, 2), (3, 4)])"
_FLOAT_MAP = "std::collections::HashMap::from_iter([(1.5, 2), (3.5, 4)])"

RESULTS = [
    # f64: upstream's `parse` is Rust's `f64::from_str`; the exponent limits are Rust's constants
    ('f64::parse("1.5")', {"Ok": 1.5}),
    ('std::f64::parse("-2e3")', {"Ok": -2000.0}),
    ('f64::parse("1.5x").is_err()', True),
    ('f64::parse(" 1.5").is_err()', True),
    ("[f64::MIN_EXP, f64::MAX_EXP, f64::MIN_10_EXP, f64::MAX_10_EXP]", [-1021, 1024, -307, 308]),
    # stringify!: each token's text, one space apart (upstream's tests/core_macros.rs)
    ("stringify!(assert_eq!(1 + 1, 2))", "assert_eq ! ( 1 + 1 , 2 )"),
    ('stringify!(a+b, "x y", [1,2])', 'a + b , "x y" , [ 1 , 2 ]'),
    ("stringify![struct S { a: 1 }]", "struct S { a : 1 }"),
    ("stringify!()", ""),
    # a macro by its path, as upstream's macros are items of the std modules
    ('{ std::test::assert_eq!(1, 1); std::fmt::format!("{}-{}", 1, 2) }', "1-2"),
    ("std::macros::builtin::line!()", 1),
    ("std::stringify!(a+b)", "a + b"),
    # std::ops::ControlFlow
    ("std::ops::ControlFlow::Continue(1) == std::ops::ControlFlow::Continue(1)", True),
    ("std::ops::ControlFlow::Continue(1) == std::ops::ControlFlow::Break(1)", False),
    ('format!("{:?}", std::ops::ControlFlow::Break("x"))', 'Break("x")'),
    ("{ let c = std::ops::ControlFlow::Break([1]); let d = c.clone(); std::ops::eq(c, d) }", True),
    ("match std::ops::ControlFlow::Break(7) { std::ops::ControlFlow::Break(v) => v, _ => 0 }", 7),
    ("std::ops::ControlFlow::Continue(()) is std::ops::ControlFlow", True),
    # String::split_str: upstream's deprecated name of `split`
    ('"a-b-c".split_str("-").collect::<Vec>()', ["a", "b", "c"]),
    # ExactSizeIterator::len: what is left, after items were taken
    ("{ let it = (0..5).iter(); it.next(); it.len() }", 4),
    ("(0..=3).iter().len()", 4),
    ("[1, 2, 3].iter().rev().len()", 3),
    ("[1].iter().chain([2, 3]).len()", 3),
    ("[1, 2].iter().enumerate().len()", 2),
    ("[1, 2].iter().map(|x| x * 2).len()", 2),
    ("[1, 2, 3].iter().skip(1).len()", 2),
    ("[1, 2, 3].iter().take(2).len()", 2),
    ("{ let p = [1, 2].iter().peekable(); p.peek(); p.len() }", 2),
    ("#{a: 1, b: 2}.keys().len()", 2),
    ("(1, 2, 3).iter().len()", 3),
    # a collection's own iterators: an exact size hint, and `len` for the set and deque ones
    (f"{{ let d = {_DEQUE}; let it = d.iter(); it.next(); (it.size_hint(), it.len()) }}", [[1, {"Some": 1}], 1]),
    (f"{{ let it = {_SET}.iter(); it.next(); (it.size_hint(), it.len()) }}", [[2, {"Some": 2}], 2]),
    (f"{{ let it = {_MAP}.iter(); it.next(); it.size_hint() }}", [1, {"Some": 1}]),
    (f"{{ let it = {_FLOAT_MAP}.keys(); it.next(); (it.size_hint(), it.collect::<Vec>()) }}", [[1, {"Some": 1}], [3.5]]),
    ("std::collections::HashMap::from_iter([(1, 2)]).values().size_hint()", [1, {"Some": 1}]),
    # sum::<T> / product::<T>: an empty iterator gives T's zero or one
    ("[].iter().sum::<f64>()", 0.0),
    ("[].iter().product::<f64>()", 1.0),
    ("[].iter().sum::<i64>()", 0),
    ("[1.5, 2.0].iter().sum::<f64>()", 3.5),
    ("(1..=5).iter().map(|n| n as f64).product::<f64>()", 120.0),
    ("[2u64, 3u64].iter().product::<u64>() == 6u64", True),
    ("[].iter().sum::<u64>() is u64", True),
    ("['a', 'b'].iter().collect::<String>()", "ab"),
    ('["a", "b"].iter().collect::<String>()', "ab"),
    # wrong before: `abs` wraps as upstream's `wrapping_abs`; `char::from_i64` refuses surrogates;
    # the `eq` method is `PartialEq::eq` (NaN unequal), `std::ops::eq` the total one
    ("i64::MIN.abs() == i64::MIN", True),
    ("char::from_i64(0xD800)", {"None": None}),
    ("char::from_i64(0x110000)", {"None": None}),
    ("char::from_i64(0x10FFFF).is_some()", True),
    ("1.0.eq(f64::NAN)", False),
    ("[1.0].eq([f64::NAN])", False),
    ("std::ops::eq([1.0, 2.0], [2.0, f64::NAN])", False),  # unequal before the NaN is reached
    ("std::ops::eq(Some(f64::NAN), None)", False),
    ("std::ops::partial_eq(f64::NAN, f64::NAN)", False),
    ("{ let v = [1, 2]; v.insert(2, 0); v }", [1, 2, 0]),
    ('[("a", 2), ("b", 3), ("a", 4)].iter().collect::<Object>()', {"a": 4, "b": 3}),
    ('Ok(1).expect("boom")', 1),
    ("[Some(5).0, Ok(2).0, Err(3).0]", [5, 2, 3]),
    # CLONE of a tuple clones each item through its own CLONE (upstream's `Tuple::clone_with`)
    ("{ let a = ([1],); let b = a.clone(); b.0.push(2); a.0.len() }", 1),
    ("{ let a = Some([1]); let b = a.clone(); b.unwrap().push(2); a.unwrap().len() }", 1),
    # ... while a script's struct value inside is shared, as upstream's `Dynamic` values are
    ("{ let a = (P { x: 1 },); let b = a.clone(); b.0.x = 5; a.0.x }", 5),
    ("{ let a = Some(P { x: 1 }); let b = a.clone(); b.unwrap().x = 5; a.unwrap().x }", 5),
    # std::cmp::{min, max} by `Ord`: min keeps the first of equal values, max the second
    ("{ let a = [1]; let b = [1]; std::cmp::max(a, b).push(2); (a.len(), b.len()) }", [1, 2]),
    ("{ let a = [1]; let b = [1]; std::cmp::min(a, b).push(2); (a.len(), b.len()) }", [2, 1]),
    ('std::cmp::max("b", "a")', "b"),
    # the debug form of values upstream prints through Rust's `Debug`
    ('format!("{:?}", gen())', "Generator { completed: false }"),
    ('{ let g = gen(); g.next(); g.next(); format!("{:?}", g) }', "Generator { completed: true }"),
    ('format!("{:?}", stream())', "Stream { completed: false }"),
    ('format!("{:?}", std::any::Type::of_val(1))', "Type(0x1cad9186c9641c4f)"),
    ('format!("{:?}", std::cmp::max)', "native function"),
    # std::any::Type: upstream's own doc example gives the hash of `::std::i64`
    ('format!("{}", std::any::Type::of_val(42))', "Type(0x1cad9186c9641c4f)"),
    ("std::any::Type::of_val(42) == std::any::Type::of_val(43)", True),
    ("std::any::Type::of_val(42) == std::any::Type::of_val(4.2)", False),
    ("std::any::Type::of_val([1]) == std::any::Type::of_val([])", True),
]


@pytest.mark.parametrize(("expr", "expected"), RESULTS, ids=[e for e, _ in RESULTS])
def test_added_item(rune: Run, expr: str, expected: Any) -> None:
    _, result = rune(f"struct P {{ x }} fn gen() {{ yield 1; }} async fn stream() {{ yield 1; }} pub fn main() {{ {expr} }}")
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("[1, 2].iter().sum::<f64>()", "`sum::<f64>` expected `f64` items, found `i64`"),
        ("[1, 2].iter().map(|x| x).sum::<f64>()", "`sum::<f64>` expected `f64` items, found `i64`"),
        ("[1.0].iter().product::<i64>()", "`product::<i64>` expected `i64` items, found `f64`"),
        ("[1, 2].iter().sum::<u64>()", "`sum::<u64>` expected `u64` items, found `i64`"),
        ("[1, 2].iter().collect::<String>()", "`collect::<String>` expected `String` or `char` items, found `i64`"),
        ("[i64::MAX, 1].iter().sum::<i64>()", "integer overflow"),
        ("[(1, 2)].iter().collect::<Object>()", "`collect::<Object>` expected `(String, value)` tuples, found a tuple"),
        ("[1].iter().collect::<Object>()", "`collect::<Object>` expected `(String, value)` tuples, found `i64`"),
    ],
)
def test_typed_consumer_refuses_other_items(rune: Run, expr: str, message: str) -> None:
    with pytest.raises(RuneRuntimeError, match=re.escape(message)):
        rune(f"pub fn main() {{ {expr} }}")


@pytest.mark.parametrize("call", ['std::panic("boom")', 'panic("boom")'])
def test_panic_function_panics_with_its_message(rune: Run, call: str) -> None:
    with pytest.raises(RunePanic, match="boom"):
        rune(f"pub fn main() {{ {call} }}")


def test_panic_function_wants_a_string(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match="`std::panic` takes a `String` message, not `i64`"):
        rune("pub fn main() { std::panic(1) }")


@pytest.mark.parametrize(
    "iterator",
    [
        "[1, 2].iter().filter(|x| true)",  # upstream's Filter has no LEN
        "[].iter().filter(|x| true).map(|x| x)",  # an empty filter too: its count depends on items
        "[1].iter().flat_map(|x| [x])",
        "(0..).iter()",
    ],
)
def test_len_of_an_iterator_that_does_not_know_its_length(rune: Run, iterator: str) -> None:
    with pytest.raises(RuneRuntimeError, match="missing method `len` on `Iterator`.*count"):
        rune(f"pub fn main() {{ {iterator}.len() }}")


def test_len_of_a_map_iterator_is_missing_as_upstream(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match="missing method `len`.*`size_hint\\(\\)` gives what is left"):
        rune("pub fn main() { std::collections::HashMap::from_iter([(1, 2)]).iter().len() }")


def test_len_of_a_generator_is_missing(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match="missing method `len`"):
        rune("fn g() { yield 1; } pub fn main() { g().iter().len() }")


def test_unclosed_stringify_is_a_syntax_error(rune: Run) -> None:
    from toolmesh.plugins.rune.lang import RuneSyntaxError

    with pytest.raises(RuneSyntaxError):
        rune("pub fn main() { stringify!(a + b }")


@pytest.mark.parametrize(
    "expr",
    ["std::ops::eq(1.0, f64::NAN)", "std::ops::eq([1.0], [f64::NAN])", "std::ops::eq(#{a: f64::NAN}, #{a: 1.0})",
     "std::ops::eq(Some(f64::NAN), Some(f64::NAN))"],
)
def test_total_equality_meeting_nan_is_an_error(rune: Run, expr: str) -> None:
    with pytest.raises(RuneRuntimeError, match="total equality when one is NaN.*`==`"):
        rune(f"pub fn main() {{ {expr} }}")


@pytest.mark.parametrize("expr", ["std::cmp::max(1.0, f64::NAN)", "std::cmp::min(f64::NAN, 1.0)"])
def test_cmp_min_max_refuse_nan(rune: Run, expr: str) -> None:
    with pytest.raises(RuneRuntimeError, match="NaN has no total order"):
        rune(f"pub fn main() {{ {expr} }}")


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "integer underflow in `char::from_i64`"), ("0x1_0000_0000", "integer overflow in `char::from_i64`")],
)
def test_char_from_i64_out_of_u32_is_an_error(rune: Run, value: str, message: str) -> None:
    with pytest.raises(RuneRuntimeError, match=re.escape(message)):
        rune(f"pub fn main() {{ char::from_i64({value}) }}")


@pytest.mark.parametrize("index", ["3", "-1"])
def test_vec_insert_past_the_end_is_an_error(rune: Run, index: str) -> None:
    with pytest.raises(RuneRuntimeError, match=f"index {index} out of range for insertion into a vector of length 2"):
        rune(f"pub fn main() {{ let v = [1, 2]; v.insert({index}, 0); v }}")


def test_none_has_no_tuple_index(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match="`Option` has no field `0`"):
        rune("pub fn main() { let o = None; o.0 }")


def test_result_expect_panics_with_message_and_error(rune: Run) -> None:
    with pytest.raises(RunePanic, match='boom: "x"'):
        rune('pub fn main() { Err("x").expect("boom") }')


def test_an_unknown_macro_path_is_a_compile_error_naming_it(rune: Run) -> None:
    from toolmesh.plugins.rune.lang import RuneCompileError

    with pytest.raises(RuneCompileError, match=re.escape("unknown macro `std::io::printline!`")):
        rune('pub fn main() { std::io::printline!("x") }')


@pytest.mark.parametrize(
    "expr",
    [
        "std::cmp::Ordering::Less < std::cmp::Ordering::Less",  # equal variants too: no PARTIAL_CMP
        "std::ops::partial_cmp(std::cmp::Ordering::Equal, std::cmp::Ordering::Equal)",
        "std::ops::ControlFlow::Break(1) < std::ops::ControlFlow::Break(2)",
        "{ let g = gen(); g.resume(()) < g.resume(()) }",
    ],
)
def test_std_enums_without_ordering_cannot_be_ordered(rune: Run, expr: str) -> None:
    with pytest.raises(RuneRuntimeError, match="values cannot be ordered"):
        rune(f"fn gen() {{ yield 1; }} pub fn main() {{ {expr} }}")


def test_script_enums_and_structs_still_order(rune: Run) -> None:
    _, result = rune("struct P { x } enum E { A(a) } pub fn main() { [P { x: 1 } < P { x: 2 }, E::A(2) > E::A(1)] }")
    assert result == [True, True]
