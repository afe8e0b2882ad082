"""result_from_value: what a tool returns becomes a ToolResult, or fails with ExecutionFailed."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from toolmesh import ExecutionFailed
from toolmesh._pipeline.results import result_from_value
from toolmesh.contracts import (
    EmbeddedResource,
    ErrorCode,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolError,
    ToolResult,
)


class Point(msgspec.Struct):
    x: int
    y: int


_IMAGE = ImageContent(data="eA==", mime_type="image/png")
_LINK = ResourceLink(uri="file:///r", name="r")


@pytest.mark.parametrize(
    ("value", "content", "structured"),
    [
        ("hello", [TextContent(text="hello")], "hello"),
        ("", [TextContent(text="")], ""),
        ({"b": 1, "a": [1, 2]}, [TextContent(text='{"b":1,"a":[1,2]}')], {"b": 1, "a": [1, 2]}),
        ([1, "two", None], [TextContent(text='[1,"two",null]')], [1, "two", None]),
        ([], [TextContent(text="[]")], []),
        (3, [TextContent(text="3")], 3),
        (2.5, [TextContent(text="2.5")], 2.5),
        (True, [TextContent(text="true")], True),
        (None, [TextContent(text="null")], None),
        ((1, 2), [TextContent(text="[1,2]")], [1, 2]),
        (float("nan"), [TextContent(text="null")], None),
        ({1: "a"}, [TextContent(text='{"1":"a"}')], {"1": "a"}),
        (2**70, [TextContent(text=str(2**70))], 2**70),
        (Point(x=1, y=2), [TextContent(text='{"x":1,"y":2}')], {"x": 1, "y": 2}),
        ({"p": Point(x=0, y=1)}, [TextContent(text='{"p":{"x":0,"y":1}}')], {"p": {"x": 0, "y": 1}}),
        (_IMAGE, [_IMAGE], None),
        (TextContent(text="t"), [TextContent(text="t")], None),
        ([TextContent(text="a"), _IMAGE, _LINK], [TextContent(text="a"), _IMAGE, _LINK], None),
        (
            [EmbeddedResource(resource={"uri": "u", "text": "x"})],
            [EmbeddedResource(resource={"uri": "u", "text": "x"})],
            None,
        ),
    ],
)
def test_value_to_result(value: Any, content: list[Any], structured: Any) -> None:
    """JSON values give structured content (as a remote caller decodes it) plus a JSON text block."""
    result = result_from_value("r1", "t", value)
    assert (result.id, result.tool, result.is_error) == ("r1", "t", False)
    assert result.content == content
    assert result.structured_content == structured


def test_mixed_list_is_json_not_content() -> None:
    """A list mixing blocks and other values is not content; blocks in it are encoded as JSON."""
    result = result_from_value("r", "t", [TextContent(text="a"), 1])
    assert result.structured_content == [{"type": "text", "text": "a"}, 1]


def test_tool_result_passes_through_readdressed() -> None:
    """A returned ToolResult is kept as is, except for the request id and tool name."""
    error = ToolError(code=ErrorCode.SANDBOX_VIOLATION, message="no network")
    original = ToolResult.failure("inner", "inner-tool", error)
    result = result_from_value("r1", "t", original)
    assert (result.id, result.tool) == ("r1", "t")
    assert (result.is_error, result.error, result.content) == (True, error, original.content)


class Opaque:
    pass


@pytest.mark.parametrize(
    "value",
    [object(), Opaque(), {"k": object()}, [1, Opaque()], lambda: 1, {(1, 2): "tuple key"}],
    ids=["object", "instance", "nested-object", "list-with-instance", "function", "tuple-key"],
)
def test_unserialisable_value_raises(value: Any) -> None:
    """A value that cannot be sent as JSON raises ExecutionFailed naming the tool and the type."""
    with pytest.raises(ExecutionFailed, match="cannot be sent as JSON") as caught:
        result_from_value("r", "tool-x", value)
    assert "'tool-x'" in caught.value.message
    assert caught.value.code is ErrorCode.EXECUTION_FAILED
