"""The JSON shape of the messages: field names, error codes, content-block tags."""

from __future__ import annotations

import json

import msgspec
import pytest
from toolmesh.contracts import (
    RETRYABLE_CODES,
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ErrorCode,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolAnnotations,
    ToolError,
    ToolEvent,
    ToolRequest,
    ToolResult,
    ToolSpec,
    decode_request,
    decode_result,
    encode,
)

_ALWAYS_PRESENT = {"id", "tool", "is_error", "content", "structured_content", "error", "node"}

ISSUE_CODES = [
    "unknown_tool",
    "invalid_arguments",
    "rejected",
    "usage_limit",
    "timeout",
    "execution_failed",
    "sandbox_violation",
    "unavailable",
    "too_large",
    "bad_request",
    "internal",
    "cancelled",
]


@pytest.mark.parametrize(
    "result",
    [
        ToolResult(id="", tool="t"),
        ToolResult(id="r1", tool="add", structured_content=3, content=[TextContent(text="3")]),
        ToolResult.failure("r2", "add", ToolError(code=ErrorCode.TIMEOUT, message="late")),
    ],
)
def test_result_wire_names_always_present(result: ToolResult) -> None:
    """A ToolResult's JSON carries every core field, even when it holds the default."""
    wire = json.loads(encode(result))
    assert _ALWAYS_PRESENT <= wire.keys()


def test_default_result_wire_values() -> None:
    """Defaults are written out as JSON values (false, [], null), not left out."""
    wire = json.loads(encode(ToolResult(id="1", tool="t")))
    assert wire == {
        "id": "1",
        "tool": "t",
        "is_error": False,
        "content": [],
        "structured_content": None,
        "error": None,
        "node": None,
        "cached": False,
        "duration_ms": None,
        "result_as_answer": False,
    }


@pytest.mark.parametrize("code", list(ErrorCode))
def test_error_code_serialises_as_string(code: ErrorCode) -> None:
    """ToolError.code is written as its plain string code and read back as the enum."""
    error = ToolError(code=code, message="m")
    assert json.loads(encode(error))["code"] == code.value
    assert msgspec.json.decode(encode(error), type=ToolError).code is code


@pytest.mark.parametrize("value", ISSUE_CODES)
def test_error_code_exists(value: str) -> None:
    """Each published error code is a member of ErrorCode with that exact value."""
    assert ErrorCode(value).value == value


def test_no_unpublished_error_codes() -> None:
    """ErrorCode holds exactly the published codes, no more."""
    assert {code.value for code in ErrorCode} == set(ISSUE_CODES)


def test_retryable_codes() -> None:
    """Only unavailable and timeout are worth retrying unchanged."""
    assert RETRYABLE_CODES == {ErrorCode.UNAVAILABLE, ErrorCode.TIMEOUT}


def test_unknown_error_code_rejected_on_decode() -> None:
    """A result whose error code is not published fails to decode."""
    wire = b'{"id": "1", "tool": "t", "is_error": true, "error": {"code": "nope", "message": "m"}}'
    with pytest.raises(msgspec.ValidationError, match=r"\$\.error\.code"):
        decode_result(wire)


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ({"type": "text", "text": "hi"}, TextContent(text="hi")),
        (
            {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            ImageContent(data="aGk=", mime_type="image/png"),
        ),
        (
            {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
            AudioContent(data="aGk=", mime_type="audio/wav"),
        ),
        (
            {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain", "size": 3},
            ResourceLink(uri="file:///a", name="a", mime_type="text/plain", size=3),
        ),
        (
            {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}},
            EmbeddedResource(resource={"uri": "file:///a", "text": "x"}),
        ),
        (
            {"type": "text", "text": "x", "_meta": {"k": 1}, "annotations": {"priority": 1}},
            TextContent(text="x", meta={"k": 1}, annotations={"priority": 1}),
        ),
    ],
)
def test_content_block_decodes_by_type_tag(wire: dict, expected: ContentBlock) -> None:
    """The 'type' tag picks the block class; MCP's camelCase and _meta names are used on the wire."""
    data = json.dumps(wire).encode()
    assert msgspec.json.decode(data, type=ContentBlock) == expected
    assert json.loads(encode(expected)) == wire


def test_result_content_decodes_mixed_blocks() -> None:
    """A result's content list decodes each block to its own class, in order."""
    wire = {
        "id": "1",
        "tool": "t",
        "content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "eA==", "mimeType": "image/png"},
            {"type": "text", "text": "b"},
        ],
    }
    result = decode_result(json.dumps(wire).encode())
    assert [type(block) for block in result.content] == [TextContent, ImageContent, TextContent]
    assert result.text == "a\nb"


def test_unknown_content_type_rejected() -> None:
    """A block with an unknown type tag is a decode error pointing at it."""
    with pytest.raises(msgspec.ValidationError, match="video"):
        decode_result(b'{"id": "1", "tool": "t", "content": [{"type": "video", "data": ""}]}')


def test_request_omits_defaults() -> None:
    """A ToolRequest writes only what differs from the defaults."""
    assert json.loads(encode(ToolRequest(tool="add"))) == {"tool": "add"}


def test_minimal_request_decodes() -> None:
    """An empty JSON object is a valid request (tool and id come from the subject and the node)."""
    assert decode_request(b"{}") == ToolRequest()


def test_request_ignores_unknown_fields() -> None:
    """Fields added by newer clients do not break decoding on older nodes."""
    request = decode_request(b'{"tool": "add", "arguments": {"a": 1}, "from_the_future": true}')
    assert request == ToolRequest(tool="add", arguments={"a": 1})


def test_request_decode_error_names_the_path() -> None:
    """A request of the wrong shape fails with the JSON path of the bad field."""
    with pytest.raises(msgspec.ValidationError, match=r"\$\.arguments"):
        decode_request(b'{"tool": "add", "arguments": [1, 2]}')


def test_failure_result() -> None:
    """ToolResult.failure sets is_error, keeps the error and repeats it as text."""
    error = ToolError(code=ErrorCode.REJECTED, message="no")
    result = ToolResult.failure("r", "t", error)
    assert result.is_error
    assert result.error == error
    assert result.text == "rejected: no"


def test_annotations_use_mcp_camel_case() -> None:
    """ToolAnnotations are written with MCP's camelCase hint names."""
    annotations = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    assert json.loads(encode(annotations)) == {"readOnlyHint": True, "openWorldHint": False}


def test_spec_defaults() -> None:
    """A spec needs only a name; its input schema defaults to an empty object schema."""
    spec = msgspec.json.decode(b'{"name": "add"}', type=ToolSpec)
    assert spec.input_schema == {"type": "object", "properties": {}}
    assert spec.available and spec.task_support == "forbidden" and spec.cache is None


def test_event_error_code_is_a_string() -> None:
    """A ToolEvent carries error_code as the string code."""
    event = ToolEvent(kind="failed", tool="t", error_code=ErrorCode.EXECUTION_FAILED)
    assert json.loads(encode(event))["error_code"] == "execution_failed"
