"""Every wire type survives JSON encoding and decoding unchanged."""

from __future__ import annotations

import msgspec
from hypothesis import given
from toolmesh.contracts import (
    NodeEntry,
    ToolEvent,
    ToolRequest,
    ToolResult,
    ToolSpec,
    decode_event,
    decode_node_entry,
    decode_request,
    decode_result,
    encode,
)

from tests.contracts.strategies import EVENTS, NODE_ENTRIES, PROPERTY, REQUESTS, RESULTS, SPECS

_spec_decoder = msgspec.json.Decoder(ToolSpec)


@PROPERTY
@given(REQUESTS)
def test_request_round_trip(request: ToolRequest) -> None:
    """decode_request(encode(request)) gives back an equal ToolRequest."""
    assert decode_request(encode(request)) == request


@PROPERTY
@given(RESULTS)
def test_result_round_trip(result: ToolResult) -> None:
    """decode_result(encode(result)) gives back an equal ToolResult, content blocks included."""
    decoded = decode_result(encode(result))
    assert decoded == result
    assert [type(block) for block in decoded.content] == [type(block) for block in result.content]


@PROPERTY
@given(SPECS)
def test_spec_round_trip(spec: ToolSpec) -> None:
    """A ToolSpec decodes from its JSON to an equal spec."""
    assert _spec_decoder.decode(encode(spec)) == spec


@PROPERTY
@given(EVENTS)
def test_event_round_trip(event: ToolEvent) -> None:
    """decode_event(encode(event)) gives back an equal ToolEvent."""
    assert decode_event(encode(event)) == event


@PROPERTY
@given(NODE_ENTRIES)
def test_node_entry_round_trip(entry: NodeEntry) -> None:
    """decode_node_entry(encode(entry)) gives back an equal NodeEntry, its tools included."""
    assert decode_node_entry(encode(entry)) == entry
