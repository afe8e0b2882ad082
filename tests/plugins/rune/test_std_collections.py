"""``std::collections`` beyond upstream's doc examples (those are in
``test_std_collections_examples.py``): paths, hashing rules, iteration order guarantees,
equality, sharing, errors, limits, results leaving a script, and the inline paths of the
generated code (which must agree with the method calls they stand for)."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneError, RuneLimitError, RuneRuntimeError, compile_source
from toolmesh.plugins.rune.lang.bridge import to_json

Run = Callable[..., tuple[str, Any]]


def value(src: str) -> Any:
    """The value of a file of top-level statements ending in an expression."""
    return compile_source(src, "value.rn").call("main", stdout=io.StringIO())


def failure(src: str) -> str:
    with pytest.raises(RuneError) as caught:
        compile_source(src, "fails.rn").call("main", stdout=io.StringIO())
    return str(caught.value)


# --- paths -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src",
    [
        "use std::collections::HashMap; let m = HashMap::new(); m.insert(1, 2); m.len()",
        (
            "use std::collections::{HashMap, HashSet, VecDeque};"
            " HashMap::new().len() + HashSet::new().len() + VecDeque::new().len() + 1"
        ),
        "let m = std::collections::hash_map::HashMap::new(); m.insert(1, 2); m.len()",
        "use std::collections::hash_set::HashSet; HashSet::from_iter([1]).len()",
        "use std::collections::vec_deque::VecDeque; VecDeque::from_iter([1]).len()",
        "use std::collections::HashMap; let m = HashMap::new(); HashMap::insert(m, 1, 1); HashMap::len(m)",
    ],
)
def test_collections_are_reachable_by_every_upstream_path(src: str) -> None:
    assert value(src) == 1


def test_hash_map_without_use_is_an_error_naming_it() -> None:
    assert "HashMap::new" in failure("let m = HashMap::new();")


def test_value_is_collection_type() -> None:
    src = """use std::collections::{HashMap, HashSet, VecDeque};
    let m = HashMap::new();
    [m is HashMap, m is HashSet, VecDeque::new() is VecDeque, [] is HashMap]"""
    assert value(src) == [True, False, True, False]


# --- hashing ---------------------------------------------------------------------------------


def test_hashable_keys_of_every_kind_upstream_hashes() -> None:
    src = """use std::collections::HashMap;
    let m = HashMap::new();
    let keys = [1, 2.5, "s", (1, "a"), [1, 2], Some(3), None, Ok(1), Err("e"), b"by"];
    for (i, k) in keys.iter().enumerate() { m.insert(k, i); }
    let found = [];
    for k in keys { found.push(m[k]); }
    found"""
    assert value(src) == list(range(10))


def test_int_and_float_keys_stay_distinct_and_negative_zero_is_zero() -> None:
    src = """use std::collections::HashMap;
    let m = HashMap::new();
    m[1] = "int"; m[1.0] = "float"; m[0.0] = "zero"; m[-0.0] = "negative zero";
    [m.len(), m[1], m[1.0], m[0.0]]"""
    assert value(src) == [3, "int", "float", "negative zero"]


def test_vec_and_tuple_keys_with_the_same_items_are_distinct() -> None:
    src = """use std::collections::HashSet;
    let s = HashSet::new();
    s.insert([1, 2]); s.insert((1, 2)); s.insert([1, 2]);
    s.len()"""
    assert value(src) == 2


def test_key_is_kept_as_first_inserted_and_returned_by_iteration() -> None:
    src = """use std::collections::HashMap;
    let m = HashMap::new();
    assert_eq!(m.insert((1, [2]), "a"), None);
    assert_eq!(m.insert((1, [2]), "b"), Some("a"));
    m.iter().collect::<Vec>()"""
    assert value(src) == [[[1, [2]], "b"]]


@pytest.mark.parametrize(
    ("key", "shown"),
    [("'c'", "char"), ("true", "bool"), ("()", "()"), ("#{a: 1}", "Object"), ("Point { x: 1 }", "Point")],
)
def test_unhashable_keys_fail_as_upstream(key: str, shown: str) -> None:
    src = f"""use std::collections::HashMap;
    struct Point {{ x }}
    let m = HashMap::new();
    m.insert({key}, 1);"""
    message = failure(src)
    assert f"Unsupported unary operation `hash` on `{shown}`" in message
    assert "must be an integer, float, string" in message  # says what a key can be


@pytest.mark.parametrize(
    "use",
    [
        "HashSet::from_iter([f64::NAN])",
        "HashMap::new().get((1, f64::NAN))",
        "HashSet::new().contains(['x'])",
        "HashMap::from_iter([(Some('c'), 1)])",
    ],
)
def test_unhashable_values_fail_in_lookups_too(use: str) -> None:
    message = failure(f"use std::collections::{{HashMap, HashSet}}; {use}")
    assert "NaN" in message or "`char`" in message


def test_user_types_cannot_be_hashed_upstream_has_no_hash_protocol_for_scripts() -> None:
    src = """use std::collections::HashSet;
    enum Color { Red, Green }
    let s = HashSet::new();
    s.insert(Color::Red);"""
    assert "hash` on `Color::Red`" in failure(src) or "hash` on `Red`" in failure(src)


# --- iteration order -------------------------------------------------------------------------


def test_map_order_is_unspecified_but_consistent_across_iter_keys_values() -> None:
    """Upstream promises no order ("arbitrary order"); what holds is that one unmodified map
    visits its entries in the same order through `iter`, `keys`, `values`, `for` and `{:?}`."""
    src = """use std::collections::HashMap;
    let m = HashMap::new();
    for i in 0..200 { m.insert(`k${(i * 37) % 200}`, i); }
    let pairs = m.iter().collect::<Vec>();
    let keys = m.keys().collect::<Vec>();
    let values = m.values().collect::<Vec>();
    let looped = [];
    for (k, v) in m { looped.push((k, v)); }
    for (i, (k, v)) in pairs.iter().enumerate() {
        assert_eq!(keys[i], k);
        assert_eq!(values[i], v);
    }
    assert_eq!(looped, pairs);
    let sorted = keys.iter().collect::<Vec>();
    sorted.sort();
    sorted.dedup();
    [pairs.len(), sorted.len(), format!("{:?}", m).len() > 0]"""
    assert value(src) == [200, 200, True]


def test_vec_deque_iterates_front_to_back() -> None:
    src = """use std::collections::VecDeque;
    let d = VecDeque::new();
    d.push_back(2); d.push_front(1); d.push_back(3); d.push_front(0);
    d.rotate_left(1);
    let out = [];
    for x in d { out.push(x); }
    let all = [out, d.iter().collect::<Vec>(), d.iter().rev().collect::<Vec>(), [format!("{:?}", d)]];
    all"""
    assert value(src) == [[1, 2, 3, 0], [1, 2, 3, 0], [0, 3, 2, 1], ["[1, 2, 3, 0]"]]


def test_set_operations_yield_each_value_once() -> None:
    src = """use std::collections::HashSet;
    let a = HashSet::from_iter([1, 2, 3, 4]);
    let b = HashSet::from_iter([3, 4, 5]);
    let u = a.union(b).collect::<Vec>(); u.sort();
    let i = a.intersection(b).collect::<Vec>(); i.sort();
    let d = a.difference(b).collect::<Vec>(); d.sort();
    [u, i, d]"""
    assert value(src) == [[1, 2, 3, 4, 5], [3, 4], [1, 2]]


@pytest.mark.parametrize(
    "loop",
    [
        "for k in m.keys() { m.insert(k + 100, 0); }",
        "for (k, v) in m { m.remove(k); }",
        "for x in s { s.insert(x + 100); }",
        "for x in d { d.push_back(x); }",
    ],
)
def test_changing_a_collection_while_iterating_it_is_an_error(loop: str) -> None:
    src = f"""use std::collections::{{HashMap, HashSet, VecDeque}};
    let m = HashMap::from_iter([(1, 1), (2, 2)]);
    let s = HashSet::from_iter([1, 2]);
    let d = VecDeque::from_iter([1, 2]);
    {loop}"""
    assert "modified while being iterated" in failure(src)


# --- equality, sharing, cloning ----------------------------------------------------------------


def test_equality() -> None:
    src = """use std::collections::{HashMap, HashSet, VecDeque};
    let a = HashMap::from_iter([("x", [1]), ("y", [2])]);
    let b = HashMap::from_iter([("y", [2]), ("x", [1])]);
    let c = HashMap::from_iter([("y", [2]), ("x", [3])]);
    let d = VecDeque::from_iter([1, 2]);
    [a == b, a != c, HashSet::from_iter([1, 2]) == HashSet::from_iter([2, 1]),
     d == [1, 2], d == (1..3), d != [1, 2, 3], [1, 2] == d,
     d < VecDeque::from_iter([1, 3]), d > VecDeque::from_iter([1])]"""
    assert value(src) == [True] * 9


def test_comparing_a_map_with_another_type_is_an_error() -> None:
    assert "cannot compare `HashMap` with `Object`" in failure(
        "use std::collections::HashMap; HashMap::new() == #{}"
    )


def test_collections_are_shared_and_clone_copies() -> None:
    src = """use std::collections::{HashMap, HashSet};
    fn add(m) { m.insert("k", 1); }
    let a = HashMap::new();
    let b = a;
    add(b);
    let c = a.clone();
    c.insert("other", 2);
    let s = HashSet::new(); let t = s.clone(); t.insert(1);
    [a.len(), b.len(), c.len(), s.len(), t.len()]"""
    assert value(src) == [1, 1, 2, 0, 1]


@pytest.mark.parametrize(
    ("call", "missing"),
    [
        ("HashMap::new().retain(|k, v| true)", "`retain` on `HashMap`"),
        ("HashMap::new().get_mut(1)", "`get_mut` on `HashMap`"),
        ("HashSet::new().symmetric_difference(HashSet::new())", "`symmetric_difference` on `HashSet`"),
        ("HashSet::new().is_subset(HashSet::new())", "`is_subset` on `HashSet`"),
        ("VecDeque::new().is_empty()", "`is_empty` on `VecDeque`"),
        ("VecDeque::new().clone()", "`clone` on `VecDeque`"),
    ],
)
def test_methods_upstream_does_not_register_are_errors(call: str, missing: str) -> None:
    assert missing in failure(f"use std::collections::{{HashMap, HashSet, VecDeque}}; {call}")


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "message"),
    [
        ('let m = HashMap::new(); m["a"]', 'Type `HashMap` missing index: no key "a"'),
        ("let d = VecDeque::from_iter([1]); d[3]", "the length is `1` but the index is `3`"),
        ("let d = VecDeque::from_iter([1]); d[1] = 2;", "the length is `1` but the index is `1`"),
        ("let d = VecDeque::from_iter([1]); d.insert(2, 0);", "the length is `1` but the index is `2`"),
        ("let d = VecDeque::from_iter([1]); d.rotate_left(2);", "the length is `1` but the index is `2`"),
        ("let d = VecDeque::from_iter([1]); d.rotate_right(2);", "the length is `1` but the index is `2`"),
        ("HashMap::with_capacity(-1)", "`HashMap::with_capacity` expects a non-negative integer"),
        ("HashMap::from_iter([1])", "`HashMap::from_iter` expects `(key, value)` tuples, found `i64`"),
        ("HashMap::new().extend([(1, 2, 3)])", "`HashMap::extend` expects `(key, value)` tuples"),
        ("[1].iter().collect::<HashMap>()", "`collect::<HashMap>` expects `(key, value)` tuples"),
        ("HashSet::new().union([1])", "`HashSet::union` expects a `HashSet`, found `Vec`"),
        ("VecDeque::from::<Vec>((1, 2))", "expects a `Vec`, found `Tuple`"),
        ("let s = HashSet::new(); s[1]", "cannot index `HashSet`"),
    ],
)
def test_error_messages_name_the_value_and_the_remedy(src: str, message: str) -> None:
    assert message in failure(f"use std::collections::{{HashMap, HashSet, VecDeque}}; {src}")


def test_vec_deque_remove_out_of_range_is_none() -> None:
    assert value("use std::collections::VecDeque; VecDeque::from_iter([1]).remove(5)") is not None


def test_capacity_past_the_value_cap_is_a_limit_error() -> None:
    with pytest.raises(RuneLimitError):
        value("use std::collections::VecDeque; VecDeque::with_capacity(20000000)")


def test_big_map_counts_against_the_memory_budget() -> None:
    src = "use std::collections::HashMap; let m = HashMap::new(); for i in 0..200000 { m.insert(i, i); }"
    unit = compile_source(src, "big.rn")
    with pytest.raises(RuneLimitError):
        unit.call("main", max_memory=1_000_000)
    unit.call("main")  # within the default budget


# --- results and collect ---------------------------------------------------------------------


def test_collections_leave_a_script_as_json_data() -> None:
    src = """use std::collections::{HashMap, HashSet, VecDeque};
    let m = HashMap::new(); m["a"] = VecDeque::from_iter([1, 2]); m["b"] = HashSet::from_iter(["x"]);
    m"""
    unit = compile_source(src, "result.rn")
    assert to_json(unit.call("main", raw=True)) == {"a": [1, 2], "b": ["x"]}


def test_map_with_tuple_keys_cannot_become_json() -> None:
    unit = compile_source("use std::collections::HashMap; HashMap::from_iter([((1, 2), 3)])", "r.rn")
    with pytest.raises(RuneRuntimeError, match=r"`Tuple` key \(\(1, 2\)\) cannot cross"):
        to_json(unit.call("main", raw=True))


def test_collect_into_each_collection() -> None:
    src = """use std::collections::{HashMap, HashSet, VecDeque};
    let m = (0..4).iter().map(|i| (i, i * i)).collect::<HashMap>();
    let s = [1, 1, 2].iter().collect::<HashSet>();
    let d = (0..3).iter().collect::<VecDeque>();
    [m[3], s.len(), d.pop_back()]"""
    assert value(src) == [9, 2, {"Some": 2}]


# --- the inline paths of the generated code ----------------------------------------------------


def test_inline_paths_are_generated(generated: Callable[[str], str]) -> None:
    code = generated(
        """use std::collections::{HashMap, VecDeque};
        fn f(m, q, k) {
            match m.get(k) { Some(c) => m.insert(k, c + 1), None => m.insert(k, 1) };
            while let Some(x) = q.pop_front() { q.push_back(x); break; }
        }"""
    )
    assert ".table.get(" in code and "_NOVAL" in code  # no Option built for the match
    assert ".items.popleft()" in code and ".items.append(" in code


def test_raw_option_paths_fall_back_for_other_receivers() -> None:
    src = """use std::collections::HashMap;
    struct Bag { items }
    impl Bag {
        fn get(self, k) { if k == 0 { Some(self.items) } else { None } }
        fn pop_front(self) { 42 }
    }
    let out = [];
    let bag = Bag { items: 7 };
    for k in 0..2 { match bag.get(k) { Some(x) => out.push(x), None => out.push(-1) } }
    match bag.pop_front() { Some(x) => out.push(x), None => out.push(-2), _ => out.push(-3) }
    if let Some(x) = #{a: 5}.get("a") { out.push(x); }
    let m = HashMap::new(); m.insert((1, 1), 9);
    if let Some(x) = m.get((1, 1)) { out.push(x); }
    match m.get([0]) { None => out.push(0), _ => out.push(-4) }
    out"""
    assert value(src) == [7, -1, -3, 5, 9, 0]


def test_a_value_that_is_no_option_matches_neither_some_nor_none() -> None:
    """As with any other subject: no arm matches, so the match gives what an unmatched match
    gives (the same as matching the plain value)."""
    src = """struct Q;
    impl Q { fn pop_front(self) { 1 } }
    let q = Q;
    let raw = match q.pop_front() { Some(x) => x, None => 0 };
    let plain = match 1 { Some(x) => x, None => 0 };
    let taken = if let Some(x) = q.pop_front() { x } else { -1 };
    [raw == plain, taken]"""
    assert value(src) == [True, -1]


def test_inline_insert_and_push_keep_their_semantics() -> None:
    src = """use std::collections::{HashMap, VecDeque};
    struct Log { seen }
    impl Log { fn insert(self, k, v) { self.seen.push((k, v)); } fn push_back(self, x) { self.seen.push(x); } }
    let log = Log { seen: [] };
    log.insert("a", 1);
    log.push_back(2);
    let m = HashMap::new();
    m.insert(1.5, "f");
    m.insert("s", "t");
    m.insert("s", "u");
    let d = VecDeque::new();
    d.push_back(1);
    [log.seen, m.iter().collect::<Vec>(), [d.len()]]"""
    assert value(src) == [[["a", 1], 2], [[1.5, "f"], ["s", "u"]], [1]]


def test_rune_fixture_runs_collections(rune: Run) -> None:
    out, result = rune(
        """use std::collections::HashMap;
        pub fn main() { let m = HashMap::new(); m[1] = "a"; println!("{:?}", m); m.len() }"""
    )
    assert (out, result) == ('{1: "a"}\n', 1)


def test_nested_option_patterns_inside_a_raw_subject() -> None:
    src = """use std::collections::{HashMap, VecDeque};
    let m = HashMap::new(); m.insert(1, Some(2)); m.insert(2, None);
    let out = [];
    for k in 0..3 {
        match m.get(k) { Some(Some(x)) => out.push(x), Some(None) => out.push(-1), None => out.push(-2) }
    }
    let q = VecDeque::from_iter([(1, Some(3))]);
    if let Some((a, Some(b))) = q.front() { out.push(a + b); }
    out"""
    assert value(src) == [-2, 2, -1, 4]


@pytest.mark.parametrize("path", ["HashMap::foo()", "HashSet::FOO", "VecDeque::retain"])
def test_unknown_associated_items_are_errors_naming_them(path: str) -> None:
    message = failure(f"use std::collections::{{HashMap, HashSet, VecDeque}}; {path}")
    name = path.rstrip("()")
    assert f"missing item `{name}`" in message
