"""Property tests: Python/JSON values survive a round trip through Rune unchanged."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from toolmesh.plugins.rune.lang import compile_source, from_python, to_python
from toolmesh.plugins.rune.lang.values import NONE, Option, Result

I64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SCALARS = st.none() | st.booleans() | I64 | st.floats(allow_nan=False) | st.text(max_size=20)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.text(max_size=8).filter(lambda k: k not in ("Some", "None", "Ok", "Err")), inner, max_size=5
        )
    ),
    max_leaves=20,
)

IDENTITY = compile_source("fn id(x) { x }\nfn both(a, b) { [a, b] }", "bridge.rn")


@settings(max_examples=150, deadline=None)
@given(JSON)
def test_round_trip_through_rune(value: object) -> None:
    assert IDENTITY.call("id", value) == value
    assert json.dumps(IDENTITY.call("id", value)) == json.dumps(value)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.text(max_size=5), I64, max_size=6))
def test_object_key_order_kept(value: dict) -> None:
    assert list(IDENTITY.call("id", value)) == list(value)


@settings(max_examples=50, deadline=None)
@given(JSON)
def test_option_result_mapping(value: object) -> None:
    assert to_python(Option(True, from_python(value))) == {"Some": value}
    assert to_python(Result(False, from_python(value))) == {"Err": value}
    assert from_python({"Ok": value}).is_ok
    assert from_python({"None": None}) is NONE


def test_rune_values_to_python() -> None:
    unit = compile_source("struct P { x, y } fn main() { (P { x: 1, y: 'c' }, Some(()), Err(\"e\"), None) }")
    assert unit.call("main") == [{"x": 1, "y": "c"}, {"Some": None}, {"Err": "e"}, {"None": None}]


def test_out_of_range_int_is_rejected() -> None:
    import pytest
    from toolmesh.plugins.rune.lang import RuneRuntimeError

    with pytest.raises(RuneRuntimeError, match="does not fit in i64"):
        from_python(2**63)
