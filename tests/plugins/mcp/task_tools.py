"""Tools for the task tests: each says whether it ran inside an MCP task.

The gateway passes a task's id in the mesh request's ``meta``
(``io.modelcontextprotocol/related-task``); these tools answer with it.
"""

from __future__ import annotations

from typing import Any

import anyio
from toolmesh import CallContext
from toolmesh.contracts import ToolSpec

from tests.plugins.mcp.mesh_tools import FunctionTools

RELATED_TASK = "io.modelcontextprotocol/related-task"


def _task_of(context: CallContext) -> str:
    related = (context.request.meta or {}).get(RELATED_TASK)
    return "in a task" if related else "not in a task"


def task_tools() -> FunctionTools:
    """``report`` (taskSupport required), ``probe`` (optional) and ``hold`` (required, runs until cancelled)."""
    tools = FunctionTools()

    async def report(arguments: dict[str, Any], context: CallContext) -> str:
        for step in (1, 2, 3):
            await context.progress(step, 3, f"part {step}")
            await anyio.sleep(0.05)
        return f"report on {arguments['topic']}, {_task_of(context)}"

    async def probe(arguments: dict[str, Any], context: CallContext) -> str:
        return _task_of(context)

    async def hold(arguments: dict[str, Any], context: CallContext) -> str:
        tools.events.append("hold started")
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            tools.events.append("hold cancelled")
            raise
        return "never"

    topic = {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]}
    tools.add(ToolSpec(name="report", input_schema=topic, task_support="required"), report)
    tools.add(ToolSpec(name="probe", input_schema={"type": "object"}, task_support="optional"), probe)
    tools.add(ToolSpec(name="hold", input_schema={"type": "object"}, task_support="required"), hold)
    return tools
