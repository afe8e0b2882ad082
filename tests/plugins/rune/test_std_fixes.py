"""Standard-library behaviours that used to give wrong results, each checked against upstream's semantics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneCompileError, RuneError, RuneRuntimeError

Run = Callable[..., tuple[str, Any]]


def main(body: str) -> str:
    return "pub fn main() {\n" + body + "\n}\n"


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ('"1.5".parse::<f64>()', {"Ok": 1.5}),
        ('"-2e3".parse::<f64>()', {"Ok": -2000.0}),
        ('"x".parse::<f64>()', {"Err": "invalid float literal"}),
        ('"x".parse::<char>()', {"Ok": "x"}),
        ('"xy".parse::<char>()', {"Err": "too many characters in string"}),
        ('"true".parse::<bool>()', {"Ok": True}),
        ('"yes".parse::<bool>()', {"Err": "provided string was not `true` or `false`"}),
        ('"-12".parse::<i64>()', {"Ok": -12}),
        ('"1.5".parse::<i64>()', {"Err": "invalid digit found in string"}),
        ('"12".parse::<u64>()', {"Ok": 12}),
        ('"-12".parse::<u64>()', {"Err": "invalid digit found in string"}),
        ('"99999999999999999999".parse::<i64>()', {"Err": "number too large to fit in target type"}),
        ("[1, 2].iter().collect::<Tuple>() is Tuple", True),
        ("[1, 2].iter().collect::<Vec<_>>()", [1, 2]),
        ("[[1], [2]].iter().collect::<Vec<Vec<i64>>>()", [[1], [2]]),
        ('["a", "b"].iter().collect::<String>()', "ab"),
        ("7.9.to::<i64>()", 7),
        ("3.to::<f64>()", 3.0),
    ],
)
def test_turbofish_picks_the_target_type(rune: Run, expr: str, expected: Any) -> None:
    assert rune(main(expr))[1] == expected


def test_turbofish_to_an_unsupported_type_is_an_error_naming_it(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match=r"`parse::<Object>` is not available on `String`"):
        rune(main('"1".parse::<Object>()'))


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ('"abc1def2ghi".split(char::is_numeric).collect::<Vec>()', ["abc", "def", "ghi"]),
        ("\"abc1defXghi\".split(|c| c == '1' || c == 'X').collect::<Vec>()", ["abc", "def", "ghi"]),
        ('"rust".split("").collect::<Vec>()', ["", "r", "u", "s", "t", ""]),
        ('"".split("").collect::<Vec>()', ["", ""]),
        ("\"lionXXtiger\".split('X').collect::<Vec>()", ["lion", "", "tiger"]),
        ('"a::b".split("::").collect::<Vec>()', ["a", "b"]),
    ],
)
def test_split_by_char_predicates_closures_and_empty(rune: Run, expr: str, expected: Any) -> None:
    assert rune(main(expr))[1] == expected


def test_split_predicate_must_return_a_bool(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match="must return a bool"):
        rune(main('"ab".split(|c| 1).collect::<Vec>()'))


def test_option_take_empties_the_option(rune: Run) -> None:
    src = main("let x = Some(2); let y = x.take(); let z = None; let w = z.take(); [x, y, z, w]")
    assert rune(src)[1] == [{"None": None}, {"Some": 2}, {"None": None}, {"None": None}]


def test_clone_of_option_and_result_copies_the_inner_value(rune: Run) -> None:
    src = main(
        'let a = Some([1]); let b = a.clone(); a?.push(2);'
        'let c = Ok(b"x"); let d = c.clone(); c?.extend(b"y");'
        "Some([a, b, c == Ok(b\"xy\"), d == Ok(b\"x\")])"
    )
    assert rune(src)[1] == {"Some": [{"Some": [1, 2]}, {"Some": [1]}, True, True]}


def test_vec_resize_gives_every_slot_its_own_value(rune: Run) -> None:
    src = main("let inner = [1]; let v = [2]; v.resize(3, inner); inner.push(3); v[1].push(4); v")
    assert rune(src)[1] == [2, [1, 4], [1]]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("[1, 4, 3].get(0..4)", {"None": None}),
        ("[1, 4, 3].get(2..1)", {"None": None}),
        ("[1, 4, 3].get(1..)", {"Some": [4, 3]}),
        ("(10, 40, 30).get(0..2)", {"Some": [10, 40]}),
        ("(10, 40, 30).get(0..4)", {"None": None}),
        ('"🗻∈🌏".get(0..4)', {"Some": "🗻"}),
        ('"🗻∈🌏".get(1..)', {"None": None}),
        ('"abc".get(..42)', {"None": None}),
        ('"おはよう".char_at(1)', {"None": None}),
        ('"おはよう".char_at(3)', {"Some": "は"}),
    ],
)
def test_get_out_of_range_or_off_a_boundary_is_none(rune: Run, expr: str, expected: Any) -> None:
    assert rune(main(expr))[1] == expected


def test_rev_and_next_back_do_not_collect_first(rune: Run) -> None:
    src = main(
        "let it = (0..1000000000).iter(); let a = it.next_back(); let b = it.next(); "
        "let r = (0..1000000000).iter().map(|x| x * 2).rev(); let c = r.next(); "
        "let d = [1, 2, 3].iter().nth_back(2); let e = \"abc\".chars().rev().collect::<String>();"
        "[a, b, c, d, e]"
    )
    expected = [{"Some": 999999999}, {"Some": 0}, {"Some": 1999999998}, {"Some": 1}, "cba"]
    assert rune(src, budget=10_000)[1] == expected


def test_rev_of_an_endless_iterator_is_an_error(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match="double-ended"):
        rune(main("(0..).iter().rev().next()"), budget=10_000)


def test_peekable_peek_does_not_consume(rune: Run) -> None:
    src = main(
        "let it = [1, 2].iter().peekable(); "
        "[it.peek(), it.peek(), it.next(), it.next(), it.peek(), it.next()]"
    )
    some1, some2, none = {"Some": 1}, {"Some": 2}, {"None": None}
    assert rune(src)[1] == [some1, some1, some1, some2, none, none]


def test_size_hint_follows_the_adaptors(rune: Run) -> None:
    src = main(
        "let it = [1, 2, 3].iter(); it.next();"
        "[it.size_hint(), (0..10).iter().filter(|x| x % 2 == 0).size_hint(),"
        " (0..10).iter().filter(|x| x % 2 == 0).chain(15..20).size_hint(),"
        " (0..4).iter().map(|x| x).size_hint(), (0..).iter().size_hint() == (u64::MAX, None)]"
    )
    assert rune(src)[1] == [[2, {"Some": 2}], [0, {"Some": 10}], [5, {"Some": 15}], [4, {"Some": 4}], True]


def test_chain_and_reduce(rune: Run) -> None:
    src = main(
        "[[1].iter().chain([2, 3]).collect::<Vec>(), (1..5).iter().reduce(|a, b| a * b),"
        " [].iter().reduce(|a, b| a)]"
    )
    assert rune(src)[1] == [[1, 2, 3], {"Some": 24}, {"None": None}]


def test_partial_eq_partial_cmp_eq_cmp_and_hash_exist(rune: Run) -> None:
    src = main(
        "use std::ops::{eq, partial_eq, cmp, partial_cmp, hash}; use std::cmp::Ordering;"
        "[partial_eq(1.0, 1.0), partial_eq(f64::NAN, f64::NAN), eq([1], [1]),"
        " cmp(1, 2) == Ordering::Less, partial_cmp(1.0, f64::NAN) == None,"
        " hash([1, 2]) == hash((1, 2)), hash(\"a\") == hash(\"a\"), hash(\"a\") != hash(\"b\"),"
        " std::cmp::max(1, 3), std::cmp::min(\"b\", \"a\")]"
    )
    assert rune(src)[1] == [True, False, True, True, True, True, True, True, 3, "a"]


def test_range_type_checks(rune: Run) -> None:
    src = main(
        "[(1..2) is std::ops::Range, (1..=2) is std::ops::Range, (1..=2) is std::ops::RangeInclusive,"
        " (1..) is std::ops::RangeFrom, (..) is std::ops::RangeFull, (..2) is std::ops::RangeTo,"
        " 5 is std::ops::Range]"
    )
    assert rune(src)[1] == [True, False, True, True, True, True, False]


def test_ranges_are_ordered_and_char_ranges_iterate(rune: Run) -> None:
    src = main(
        "let v = [3..4, 1..9, 1..2]; v.sort();"
        "[v == [1..2, 1..9, 3..4], (1..2) < (1..3), (2..0) > (1..9),"
        " ('a'..'d').iter().collect::<String>(), ('x'..='z').iter().count()]"
    )
    assert rune(src)[1] == [True, True, True, "abc", 3]


def test_eq_method_on_structs_and_enums(rune: Run) -> None:
    src = (
        "struct P { x } enum E { A(v), B }\n"
        + main("[P { x: 1 }.eq(P { x: 1 }), P { x: 1 }.ne(P { x: 2 }), E::A(1).eq(E::A(2)), E::B.eq(E::B),"
               " E::A(1).partial_eq(E::A(1)), P { x: 1 }.lt(P { x: 2 })]")
    )
    assert rune(src)[1] == [True, True, False, True, True, True]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("'三'.is_numeric()", False),
        ("'٣'.is_numeric()", True),
        ("'¾'.is_numeric()", True),
        ("'\\n'.is_control()", True),
        ("'a'.is_control()", False),
        ("'z'.to_digit(36)", {"Some": 35}),
        ("'٣'.to_digit(10)", {"None": None}),
    ],
)
def test_char_classification(rune: Run, expr: str, expected: Any) -> None:
    assert rune(main(expr))[1] == expected


def test_to_digit_with_a_radix_past_36_panics(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match="radix 37 is out of range"):
        rune(main("'1'.to_digit(37)"))


def test_sorting_floats_with_nan_fails_and_without_sorts(rune: Run) -> None:
    assert rune(main("let v = [2.0, -1.0, 1.5]; v.sort(); v"))[1] == [-1.0, 1.5, 2.0]
    with pytest.raises(RuneRuntimeError, match="NaN"):
        rune(main("let v = [1.0, f64::NAN, 0.5]; v.sort(); v"))


def test_brace_and_bracket_macro_calls(rune: Run) -> None:
    out, result = rune(main('assert_eq! { 1 + 1, 2 }\nassert! [true];\nprintln! { "{}", 3 }\nline!()'))
    assert (out, result) == ("3\n", 5)
    with pytest.raises(RuneRuntimeError, match="left: 1"):
        rune(main("assert_eq! { 1, 2 }"))


def test_capacity_is_not_the_length(rune: Run) -> None:
    src = main(
        "let b = Bytes::with_capacity(10); b.extend(b\"abc\"); let c1 = b.capacity();"
        "b.shrink_to_fit(); let v = []; [c1, b.capacity(), v.capacity(), b.len()]"
    )
    assert rune(src)[1] == [10, 3, 0, 3]


def test_bytes_debug_prints_the_byte_values(rune: Run) -> None:
    out, _ = rune(main('println!("{:?}", b"Hi"); println!("{:?}", Some(b"a")); dbg!(Bytes::new());'))
    assert out == "[72, 105]\nSome([97])\n[]\n"


def test_bytes_methods(rune: Run) -> None:
    src = main(
        'let b = Bytes::from_vec([104, 105]); b.extend_str("!"); b.insert(0, 62); let r = b.remove(1);'
        "b[0] = 63; [b.as_vec(), r, b.first(), b.last(), b[1..3].len(), String::from_utf8(b\"ok\")]"
    )
    assert rune(src)[1] == [[63, 105, 33], 104, {"Some": 63}, {"Some": 33}, 2, {"Ok": "ok"}]


def test_byte_string_holds_only_bytes(rune: Run) -> None:
    with pytest.raises(RuneRuntimeError, match="holds bytes"):
        rune(main('let b = b"a"; b[0] = 300;'))


def test_u64_namespace(rune: Run) -> None:
    assert rune(main('[u64::MIN, u64::parse("7")?]'))[1] == [0, 7]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("7.checked_rem(0)", {"None": None}),
        ("(-7).wrapping_rem(2)", -1),
        ("i64::MAX.saturating_mul(2)", 2**63 - 1),
        ("(-2).saturating_pow(65)", -(2**63)),
        ("i64::MIN.saturating_abs()", 2**63 - 1),
        ("8.0.log2()", 3.0),
        ("27.0.cbrt()", 3.0),
        ("(-1.0).log10().is_nan()", True),
        ("(-7.0).rem_euclid(4.0)", 1.0),
        ("(-7.0).div_euclid(4.0)", -2.0),
        ("f64::NAN.clamp(-2.0, 1.0).is_nan()", True),
        ("std::f64::consts::PI.to_degrees()", 180.0),
        ("f64::MIN_POSITIVE.is_normal()", True),
    ],
)
def test_number_methods(rune: Run, expr: str, expected: Any) -> None:
    assert rune(main(expr))[1] == expected


def test_unknown_associated_items_are_errors_naming_them(rune: Run) -> None:
    with pytest.raises(RuneCompileError, match=r"missing item `f64::PI`: `f64` has no `PI`"):
        rune(main("f64::PI * 2.0"))
    with pytest.raises(RuneCompileError, match=r"missing item `i64::FOO`"):
        rune(main("i64::FOO"))
    assert rune(main("let f = i64::max; f(1, 2)"))[1] == 2


@pytest.mark.parametrize(
    ("fmt", "args", "expected"),
    [
        ("{:+}", "5", "+5"),
        ("{:+}", "-5", "-5"),
        ("{:#x}", "255", "0xff"),
        ("{:x}", "-1", "ffffffffffffffff"),
        ("{:#b}", "5", "0b101"),
        ("{:05}", "-42", "-0042"),
        ("{:08.3}", "-3.14159", "-003.142"),
        ("{:.*}", "2, 1.23456", "1.23"),
        ("{:^7}|", '"mid"', "  mid  |"),
        ("{:*<4}", '"a"', "a***"),
        ("{:e}", "1234.5", "1.2345e3"),
        ("{:#?}", "[1, 2]", "[\n    1,\n    2,\n]"),
        ("{:#?}", "Some([])", "Some(\n    [],\n)"),
    ],
)
def test_format_specs(rune: Run, fmt: str, args: str, expected: str) -> None:
    assert rune(main(f'format!("{fmt}", {args})'))[1] == expected


def test_builtin_format_with_spec_options(rune: Run) -> None:
    src = main("""let a = #[builtin] format!("Hi", fill = '0', width = 5);
    let b = #[builtin] format!(3.14159, precision = 2);
    [format!("{a}"), b]""")
    assert rune(src)[1] == ["Hi000", "3.14"]
    with pytest.raises(RuneRuntimeError, match="option `flags` is not supported"):
        rune(main('format!("x", flags = 1)'))


def test_bad_format_spec_is_a_rune_error(rune: Run) -> None:
    with pytest.raises(RuneError, match="format"):
        rune(main('format!("{:q}", 1)'))


def test_future_join_and_prelude_io(rune: Run) -> None:
    src = main(
        "let (a, b) = std::future::join((async { 1 }, async { 2 })).await;"
        'print("x"); println("y"); dbg(a, "b"); [a, b, clone(b)]'
    )
    src = src.replace("pub fn main()", "pub async fn main()")
    out, result = rune(src)
    assert (out, result) == ('xy\n1\n"b"\n', [1, 2, 2])
