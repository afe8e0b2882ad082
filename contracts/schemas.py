"""JSON Schemas of the wire types, for clients that are not written in Python.

``python -m toolmesh.contracts.schemas DIR`` writes one ``<Type>.schema.json``
per wire type into DIR (the repository keeps them in ``docs/contracts/``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from .catalog import NodeEntry
from .messages import ToolCallback, ToolEvent, ToolRequest, ToolResult
from .spec import ToolSpec
from .tool_code import Breadcrumb, BreadcrumbEvent, ToolCodeDocument

__all__ = ["WIRE_TYPES", "render", "wire_schemas", "write_schemas"]

WIRE_TYPES: tuple[type, ...] = (
    ToolRequest,
    ToolResult,
    ToolEvent,
    ToolCallback,
    ToolSpec,
    NodeEntry,
    ToolCodeDocument,
    Breadcrumb,
    BreadcrumbEvent,
)
"""The types whose JSON form is public protocol."""

_SCHEMA_ID = "https://toolmesh.dev/schemas/v1/{name}.schema.json"


def wire_schemas() -> dict[str, dict[str, Any]]:
    """Map each wire type's name to its JSON Schema (draft 2020-12)."""
    schemas = {}
    for wire_type in WIRE_TYPES:
        name = wire_type.__name__
        schema = msgspec.json.schema(wire_type)
        schemas[name] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": _SCHEMA_ID.format(name=name),
            **schema,
        }
    return schemas


def render(schema: dict[str, Any]) -> str:
    """The exact text a schema file holds (stable key order, trailing newline)."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    """Write every wire schema into ``directory``; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in wire_schemas().items():
        path = directory / f"{name}.schema.json"
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - exercised by the docs test through the function
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/contracts")
    for path in write_schemas(target):
        print(path)
