"""JSON Schema validation: every issue, each with a JSON path; compiled validators reused."""

from __future__ import annotations

from typing import Any

import pytest
from toolmesh._pipeline.validation import ValidationIssue, compile_schema, json_path, schema_issues


@pytest.mark.parametrize(
    ("parts", "path"),
    [
        ([], "$"),
        (["name"], "$.name"),
        (["items", 1], "$.items[1]"),
        ([0, "x", 2], "$[0].x[2]"),
        (["a b"], "$['a b']"),
        (["1st"], "$['1st']"),
        (["dash-key", "_ok"], "$['dash-key']._ok"),
        (("tuple", 3), "$.tuple[3]"),
    ],
)
def test_json_path(parts: list[str | int], path: str) -> None:
    """Instance paths render as $-rooted JSONPath: .identifier, [index], ['other key']."""
    assert json_path(parts) == path


_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "nested": {"type": "object", "properties": {"n": {"type": "integer"}}},
    },
    "required": ["name"],
}


@pytest.mark.parametrize(
    ("instance", "paths"),
    [
        ({"name": "ok", "tags": ["a"], "nested": {"n": 1}}, []),
        ({}, ["$"]),
        ({"name": ""}, ["$.name"]),
        ({"name": "x", "tags": ["a", 2, "c", None]}, ["$.tags[1]", "$.tags[3]"]),
        ({"name": 5, "nested": {"n": "one"}}, ["$.name", "$.nested.n"]),
        ([], ["$"]),
    ],
)
def test_schema_issues_reports_every_issue(instance: Any, paths: list[str]) -> None:
    """schema_issues lists each violation once with its path (empty when the instance conforms)."""
    issues = schema_issues(_SCHEMA, instance)
    assert sorted(issue.path for issue in issues) == paths
    assert all(issue.message for issue in issues)


def test_compiled_validator_is_reused() -> None:
    """The same schema object compiles once; an equal but distinct dict gets its own validator."""
    schema = {"type": "integer"}
    assert compile_schema(schema) is compile_schema(schema)
    assert compile_schema(dict(schema)) is not compile_schema(schema)


@pytest.mark.parametrize(
    "schema", [{"type": "nonsense"}, {"type": 3}, {"required": "name"}, {"minLength": -1}]
)
def test_invalid_schema_raises_value_error(schema: dict[str, Any]) -> None:
    """A schema that is not valid JSON Schema raises ValueError saying so."""
    with pytest.raises(ValueError, match="invalid JSON Schema"):
        compile_schema(schema)


def test_issue_as_dict() -> None:
    """An issue travels as {"path", "message"} in ToolError.details."""
    assert ValidationIssue("$.a", "bad").as_dict() == {"path": "$.a", "message": "bad"}
