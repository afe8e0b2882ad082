"""Lossless conversion between MCP SDK models and toolmesh contracts.

Content blocks, ``structuredContent`` and ``isError`` travel both ways
through their wire JSON, which both sides share; tool definitions map onto
``ToolSpec`` with title, annotations, ``_meta``, output schema and task
support kept.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import msgspec
from toolmesh.contracts import (
    ContentBlock,
    ErrorCode,
    TextContent,
    ToolAnnotations,
    ToolError,
    ToolResult,
    ToolSpec,
)

from .open_annotations import AnnotatedTool, OpenToolAnnotations

__all__ = [
    "WRAPPED_RESULT_KEY",
    "call_result_from_tool_result",
    "mcp_tool_from_spec",
    "spec_from_mcp_tool",
    "tool_result_from_call_result",
]

WRAPPED_RESULT_KEY = "x-toolmesh-wrapped"
"""Marks an output schema the gateway wrapped as ``{"result": ...}``: MCP 2025-11-25
allows only objects as ``structuredContent``."""


def _wire(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def spec_from_mcp_tool(tool: types.Tool, *, name: str, source: str, server: str) -> ToolSpec:
    """A mesh ``ToolSpec`` for a remote MCP tool, named ``name``, keeping every MCP field we carry."""
    annotations = None
    if tool.annotations is not None:
        annotations = ToolAnnotations.from_mcp(_wire(tool.annotations))  # the server's own keys too
    meta = dict(tool.meta or {})
    meta["toolmesh/mcp"] = {"server": server, "tool": tool.name}
    task_support = (tool.execution.task_support if tool.execution is not None else None) or "forbidden"
    return ToolSpec(
        name=name,
        title=tool.title or (tool.annotations.title if tool.annotations else None),
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=annotations,
        meta=meta,
        source=source,
        task_support=task_support,
        tags=("mcp", server),
    )


def _object_schema(schema: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """The output schema as MCP 2025-11-25 allows it, and whether it had to be wrapped."""
    if schema is None:
        return None, False
    if schema.get("type") == "object":
        return schema, False
    return {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        WRAPPED_RESULT_KEY: True,
    }, True


def mcp_tool_from_spec(spec: ToolSpec) -> types.Tool:
    """The MCP ``Tool`` the gateway lists for a mesh tool (non-object output schemas are wrapped)."""
    output_schema, _ = _object_schema(spec.output_schema)
    annotations = None
    if spec.annotations is not None:
        annotations = OpenToolAnnotations.model_validate(spec.annotations.as_mcp(), by_name=False)
    meta = dict(spec.meta or {})
    meta.pop("toolmesh/mcp", None)
    input_schema = dict(spec.input_schema)
    input_schema.setdefault("type", "object")
    return AnnotatedTool(
        name=spec.name,
        title=spec.title,
        description=spec.description or None,
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=annotations,
        _meta=meta or None,
        execution=types.ToolExecution(task_support=spec.task_support)
        if spec.task_support != "forbidden"
        else None,
    )


def tool_result_from_call_result(request_id: str, tool: str, result: types.CallToolResult) -> ToolResult:
    """A ``ToolResult`` holding exactly what the remote tool returned (blocks, structured content, error flag)."""
    raw = [_wire(block) for block in result.content]
    content = msgspec.convert(raw, list[ContentBlock], strict=False)
    error = None
    if result.is_error:
        message = (
            "\n".join(block.text for block in content if isinstance(block, TextContent)) or "the tool failed"
        )
        error = ToolError(code=ErrorCode.EXECUTION_FAILED, message=message)
    return ToolResult(
        id=request_id,
        tool=tool,
        is_error=result.is_error,
        content=content,
        structured_content=result.structured_content,
        error=error,
    )


def call_result_from_tool_result(result: ToolResult, spec: ToolSpec | None) -> types.CallToolResult:
    """The MCP ``CallToolResult`` for a mesh result, shaped by the tool's (possibly wrapped) output schema."""
    content = [msgspec.to_builtins(block) for block in result.content]
    structured: Any = None
    if not result.is_error and result.structured_content is not None:
        _, wrapped = _object_schema(spec.output_schema if spec is not None else None)
        if wrapped:
            structured = {"result": result.structured_content}
        elif isinstance(result.structured_content, dict):
            structured = result.structured_content
    if result.is_error and not content and result.error is not None:
        content = [{"type": "text", "text": f"{result.error.code.value}: {result.error.message}"}]
    return types.CallToolResult.model_validate(
        {"content": content, "structuredContent": structured, "isError": result.is_error}, by_name=False
    )
