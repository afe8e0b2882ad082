"""JSON Schema validation of arguments and results, with compiled validators reused.

jsonschema-rs was chosen over fastjsonschema by measurement
(``bench/schema_validators.py``) and because it reports *every* issue with its
instance path, which fastjsonschema (first error only) cannot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonschema_rs

__all__ = ["ValidationIssue", "compile_schema", "json_path", "schema_issues"]


@dataclass(frozen=True, slots=True)
class ValidationIssue:
    """One problem with a value: where (a JSON path such as ``$.items[2].name``) and what."""

    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        """The form carried in ``ToolError.details["issues"]``."""
        return {"path": self.path, "message": self.message}


def json_path(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """Render instance-path parts as a JSONPath-like string (``$`` is the root)."""
    rendered = ["$"]
    for part in parts:
        if isinstance(part, int):
            rendered.append(f"[{part}]")
        elif part.isidentifier():
            rendered.append(f".{part}")
        else:
            rendered.append(f"[{part!r}]")
    return "".join(rendered)


# Validators are keyed by the identity of the schema dict; the dict is kept in
# the entry so an id can never be reused by another live schema.
_compiled: dict[int, tuple[dict[str, Any], Any]] = {}
_MAX_COMPILED = 4096


def compile_schema(schema: dict[str, Any]) -> Any:
    """Return a reusable validator for ``schema``; raises ``ValueError`` if the schema is invalid."""
    entry = _compiled.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    try:
        validator = jsonschema_rs.validator_for(schema)
    except (jsonschema_rs.ValidationError, ValueError) as exc:
        raise ValueError(f"invalid JSON Schema: {exc}") from exc
    if len(_compiled) >= _MAX_COMPILED:
        _compiled.clear()
    _compiled[id(schema)] = (schema, validator)
    return validator


def schema_issues(schema: dict[str, Any], instance: Any) -> list[ValidationIssue]:
    """Every way ``instance`` violates ``schema`` (empty when it conforms)."""
    validator = compile_schema(schema)
    if validator.is_valid(instance):
        return []
    return [
        ValidationIssue(json_path(error.instance_path), error.message)
        for error in validator.iter_errors(instance)
    ]
