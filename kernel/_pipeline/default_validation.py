"""Default plugin: validate arguments and structured results with the tool's JSON Schemas."""

from __future__ import annotations

from typing import Any

from toolmesh._markers import hookimpl
from toolmesh._pipeline.validation import ValidationIssue, schema_issues
from toolmesh.contracts import ToolResult, ToolSpec


@hookimpl
def toolmesh_validate_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> list[ValidationIssue]:
    return schema_issues(spec.input_schema, arguments)


@hookimpl
def toolmesh_validate_result(spec: ToolSpec, result: ToolResult) -> list[ValidationIssue]:
    if spec.output_schema is None or result.is_error:
        return []
    return schema_issues(spec.output_schema, result.structured_content)
