"""A tool's own annotation keys travel beside MCP's hints: on the wire under ``extra``, flat for MCP."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema_rs
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from toolmesh.contracts import NodeEntry, ToolAnnotations, ToolSpec, decode_node_entry, encode

from tests.contracts.strategies import JSON_OBJECTS, PROPERTY

HINTS = {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
ANUBIS = {"confidence": 0.95, "category": "text-processing", "tags": ["nlp", "text"]}
SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "contracts" / "NodeEntry.schema.json"


def test_from_mcp_splits_a_flat_map_into_hints_and_own_keys() -> None:
    annotations = ToolAnnotations.from_mcp({"readOnlyHint": True, "openWorldHint": False, **ANUBIS})
    assert annotations.read_only_hint is True and annotations.open_world_hint is False
    assert annotations.destructive_hint is None
    assert annotations.extra == ANUBIS


def test_as_mcp_lists_own_keys_beside_the_hints() -> None:
    annotations = ToolAnnotations(title="Count", idempotent_hint=True, extra=ANUBIS)
    assert annotations.as_mcp() == {"title": "Count", "idempotentHint": True, **ANUBIS}
    assert ToolAnnotations(read_only_hint=True).as_mcp() == {"readOnlyHint": True}


def test_a_standard_hint_wins_a_clash() -> None:
    clashing = ToolAnnotations(read_only_hint=False, extra={"readOnlyHint": "yes", "openWorldHint": 1, "k": 2})
    assert clashing.as_mcp() == {"readOnlyHint": False, "k": 2}


def test_from_mcp_treats_a_null_hint_as_unset_and_keeps_null_own_keys() -> None:
    annotations = ToolAnnotations.from_mcp({"title": None, "readOnlyHint": None, "note": None})
    assert annotations == ToolAnnotations(extra={"note": None})


def test_from_mcp_keeps_keys_that_look_like_wire_fields() -> None:
    """``extra`` and snake_case hint names are a server's own keys like any other."""
    flat = {"extra": {"a": 1}, "read_only_hint": "maybe", "readOnlyHint": True}
    annotations = ToolAnnotations.from_mcp(flat)
    assert annotations.read_only_hint is True
    assert annotations.extra == {"extra": {"a": 1}, "read_only_hint": "maybe"}
    assert annotations.as_mcp() == flat


def test_from_mcp_refuses_a_hint_of_the_wrong_type() -> None:
    with pytest.raises(msgspec.ValidationError, match="readOnlyHint"):
        ToolAnnotations.from_mcp({"readOnlyHint": "yes"})


def test_own_keys_travel_under_extra_in_the_catalog() -> None:
    spec = ToolSpec(name="count", annotations=ToolAnnotations(read_only_hint=True, extra=ANUBIS))
    wire = json.loads(encode(NodeEntry(node="n1", tools=(spec,))))
    assert wire["tools"][0]["annotations"] == {"readOnlyHint": True, "extra": ANUBIS}
    assert jsonschema_rs.validator_for(json.loads(SCHEMA.read_text("utf-8"))).is_valid(wire)
    assert decode_node_entry(encode(NodeEntry(node="n1", tools=(spec,)))).tools[0] == spec


def test_annotations_stay_hashable() -> None:
    """Hashable as before ``extra``: a ``@toolmesh.tool`` definition (a frozen dataclass) hashes them."""
    assert hash(ToolAnnotations(read_only_hint=True, extra=ANUBIS)) == hash(ToolAnnotations.from_mcp(
        {"readOnlyHint": True, **ANUBIS}
    ))
    assert len({ToolAnnotations(read_only_hint=True), ToolAnnotations(read_only_hint=True, extra={"k": 1})}) == 2


def test_no_own_keys_leave_the_wire_form_as_it_was() -> None:
    assert json.loads(encode(ToolAnnotations(read_only_hint=True))) == {"readOnlyHint": True}


class OlderAnnotations(msgspec.Struct, kw_only=True, rename="camel"):
    """``ToolAnnotations`` as readers built before ``extra`` know it."""

    read_only_hint: bool | None = None


class OlderSpec(msgspec.Struct, kw_only=True):
    name: str
    annotations: OlderAnnotations | None = None


def test_a_reader_without_extra_still_decodes_the_hints() -> None:
    """Nodes and clients built before ``extra`` existed ignore it and keep the hints."""
    spec = ToolSpec(name="count", annotations=ToolAnnotations(read_only_hint=True, extra=ANUBIS))
    older = msgspec.json.decode(encode(spec), type=OlderSpec)
    assert older.annotations == OlderAnnotations(read_only_hint=True)


_ANNOTATIONS = st.builds(
    ToolAnnotations,
    title=st.none() | st.text(max_size=8),
    read_only_hint=st.none() | st.booleans(),
    destructive_hint=st.none() | st.booleans(),
    idempotent_hint=st.none() | st.booleans(),
    open_world_hint=st.none() | st.booleans(),
    extra=JSON_OBJECTS.map(lambda own: {key: value for key, value in own.items() if key not in HINTS}),
)


@PROPERTY
@given(_ANNOTATIONS)
def test_flattening_round_trips(annotations: ToolAnnotations) -> None:
    """from_mcp(as_mcp(a)) == a, and the flat map survives JSON (as MCP carries it)."""
    flat = annotations.as_mcp()
    assert ToolAnnotations.from_mcp(flat) == annotations
    assert ToolAnnotations.from_mcp(json.loads(json.dumps(flat))) == annotations
    assert msgspec.json.decode(encode(annotations), type=ToolAnnotations) == annotations
