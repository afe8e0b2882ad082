"""A JSON Schema as rows a person reads: one per property (nested ones indented) with type and constraints."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["OutlineRow", "schema_outline"]

MAX_DEPTH = 6
"""Nesting shown; deeper parts stay in the raw JSON view."""

_CONSTRAINTS = (
    ("minimum", "≥ {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "≤ {}"),
    ("exclusiveMaximum", "< {}"),
    ("multipleOf", "multiple of {}"),
    ("minLength", "min length {}"),
    ("maxLength", "max length {}"),
    ("pattern", "pattern {}"),
    ("format", "format {}"),
    ("minItems", "min {} items"),
    ("maxItems", "max {} items"),
)


@dataclass(frozen=True, slots=True)
class OutlineRow:
    """One property of a schema."""

    name: str
    depth: int
    type: str
    required: bool
    details: str
    description: str


def _resolve(schema: Any, root: dict[str, Any], seen: int = 0) -> dict[str, Any]:
    if not isinstance(schema, dict) or seen > 20:
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = (
                target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
            )
        if isinstance(target, dict):
            return _resolve({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, root, seen + 1)
    union = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(union, list):
        branches = [_resolve(branch, root, seen + 1) for branch in union]
        solid = [branch for branch in branches if branch.get("type") != "null"]
        if len(solid) == 1:
            outer = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
            return {**solid[0], **outer, "_nullable": len(solid) < len(branches)}
    return schema


def _type_of(schema: dict[str, Any], root: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = " | ".join(str(item) for item in kind)
    if kind == "array":
        items = _resolve(schema.get("items"), root)
        kind = f"array of {_type_of(items, root)}" if items else "array"
    if kind is None:
        if "enum" in schema:
            kind = "enum"
        elif schema.get("anyOf") or schema.get("oneOf"):
            kind = "one of several"
        else:
            kind = "any"
    return f"{kind} or null" if schema.get("_nullable") else str(kind)


def _details(schema: dict[str, Any]) -> str:
    parts = [template.format(schema[key]) for key, template in _CONSTRAINTS if key in schema]
    if "enum" in schema:
        parts.append("one of " + ", ".join(json.dumps(choice) for choice in schema["enum"]))
    if "default" in schema:
        parts.append(f"default {json.dumps(schema['default'])}")
    if schema.get("writeOnly") or schema.get("x-secret"):
        parts.append("secret")
    return "; ".join(parts)


def schema_outline(schema: dict[str, Any] | None) -> list[OutlineRow]:
    """The properties of an object schema (and of its nested objects and arrays of objects), in order."""
    if not isinstance(schema, dict):
        return []
    rows: list[OutlineRow] = []

    def walk(node: dict[str, Any], depth: int) -> None:
        required = set(node.get("required") or ())
        for name, raw in (node.get("properties") or {}).items():
            child = _resolve(raw, schema)
            rows.append(
                OutlineRow(
                    name=name,
                    depth=depth,
                    type=_type_of(child, schema),
                    required=name in required,
                    details=_details(child),
                    description=str(child.get("description") or child.get("title") or ""),
                )
            )
            if depth >= MAX_DEPTH:
                continue
            if child.get("properties"):
                walk(child, depth + 1)
            items = _resolve(child.get("items"), schema) if child.get("type") == "array" else {}
            if items.get("properties"):
                walk(items, depth + 1)

    root = _resolve(schema, schema)
    if root.get("properties"):
        walk(root, 0)
    return rows
