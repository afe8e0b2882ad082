"""Turn whatever a tool returned into a ``ToolResult``."""

from __future__ import annotations

from typing import Any

import msgspec
from toolmesh._errors import ExecutionFailed, tool_error
from toolmesh.contracts import (
    AudioContent,
    EmbeddedResource,
    ErrorCode,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
    encode,
)

__all__ = ["failure_from", "result_from_value"]

_BLOCK_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


def result_from_value(request_id: str, tool: str, value: Any) -> ToolResult:
    """Wrap a tool's return value: JSON values become ``structured_content`` plus a text block.

    A ``ToolResult`` passes through (re-addressed to this request); a content
    block or a list of them becomes ``content``; a ``str`` becomes one text
    block.  A value that cannot be represented as JSON raises ``ExecutionFailed``.
    """
    if isinstance(value, ToolResult):
        return msgspec.structs.replace(value, id=request_id, tool=tool)
    if isinstance(value, _BLOCK_TYPES):
        return ToolResult(id=request_id, tool=tool, content=[value])
    if isinstance(value, list) and value and all(isinstance(item, _BLOCK_TYPES) for item in value):
        return ToolResult(id=request_id, tool=tool, content=list(value))
    if isinstance(value, str):
        return ToolResult(id=request_id, tool=tool, content=[TextContent(text=value)], structured_content=value)
    try:
        text = encode(value).decode()
        # the decoded JSON, so a local caller sees exactly what a remote one does (lists, string keys)
        structured = msgspec.json.decode(text)
    except (TypeError, msgspec.EncodeError, ValueError, OverflowError) as exc:
        raise ExecutionFailed(
            f"tool {tool!r} returned a {type(value).__name__} that cannot be sent as JSON ({exc});"
            " return JSON-compatible values (dict, list, str, int, float, bool, None, msgspec.Struct)",
        ) from exc
    return ToolResult(id=request_id, tool=tool, content=[TextContent(text=text)], structured_content=structured)


def failure_from(node: str, request_id: str, tool: str, code: ErrorCode, message: str, **fields: Any) -> ToolResult:
    """A failure a node answers itself, before or instead of the pipeline: its name on the result."""
    return msgspec.structs.replace(ToolResult.failure(request_id, tool, tool_error(code, message, **fields)), node=node)
