"""Every item upstream's std modules register (corpus/std_items.json) resolves here, or is listed.

For each item a small script uses it the way its kind is used: a constant or function by its
path, a macro by a call, a method by a call on a sample receiver of its type, a protocol by the
operation it implements (``==`` for ``PARTIAL_EQ``, ``for`` for ``INTO_ITER``, ``{:?}`` for
``DEBUG_FMT`` ...). A method call with no arguments "resolves" unless it fails as a missing method;
everything else must run without error. Items listed in corpus/std_items_absent.json (with the
reason) must not resolve, and using them must fail naming the item: at compile time for paths
and macros, with the missing-method error for methods (dispatch is by the receiver's value).
The run prints, per module, how many items resolve.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneCompileError, RuneError, RunePanic, RuneSyntaxError, compile_source

from tests.plugins.rune.corpus_runs import per_module, write_section

CORPUS = Path(__file__).parent / "corpus"
ITEMS: list[dict[str, Any]] = json.loads((CORPUS / "std_items.json").read_text())["items"]
ABSENT: dict[str, str] = json.loads((CORPUS / "std_items_absent.json").read_text())
_OUTCOMES: dict[str, bool] = {}
# Receivers no script can hold a value of: `std::fmt::Error` / `std::io::Error` come from a failing
# formatter or writer, `Format` from the internal `#[builtin] format!` form (which yields the
# formatted String here), `Bencher` from a `#[bench]` run (there is no benchmark runner).
UNOBTAINABLE = frozenset({"Error", "Format", "Bencher"})

_PRELUDE = """
fn gen() { yield 1; yield 2; }
async fn stream() { yield 1; }
fn try_op(v) { let x = v?; Ok(x) }
"""

# Rune expressions of a value of each receiver type (and of the iterator types a module returns).
_HASH_MAP = "{ let m = std::collections::HashMap::new(); m.insert(1, 2); m }"
_HASH_SET = "{ let s = std::collections::HashSet::new(); s.insert(1); s }"
_VEC_DEQUE = "{ let d = std::collections::VecDeque::new(); d.push_back(1); d.push_back(2); d }"
SAMPLES: dict[str, str] = {
    "String": 'String::from("ab")', "i64": "5", "u64": "5u64", "f64": "2.5", "char": "'a'",
    "bool": "true", "Vec": "[1, 2]", "Object": "#{a: 1}", "Bytes": 'b"ab"', "Tuple": "(1, 2)",
    "Option": "Some(1)", "Result": "Ok(1)", "HashMap": _HASH_MAP, "HashSet": _HASH_SET,
    "VecDeque": _VEC_DEQUE, "Iterator": "[1, 2, 3].iter()", "DoubleEndedIterator": "[1, 2, 3].iter()",
    "ExactSizeIterator": "(0..3).iter()", "Rev": "[1, 2].iter().rev()", "Chain": "[1].iter().chain([2])",
    "Enumerate": "[1].iter().enumerate()", "Filter": "[1].iter().filter(|x| true)",
    "Map": "[1].iter().map(|x| x)", "FilterMap": "[1].iter().filter_map(|x| Some(x))",
    "FlatMap": "[1].iter().flat_map(|x| [x])", "Peekable": "[1].iter().peekable()",
    "Skip": "[1, 2].iter().skip(1)", "Take": "[1, 2].iter().take(1)", "Empty": "std::iter::empty()",
    "Once": "std::iter::once(1)", "Range": "(0..3)", "RangeFrom": "(0..)", "RangeFull": "(..)",
    "RangeInclusive": "(0..=3)", "RangeTo": "(..3)", "RangeToInclusive": "(..=3)",
    "RangeIter": "(0..3).iter()", "RangeFromIter": "(0..).iter()", "RangeInclusiveIter": "(0..=3).iter()",
    "Ordering": "std::cmp::Ordering::Less", "PartialEq": "1", "PartialOrd": "1", "Ord": "1", "Eq": "1",
    "Clone": "1", "Chars": '"ab".chars()', "Split": '"a b".split(" ")', "Function": "|x| x",
    "Generator": "gen()", "Stream": "stream()", "GeneratorState": "gen().resume(())",
    "Snapshot": "std::mem::snapshot([1]).unwrap()", "Type": "std::any::Type::of_val(1)",
    "ControlFlow": "std::ops::ControlFlow::Continue(1)",
    "std::option::Iter": "Some(1).iter()", "std::collections::hash_map::Iter": f"{_HASH_MAP}.iter()",
    "Keys": f"{_HASH_MAP}.keys()", "Values": f"{_HASH_MAP}.values()",
    "std::collections::hash_set::Iter": f"{_HASH_SET}.iter()",
    "Difference": f"{_HASH_SET}.difference({_HASH_SET})",
    "Intersection": f"{_HASH_SET}.intersection({_HASH_SET})", "Union": f"{_HASH_SET}.union({_HASH_SET})",
    "std::collections::vec_deque::Iter": f"{_VEC_DEQUE}.iter()", "std::slice::Iter": "[1, 2].iter()",
    "std::ops::generator::Iter": "gen().iter()", "RuneIter": "#{a: 1}.iter()",
    "RuneIterKeys": "#{a: 1}.keys()", "RuneValues": "#{a: 1}.values()",
}
_INDEX = {"String": "0..1", "HashMap": "1", "Object": '"a"'}
_PROTOCOLS: dict[str, str] = {
    "PARTIAL_EQ": "v == v", "EQ": "std::ops::eq(v, v)", "PARTIAL_CMP": "std::ops::partial_cmp(v, v)",
    "CMP": "std::ops::cmp(v, v)", "HASH": "std::ops::hash(v)", "CLONE": "v.clone()",
    "DEBUG_FMT": 'format!("{:?}", v)', "DISPLAY_FMT": 'format!("{}", v)',
    "INTO_ITER": "{ for x in v { break; } }", "NEXT": "v.next()", "NEXT_BACK": "v.next_back()",
    "SIZE_HINT": "v.size_hint()", "LEN": "v.len()", "NTH": "v.nth(0)", "NTH_BACK": "v.nth_back(0)",
    "LT": "v < v", "LE": "v <= v", "GT": "v > v", "GE": "v >= v", "INDEX_GET": "v[{index}]",
    "INDEX_SET": "{ v[{index}] = v[{index}]; }", "ADD": "v + v", "ADD_ASSIGN": "{ v += v; }",
    "MAX": "v.max(v)", "MIN": "v.min(v)", "TRY": "try_op(v)", "GET": "v.0",
    "IS_VARIANT": "match v { Some(_) | Ok(_) | std::cmp::Ordering::Less => 1, _ => 2 }",
}
_MACROS = {
    "stringify": "stringify!(a + b)", "panic": 'panic!("boom")', "format": 'format!("{}", 1)',
    "dbg": "dbg!(1)", "print": 'print!("{}", "")', "println": 'println!("")', "file": "file!()",
    "line": "line!()", "assert": "assert!(true)", "assert_eq": "assert_eq!(1, 1)",
    "assert_ne": "assert_ne!(1, 2)",
}


def item_id(item: dict[str, Any]) -> str:
    receiver = f"{item['receiver']}::" if item["receiver"] else ""
    suffix = f" ({item['kind']})" if item["kind"] in ("protocol", "macro") else ""
    return f"{item['module']}::{receiver}{item['item']}{suffix}"


def _sample(item: dict[str, Any]) -> str:
    receiver = item["receiver"]
    return SAMPLES.get(f"{item['module']}::{receiver}") or SAMPLES[receiver]


def usage(item: dict[str, Any]) -> str:
    """The body of a ``main`` that uses the item."""
    kind, name, receiver = item["kind"], item["item"], item["receiver"]
    if kind == "constant":
        return f"{item['module']}::{name}"
    if kind == "function":
        return f"let f = {item['module']}::{name}; f"
    if kind == "associated":
        return f"let f = {item['module']}::{receiver}::{name.partition('::<')[0]}; f"
    if kind == "macro":
        return f"{item['module']}::{_MACROS[name]}"  # by its path: `std::test::assert_eq!(1, 1)`
    if kind == "method":
        return f"let v = {_sample(item)}; v.{name}()"
    index = _INDEX.get(receiver, "0")
    return f"let v = {_sample(item)}; " + _PROTOCOLS[name].replace("{index}", index)


def resolves(item: dict[str, Any]) -> tuple[bool, str]:
    """Whether the implementation has the item, and the error when it does not."""
    source = f"{_PRELUDE}\npub fn main() {{ {usage(item)} }}"
    try:
        unit = compile_source(source, filename="probe.rn")
        value = unit.call("main", raw=True, budget=100_000)
    except (RuneCompileError, RuneSyntaxError) as e:
        return False, str(e)
    except RunePanic as e:
        return item["item"] == "panic" and "boom" in str(e), str(e)  # `panic!("boom")` did its job
    except RuneError as e:
        if item["kind"] == "method" or item["kind"] == "associated":
            name = item["item"].partition("::<")[0]
            missing = f"missing method `{name}`" in str(e) or f"missing item `{name}" in str(e)
            missing = missing or f"::{name}`" in str(e) and "missing item" in str(e)
            return not missing, str(e)
        return False, str(e)
    if item["kind"] in ("function", "associated") and not callable(value):
        return False, f"`{item['item']}` is a `{type(value).__name__}`, not a function"
    if item["kind"] == "constant" and (callable(value) or not isinstance(value, (int, float))):
        return False, f"`{item['item']}` is a `{type(value).__name__}`, not a number"
    return True, ""


def test_items_are_unique_and_listed_absences_are_real_items() -> None:
    ids = [item_id(item) for item in ITEMS]
    assert len(ids) == len(set(ids))
    assert sorted(set(ABSENT) - set(ids)) == []
    assert all(reason.strip() for reason in ABSENT.values())


@pytest.fixture(scope="module", autouse=True)
def _report_per_module(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if not _OUTCOMES:
        return
    present, total = per_module(ITEMS, item_id, _OUTCOMES)
    lines = [f"{'module':<32} {'exist':>5} {'total':>6}"]
    lines += [f"{module:<32} {present[module]:>5} {total[module]:>6}" for module in sorted(total)]
    lines.append(f"{'all':<32} {sum(present.values()):>5} {sum(total.values()):>6}")
    write_section(request, "Rune std items that exist, per module", lines)


@pytest.mark.parametrize("item", ITEMS, ids=item_id)
def test_std_item(item: dict[str, Any]) -> None:
    reason = ABSENT.get(item_id(item))
    if item["receiver"] in UNOBTAINABLE:
        _OUTCOMES[item_id(item)] = False
        assert reason, f"{item_id(item)} belongs to a type no script can obtain and must be listed"
        return
    found, error = resolves(item)
    _OUTCOMES[item_id(item)] = found
    if reason is None:
        assert found, f"{item_id(item)} does not resolve: {error}"
        return
    assert not found, f"{item_id(item)} resolves but is listed as absent ({reason})"
    name = item["receiver"] if item["kind"] == "protocol" else item["item"].partition("::<")[0]
    assert name in error, f"the error does not name `{name}`: {error}"
    if item["kind"] in ("constant", "function", "associated", "macro"):
        assert "compile" in error.lower() or "missing item" in error or "unknown macro" in error, error


@pytest.mark.parametrize(
    "item",
    [
        {"module": "std::f64", "receiver": None, "item": "NOPE", "kind": "constant"},
        {"module": "std::vec", "receiver": "Vec", "item": "frobnicate", "kind": "method"},
        {"module": "std::string", "receiver": "String", "item": "frobnicate", "kind": "associated"},
        {"module": "std::io", "receiver": None, "item": "frobnicate", "kind": "function"},
        {"module": "std::object", "receiver": "Object", "item": "LT", "kind": "protocol"},  # no PartialOrd
    ],
    ids=item_id,
)
def test_the_probe_sees_a_missing_item(item: dict[str, Any]) -> None:
    found, error = resolves(item)
    assert not found
    assert (item["receiver"] if item["kind"] == "protocol" else item["item"]) in error
