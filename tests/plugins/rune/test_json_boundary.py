"""Values cross a Rune tool's boundary the way upstream's serde writes and reads JSON.

Results: ``Some(v)`` is ``v`` and ``None`` is ``null`` at any depth, ``()`` is ``null``, chars are
strings, bytes arrays of numbers, tuples arrays; structs and enum variants as serde's derive writes
them; ranges, functions and non-finite floats are refused, naming the place. Arguments: read as
serde reads JSON (a one-key object stays an object); a ``number`` keeps a whole number an ``i64``,
an ``integer`` refuses anything else. End to end through a real node, and unit by unit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import toolmesh.plugins.rune as rune_plugin
from toolmesh import InvalidArguments, Mesh, Settings
from toolmesh.plugins.rune.arguments import script_arguments
from toolmesh.plugins.rune.lang import RuneRuntimeError, compile_source
from toolmesh.plugins.rune.lang.json_values import from_json, to_json
from toolmesh.plugins.rune.lang.std_u64 import U64
from toolmesh.plugins.rune.lang.values import NONE, Option, Result
from toolmesh.plugins.rune.tool_format import RuneTool, ToolParam
from toolmesh.testing import running_node

TOOLS = """
use std::collections::{HashMap, HashSet, VecDeque};

struct Point { x, y }
struct Meters(m);
struct Pair(a, b);
struct Nothing;
enum Shape { Dot, Circle(r), Rect(w, h), Named { label } }

#[tool(desc = "every kind of value")]
pub fn values() {
    let counts = HashMap::new();
    counts.insert(1, Some("one"));
    counts.insert(2, None);
    #{
        some: Some(1), none: None, nested: [Some(Some(2)), Some(None), None, #{deep: Some([None])}],
        ok: Ok(Some(3)), err: Err(None),
        unit: (), tuple: (1, 'c', (), Some(2)), bytes: b"hi", char: 'x', float: 1.5, whole: 2.0,
        point: Point { x: 1, y: None }, meters: Meters(Some(3)), pair: Pair(1, None), nothing: Nothing,
        dot: Shape::Dot, circle: Shape::Circle(Some(1.5)), rect: Shape::Rect(2, None),
        named: Shape::Named { label: Some("l") },
        counts: counts, set: HashSet::from_iter([7]), deque: VecDeque::from_iter([None, Some(2)]),
    }
}

#[tool(desc = "None at the top")]
pub fn nothing() { None }

#[tool(desc = "Some(None) at the top")]
pub fn some_none() { Some(None) }

#[tool(desc = "a range inside the result")]
pub fn range() { #{ok: 1, spans: [1..3]} }

#[tool(desc = "a function inside the result")]
pub fn function() { #{f: [1, |x| x]} }

#[tool(desc = "vectors nested 100,000 deep")]
pub fn deep() { let v = []; for i in 0..100000 { v = [v]; } Some(v) }

#[tool(desc = "a map whose keys clash as JSON keys")]
pub fn clash() { HashMap::from_iter([(1, "int"), ("1", "string")]) }

#[param(name = "x", type = "number", desc = "any number")]
#[tool(desc = "compare a number with 3")]
pub fn is_three(x) { #{three: x == 3, int: x is i64, float: x is f64, x: x} }

#[param(name = "i", type = "integer", desc = "an integer")]
#[tool(desc = "the next integer")]
pub fn next(i) { i + 1 }

#[param(name = "o", type = "object", desc = "any object")]
#[param(name = "a", type = "array", desc = "any array", required = false)]
#[tool(desc = "what the script received")]
pub fn received(o, a) { #{o_is_object: o is Object, keys: o.keys().collect::<Vec>(), a_is_some: a.is_some(), a: a} }

#[tool(desc = "an object that looks like an Option")]
pub fn option_like() { #{"Some": 1} }

#[tool(desc = "read another tool's result")]
pub async fn relay() {
    let value = toolmesh::call("rune_option_like", #{}).await?;
    #{is_object: value is Object, some: value["Some"]}
}
"""

VALUES = {
    "some": 1,
    "none": None,
    "nested": [2, None, None, {"deep": [None]}],
    "ok": {"Ok": 3},
    "err": {"Err": None},
    "unit": None,
    "tuple": [1, "c", None, 2],
    "bytes": [104, 105],
    "char": "x",
    "float": 1.5,
    "whole": 2.0,
    "point": {"x": 1, "y": None},
    "meters": 3,
    "pair": [1, None],
    "nothing": None,
    "dot": "Dot",
    "circle": {"Circle": 1.5},
    "rect": {"Rect": [2, None]},
    "named": {"Named": {"label": "l"}},
    "counts": {"1": "one", "2": None},
    "set": [7],
    "deque": [None, 2],
}


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    (tmp_path / "values.rn").write_text(TOOLS)
    return tmp_path


@pytest.mark.anyio
@pytest.mark.usefixtures("no_blocking_calls")
async def test_results_leave_as_serde_writes_them(toolmesh_settings: Settings, tools_dir: Path) -> None:
    async with (
        running_node(toolmesh_settings, sources=[str(tools_dir)], plugins=[rune_plugin], load_entrypoints=False),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        values = await mesh.call("rune_values", {})
        assert values.error is None, values.error
        assert values.structured_content == VALUES
        assert type(values.structured_content["whole"]) is float  # a float stays a float
        assert (await mesh.call("rune_nothing", {})).structured_content is None
        assert (await mesh.call("rune_some_none", {})).structured_content is None

        refused = {name: await mesh.call(f"rune_{name}", {}) for name in ("range", "function", "clash", "deep")}
        for name, result in refused.items():
            assert result.error is not None and result.error.code == "execution_failed", name
        assert "the result at spans[0] is a range, which has no JSON form" in refused["range"].error.message
        assert "the result at f[1] is a `Function`, which has no JSON form" in refused["function"].error.message
        assert 'both 1 and "1" as keys' in refused["clash"].error.message
        assert "the result is nested too deeply to become JSON" in refused["deep"].error.message

        # the node still answers, and the refused results left nothing behind
        assert (await mesh.call("rune_values", {})).structured_content == VALUES


@pytest.mark.anyio
@pytest.mark.usefixtures("no_blocking_calls")
async def test_arguments_arrive_as_serde_reads_them(toolmesh_settings: Settings, tools_dir: Path) -> None:
    async with (
        running_node(toolmesh_settings, sources=[str(tools_dir)], plugins=[rune_plugin], load_entrypoints=False),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        for sent in (3, 3.0):  # a whole number is an i64 however the caller wrote it
            three = await mesh.call("rune_is_three", {"x": sent})
            assert three.structured_content == {"three": True, "int": True, "float": False, "x": 3}
        half = await mesh.call("rune_is_three", {"x": 3.5})
        assert half.error is not None and "cannot compare `f64` with `i64`" in half.error.message
        assert (await mesh.call("rune_next", {"i": 41})).structured_content == 42
        assert (await mesh.call("rune_next", {"i": 41.0})).structured_content == 42  # JSON Schema: an integer

        for bad in (3.5, 2**63, True, "3"):
            result = await mesh.call("rune_next", {"i": bad})
            assert result.error is not None and result.error.code == "invalid_arguments", bad
        past_i64 = await mesh.call("rune_next", {"i": 2**63})  # passes the schema: refused by the tool
        assert past_i64.error is not None
        assert "argument 'i' is outside the range of an i64: 9223372036854775808" in past_i64.error.message

        received = await mesh.call("rune_received", {"o": {"Some": 1}, "a": [{"Ok": 2}, None]})
        assert received.structured_content == {
            "o_is_object": True,
            "keys": ["Some"],
            "a_is_some": True,
            "a": [{"Ok": 2}, None],
        }
        absent = await mesh.call("rune_received", {"o": {"None": None}})
        assert absent.structured_content == {"o_is_object": True, "keys": ["None"], "a_is_some": False, "a": None}

        relayed = await mesh.call("rune_relay", {})  # a nested call's result is read the same way
        assert relayed.structured_content == {"is_object": True, "some": 1}


# --- unit by unit ---------------------------------------------------------------------------------


def _value(source: str) -> Any:
    return compile_source(f"fn main() {{ {source} }}", "value.rn").call("main", raw=True)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Some(Some(1))", 1),
        ("Some(None)", None),
        ("[None, Some(#{a: None})]", [None, {"a": None}]),
        ("Ok(None)", {"Ok": None}),
        ("Err(Some(1))", {"Err": 1}),
        ("()", None),
        ("('a', b'a', 1.0)", ["a", 97, 1.0]),
        ('b""', []),
        ("#{}", {}),
        ("std::cmp::Ordering::Less", "Less"),
    ],
)
def test_to_json(source: str, expected: Any) -> None:
    assert to_json(_value(source)) == expected


def test_to_json_u64_is_a_json_integer() -> None:
    data = to_json([U64(2**64 - 1), Option(True, U64(0))])
    assert data == [2**64 - 1, 0] and type(data[0]) is int


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("#{a: [0.0 / 0.0]}", r"the result at a\[0\] is the float NaN, which JSON cannot carry"),
        ("Some(#{r: ..2})", r"the result at r is a range, which has no JSON form"),
        ("Err([|| 1])", r"the result at Err\[0\] is a `Function`, which has no JSON form"),
        ("Ok(1.0 / 0.0)", r"the result at Ok is the float inf"),
        ("let v = []; for i in 0..100000 { v = [v]; } v", r"the result is nested too deeply"),
    ],
)
def test_to_json_refuses_with_the_place(source: str, message: str) -> None:
    with pytest.raises(RuneRuntimeError, match=message):
        to_json(_value(source), "the result")


def test_from_json_keeps_one_key_objects_as_objects() -> None:
    assert from_json({"Some": 1}) == {"Some": 1}
    assert from_json({"None": None}) == {"None": None}
    assert from_json([None, {"Ok": [1.5]}]) == [None, {"Ok": [1.5]}]
    with pytest.raises(RuneRuntimeError, match="integer 18446744073709551615 does not fit in i64"):
        from_json([2**64 - 1])


def _tool(*params: ToolParam, positional: bool = True) -> RuneTool:
    return RuneTool(
        name="rune_t",
        function="t",
        description="",
        doc="",
        version="0.1.0",
        tags=(),
        params=params,
        positional=tuple(p.name for p in params) if positional else None,
        timeout_ms=None,
        is_async=False,
        file="t.rn",
        line=1,
        format="attribute",
    )


def test_script_arguments_fit_the_declared_types() -> None:
    tool = _tool(ToolParam("n", "number", "n"), ToolParam("i", "integer", "i"), ToolParam("o", "object", "o", False))
    args = script_arguments(tool, {"n": 2.0, "i": -7.0, "o": {"Some": 1}})
    assert args[:2] == [2, -7] and type(args[0]) is int and type(args[1]) is int
    assert type(args[2]) is Option and args[2].value == {"Some": 1}
    assert script_arguments(tool, {"n": 2.5, "i": 1})[0] == 2.5
    assert script_arguments(tool, {"n": 1e300, "i": 1})[0] == 1e300  # whole, but past i64: a float
    assert script_arguments(tool, {"n": 1, "i": 1})[2] is NONE
    spread = _tool(*tool.params, positional=False)
    assert script_arguments(spread, {"n": 1, "i": 2})[0][:2] == [1, 2]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n": 1, "i": 3.5}, "argument 'i' is not an integer: 3.5"),
        ({"n": 1, "i": True}, "argument 'i' is not an integer: true"),
        ({"n": 1, "i": 1e19}, "argument 'i' is outside the range of an i64: 1e\\+19"),
        ({"n": "1", "i": 1}, "argument 'n' is not a number: \"1\""),
        ({"n": 2**64, "i": 1}, "argument 'n' is outside the range of an i64"),
        ({"n": 1, "i": 1, "o": [1]}, "argument 'o' is not an object: \\[1\\]"),
        ({"n": 1}, "the required argument 'i' is missing"),
    ],
)
def test_script_arguments_refuse_what_does_not_fit(arguments: dict[str, Any], message: str) -> None:
    tool = _tool(ToolParam("n", "number", "n"), ToolParam("i", "integer", "i"), ToolParam("o", "object", "o", False))
    with pytest.raises(InvalidArguments, match=message):
        script_arguments(tool, arguments)


def test_top_level_result_is_unwrapped_before_conversion() -> None:
    assert to_json(Result(True, Option(True, 1))) == {"Ok": 1}  # nested: serde's Result form
