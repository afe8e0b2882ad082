"""The JSON Schemas in docs/contracts/ match the wire types, and real messages validate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from toolmesh.contracts import (
    ErrorCode,
    ImageContent,
    NodeEntry,
    TextContent,
    ToolError,
    ToolEvent,
    ToolRequest,
    ToolResult,
    ToolSpec,
    encode,
)
from toolmesh.contracts.schemas import WIRE_TYPES, render, wire_schemas

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "docs" / "contracts"
REGENERATE = "python -m toolmesh.contracts.schemas docs/contracts"


def _validator(name: str) -> Any:
    return jsonschema_rs.validator_for(json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text("utf-8")))


def test_every_wire_type_has_a_schema() -> None:
    """wire_schemas() describes each wire type, keyed by its class name."""
    assert set(wire_schemas()) == {wire_type.__name__ for wire_type in WIRE_TYPES}


@pytest.mark.parametrize("name", sorted(wire_schemas()))
def test_schema_file_is_up_to_date(name: str) -> None:
    """docs/contracts/<Type>.schema.json holds exactly what the code renders today."""
    path = SCHEMA_DIR / f"{name}.schema.json"
    expected = render(wire_schemas()[name])
    assert path.is_file(), f"{path} is missing; run `{REGENERATE}`"
    assert path.read_text("utf-8") == expected, f"{path} is stale; run `{REGENERATE}`"


def test_no_stray_schema_files() -> None:
    """docs/contracts/ holds no schema of a type that is no longer on the wire."""
    present = {path.name for path in SCHEMA_DIR.glob("*.schema.json")}
    assert present == {f"{name}.schema.json" for name in wire_schemas()}, (
        f"run `{REGENERATE}` and delete the rest"
    )


@pytest.mark.parametrize("name", sorted(wire_schemas()))
def test_schema_header(name: str) -> None:
    """Each schema declares draft 2020-12 and a stable $id naming its type."""
    schema = wire_schemas()[name]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"https://toolmesh.dev/schemas/v1/{name}.schema.json"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ToolRequest", ToolRequest(id="7f3c", tool="add", arguments={"a": 1, "b": 2}, timeout=5.0)),
        ("ToolRequest", ToolRequest()),
        (
            "ToolResult",
            ToolResult(
                id="7f3c", tool="add", content=[TextContent(text="3")], structured_content=3, node="n1"
            ),
        ),
        (
            "ToolResult",
            ToolResult.failure(
                "7f3c", "ad", ToolError(code=ErrorCode.UNKNOWN_TOOL, message="m", suggestions=("add",))
            ),
        ),
        (
            "ToolResult",
            ToolResult(id="1", tool="img", content=[ImageContent(data="eA==", mime_type="image/png")]),
        ),
        ("ToolEvent", ToolEvent(kind="failed", tool="add", error_code=ErrorCode.TIMEOUT)),
        ("ToolSpec", ToolSpec(name="add", description="Add.", source="python")),
        ("NodeEntry", NodeEntry(node="n1", tools=(ToolSpec(name="add"),))),
    ],
)
def test_encoded_messages_validate(name: str, message: object) -> None:
    """What the codec writes is valid under the published schema."""
    assert _validator(name).is_valid(json.loads(encode(message)))


@pytest.mark.parametrize(
    ("name", "instance"),
    [
        ("ToolRequest", {"tool": "add", "arguments": [1, 2]}),
        ("ToolRequest", {"timeout": "soon"}),
        ("ToolResult", {"tool": "add"}),
        ("ToolResult", {"id": "1", "tool": "t", "content": [{"type": "video"}]}),
        ("ToolResult", {"id": "1", "tool": "t", "is_error": True, "error": {"code": "nope", "message": "m"}}),
    ],
)
def test_malformed_messages_fail_validation(name: str, instance: dict) -> None:
    """The published schemas reject messages a node would refuse to decode."""
    assert not _validator(name).is_valid(instance)
