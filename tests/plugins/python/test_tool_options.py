"""`@toolmesh.tool` options beyond the type hints: own schemas, task support, required environment."""

from __future__ import annotations

from typing import Any

import pytest
import toolmesh
from toolmesh.contracts import ErrorCode, ToolRequest

pytestmark = pytest.mark.anyio


@toolmesh.tool(
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "object", "properties": {"q": {"type": "string", "minLength": 2}},
                                 "required": ["q"]}},
        "required": ["query"],
    },
    output_schema={"type": "object", "properties": {"hits": {"type": "integer", "minimum": 0}}, "required": ["hits"]},
)
def search(query: dict[str, Any]) -> dict[str, Any]:
    """Count the hits of a query (negative for a query of 'broken')."""
    return {"hits": -1 if query["q"] == "broken" else len(query["q"])}


@toolmesh.tool(task_support="required", required_env=("TOOLMESH_TEST_API_KEY", "TOOLMESH_TEST_REGION"))
def long_report(topic: str) -> str:
    """Write a long report."""
    return f"report on {topic}"


async def _call(kernel: toolmesh.Kernel, tool: str, arguments: dict[str, Any]) -> Any:
    return await kernel.call(ToolRequest(id="1", tool=tool, arguments=arguments))


async def test_own_schemas_are_published_and_enforced() -> None:
    kernel = toolmesh.Kernel()
    await kernel.start([search])
    try:
        (spec,) = kernel.tools
        assert spec.input_schema == search.input_schema and spec.output_schema == search.output_schema
        assert (await _call(kernel, "search", {"query": {"q": "mesh"}})).structured_content == {"hits": 4}
        refused = await _call(kernel, "search", {"query": {"q": "x"}})  # the hints alone (a dict) allow it
        assert refused.is_error and refused.error is not None
        assert refused.error.code == ErrorCode.INVALID_ARGUMENTS and "$.query.q" in refused.error.message
        broken = await _call(kernel, "search", {"query": {"q": "broken"}})
        assert broken.is_error and broken.error is not None and broken.error.code == ErrorCode.EXECUTION_FAILED
        assert "output_schema" in broken.error.message
    finally:
        await kernel.stop()


async def test_required_env_makes_the_tool_unavailable_naming_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLMESH_TEST_API_KEY", "k")
    monkeypatch.delenv("TOOLMESH_TEST_REGION", raising=False)
    kernel = toolmesh.Kernel()
    await kernel.start([long_report])
    try:
        (spec,) = kernel.tools
        assert spec.task_support == "required" and spec.required_env == ("TOOLMESH_TEST_API_KEY", "TOOLMESH_TEST_REGION")
        assert not spec.available and spec.unavailable_reason is not None
        assert "TOOLMESH_TEST_REGION" in spec.unavailable_reason and "TOOLMESH_TEST_API_KEY" not in spec.unavailable_reason
        result = await _call(kernel, "long_report", {"topic": "x"})
        assert result.is_error and result.error is not None and result.error.code == ErrorCode.UNAVAILABLE
    finally:
        await kernel.stop()
    monkeypatch.setenv("TOOLMESH_TEST_REGION", "eu")
    kernel = toolmesh.Kernel()
    await kernel.start([long_report])
    try:
        assert kernel.tools[0].available
        assert (await _call(kernel, "long_report", {"topic": "x"})).structured_content == "report on x"
    finally:
        await kernel.stop()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"input_schema": {"type": "string"}}, "input_schema"),
        ({"input_schema": ["not", "a", "schema"]}, "input_schema"),
        ({"output_schema": "int"}, "output_schema"),
        ({"task_support": "always"}, "task_support='always'"),
        ({"required_env": ("API KEY",)}, "'API KEY'"),
    ],
)
def test_wrong_options_are_refused_naming_them(options: dict[str, Any], message: str) -> None:
    with pytest.raises(toolmesh.ToolDefinitionError, match=message):
        toolmesh.tool(name="wrong", **options)(lambda: None)
