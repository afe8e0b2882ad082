"""A tiny tool plugin for the MCP tests: tools as plain async functions, no other plugin needed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec
import toolmesh
from toolmesh import CallContext, ExecutionFailed
from toolmesh.contracts import ToolAnnotations, ToolSpec

SOURCE = "mcptest"

ToolBody = Callable[[dict[str, Any], CallContext], Awaitable[Any]]


class FunctionTools:
    """Serves ``ToolSpec``s whose bodies are async functions of (arguments, context)."""

    def __init__(self, tools: dict[str, tuple[ToolSpec, ToolBody]] | None = None) -> None:
        self.tools = dict(tools or {})
        self.events: list[str] = []

    def add(self, spec: ToolSpec, body: ToolBody) -> None:
        self.tools[spec.name] = (msgspec.structs.replace(spec, source=SOURCE), body)

    @toolmesh.hookimpl
    def toolmesh_discover_tools(self, kernel: toolmesh.Kernel, sources: list[str]) -> list[ToolSpec]:
        return [spec for spec, _ in self.tools.values()]

    @toolmesh.hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
        if spec.source != SOURCE or spec.name not in self.tools:
            return None
        return self.tools[spec.name][1](arguments, context)


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


async def _add(arguments: dict[str, Any], context: CallContext) -> int:
    return arguments["a"] + arguments["b"]


async def _weather(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    return {"city": arguments["city"], "celsius": 21.5}


async def _fail(arguments: dict[str, Any], context: CallContext) -> Any:
    raise ExecutionFailed(f"failed on purpose: {arguments.get('reason', 'no reason')}")


def slow_body(events: list[str]) -> ToolBody:
    async def slow(arguments: dict[str, Any], context: CallContext) -> str:
        steps = int(arguments.get("steps", 5))
        try:
            for step in range(steps):
                await context.progress(step + 1, steps, f"step {step + 1}")
                await context.log("info", f"working on step {step + 1}")
                await anyio.sleep(float(arguments.get("pause", 0.1)))
        except anyio.get_cancelled_exc_class():
            events.append("slow cancelled")
            raise
        events.append("slow finished")
        return "done"

    return slow


async def _confirm(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
    answer = await context.ask(
        "elicitation",
        {
            "message": f"Really delete {arguments['path']}?",
            "requestedSchema": {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"],
            },
        },
    )
    return {"action": answer["action"], "content": answer.get("content")}


async def _summarise(arguments: dict[str, Any], context: CallContext) -> str:
    answer = await context.ask(
        "sampling",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": arguments["text"]}}],
            "maxTokens": 50,
        },
    )
    return answer["content"]["text"]


def standard_tools() -> FunctionTools:
    """The tool set most MCP tests serve from a node."""
    tools = FunctionTools()
    tools.add(
        ToolSpec(
            name="add",
            title="Add",
            description="Add two integers.",
            input_schema=_object(a={"type": "integer"}, b={"type": "integer"}),
            output_schema={"type": "integer"},
            annotations=ToolAnnotations(read_only_hint=True),
        ),
        _add,
    )
    tools.add(
        ToolSpec(
            name="weather",
            description="Weather of a city.",
            input_schema=_object(city={"type": "string"}),
            output_schema=_object(city={"type": "string"}, celsius={"type": "number"}),
        ),
        _weather,
    )
    tools.add(ToolSpec(name="fail", description="Always fails.", input_schema=_object()), _fail)
    tools.add(
        ToolSpec(
            name="slow",
            description="Reports progress, then answers.",
            input_schema={
                "type": "object",
                "properties": {"steps": {"type": "integer"}, "pause": {"type": "number"}},
            },
            task_support="optional",
        ),
        slow_body(tools.events),
    )
    tools.add(
        ToolSpec(name="confirm", description="Asks a person.", input_schema=_object(path={"type": "string"})),
        _confirm,
    )
    tools.add(
        ToolSpec(
            name="summarise", description="Asks the model.", input_schema=_object(text={"type": "string"})
        ),
        _summarise,
    )
    return tools
