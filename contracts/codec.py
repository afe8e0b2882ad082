"""JSON encoding of the wire types, with the decoders built once."""

from __future__ import annotations

from typing import Any

import msgspec

from .catalog import NodeEntry
from .messages import CancelRequest, ToolCallback, ToolEvent, ToolRequest, ToolResult

__all__ = [
    "decode_callback",
    "decode_cancel",
    "decode_event",
    "decode_node_entry",
    "decode_request",
    "decode_result",
    "encode",
]

_encoder = msgspec.json.Encoder()
_request_decoder = msgspec.json.Decoder(ToolRequest)
_result_decoder = msgspec.json.Decoder(ToolResult)
_event_decoder = msgspec.json.Decoder(ToolEvent)
_node_entry_decoder = msgspec.json.Decoder(NodeEntry)
_callback_decoder = msgspec.json.Decoder(ToolCallback)
_cancel_decoder = msgspec.json.Decoder(CancelRequest)


def encode(value: Any) -> bytes:
    """Encode any wire type (or plain JSON value) to JSON bytes."""
    return _encoder.encode(value)


def decode_request(data: bytes) -> ToolRequest:
    """Decode a ``ToolRequest``; raises ``msgspec.DecodeError``/``ValidationError`` with a JSON path."""
    return _request_decoder.decode(data)


def decode_result(data: bytes) -> ToolResult:
    """Decode a ``ToolResult``."""
    return _result_decoder.decode(data)


def decode_event(data: bytes) -> ToolEvent:
    """Decode a ``ToolEvent``."""
    return _event_decoder.decode(data)


def decode_node_entry(data: bytes) -> NodeEntry:
    """Decode a catalog ``NodeEntry``."""
    return _node_entry_decoder.decode(data)


def decode_callback(data: bytes) -> ToolCallback:
    """Decode a ``ToolCallback``."""
    return _callback_decoder.decode(data)


def decode_cancel(data: bytes) -> CancelRequest:
    """Decode a ``CancelRequest``."""
    return _cancel_decoder.decode(data)
