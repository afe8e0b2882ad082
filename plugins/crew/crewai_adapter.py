"""crewAI ↔ mesh: mesh tools as crewAI ``BaseTool``\\s, and crewAI tools served on the mesh.

Needs the ``crewai`` package (not a dependency of toolmesh): ``pip install
'toolmesh[crewai]'``. crewai 1.x requires mcp<2, so it does not install beside
the ``mcp`` extra (mcp>=2.3).  A crewAI user adopts the mesh with one line::

    from toolmesh.plugins.crew.crewai_adapter import crewai_tools

    agent = Agent(role="researcher", ..., tools=crewai_tools())   # every tool of the mesh

and serves existing crewAI tools to every agent of the mesh with::

    Node(plugins=[CrewAIToolsPlugin([SerperDevTool(), ScrapeWebsiteTool()])])
"""

from __future__ import annotations

import atexit
import json
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any

import anyio.to_thread
from crewai.tools import BaseTool
from crewai.tools.structured_tool import CrewStructuredTool
from pydantic import BaseModel, Field, PrivateAttr, create_model
from toolmesh import CallContext, ExecutionFailed, SyncMesh, hookimpl
from toolmesh.contracts import TextContent, ToolResult, ToolSpec

from .cache import spec_should_cache
from .env import EnvVar, with_env_vars
from .selection import normalize_tool_name

__all__ = [
    "SOURCE",
    "CountedOnceTool",
    "CrewAIToolsPlugin",
    "MeshTool",
    "args_model",
    "crewai_tools",
    "mesh_spec",
    "to_crewai",
]

SOURCE = "crewai"
"""``ToolSpec.source`` of crewAI tools served by :class:`CrewAIToolsPlugin`."""

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def args_model(spec: ToolSpec) -> type[BaseModel]:
    """A pydantic model of a tool's arguments (crewAI's ``args_schema``), from its JSON Schema."""
    properties = spec.input_schema.get("properties", {})
    required = set(spec.input_schema.get("required", ()))
    fields: dict[str, Any] = {}
    for name, schema in properties.items():
        kind = schema.get("type") if isinstance(schema, dict) else None
        python_type: Any = _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any
        description = schema.get("description", "") if isinstance(schema, dict) else ""
        if name in required:
            fields[name] = (python_type, Field(..., description=description))
        else:
            fields[name] = (python_type | None, Field(None, description=description))
    model_name = "".join(part.capitalize() for part in normalize_tool_name(spec.name).split("_")) + "Input"
    return create_model(model_name, **fields)


_COUNTED_BY_INVOKE: ContextVar[int | None] = ContextVar("toolmesh_crewai_counted_by_invoke", default=None)
"""``id`` of the structured tool whose ``invoke`` just counted a use in this thread / task."""


class CountedOnceTool(CrewStructuredTool):
    """crewAI's structured tool, counting each use once.

    crewAI's text (ReAct) loop counts a use twice: ``CrewStructuredTool.invoke``
    counts it, then its ``ToolUsage`` calls ``_increment_usage_count`` again
    after the run, so ``max_usage_count=4`` stopped a tool after two uses.
    Here the count that follows an ``invoke`` of the same tool is skipped; the
    function-calling loop (``BaseTool.run``, counted once) is not affected.
    """

    def invoke(self, input: str | dict[str, Any], config: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        _COUNTED_BY_INVOKE.set(None)
        result = super().invoke(input, config, **kwargs)
        _COUNTED_BY_INVOKE.set(id(self))
        return result

    async def ainvoke(
        self, input: str | dict[str, Any], config: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        _COUNTED_BY_INVOKE.set(None)
        result = await super().ainvoke(input, config, **kwargs)
        _COUNTED_BY_INVOKE.set(id(self))
        return result

    def _increment_usage_count(self) -> None:
        if _COUNTED_BY_INVOKE.get() == id(self):
            _COUNTED_BY_INVOKE.set(None)  # ToolUsage counting again the use invoke has counted
            return
        super()._increment_usage_count()


class MeshTool(BaseTool):
    """A mesh tool as a crewAI tool: ``_run`` calls it through a ``SyncMesh``."""

    tool: str = Field(description="The mesh tool's name.")
    _mesh: SyncMesh = PrivateAttr()

    def to_structured_tool(self) -> CrewStructuredTool:
        """crewAI's structured form of this tool, counting each use once (see :class:`CountedOnceTool`)."""
        structured = super().to_structured_tool()
        counted = CountedOnceTool(
            **{name: getattr(structured, name) for name in CrewStructuredTool.model_fields}
        )
        counted._original_tool = self
        return counted

    def _run(self, **kwargs: Any) -> Any:
        arguments = {key: value for key, value in kwargs.items() if value is not None}
        result = self._mesh.call(self.tool, arguments)
        if result.is_error:
            code = result.error.code.value if result.error else "execution_failed"
            message = result.error.message if result.error else result.text
            return f"Error ({code}): {message}"
        if result.text:
            return result.text
        return json.dumps(result.structured_content)


def _cache_function(spec: ToolSpec) -> Any:
    policy = spec_should_cache(spec)
    if policy is None:
        # crewAI's default cache_function caches everything; CachePolicy(enabled=False) opts a tool out
        return lambda _arguments=None, _result=None: spec.cache is None or spec.cache.enabled

    def should_cache(arguments: Any = None, result: Any = None) -> bool:
        wrapped = ToolResult(id="", tool=spec.name, content=[TextContent(text=str(result))])
        return policy(arguments or {}, wrapped)

    return should_cache


def to_crewai(spec: ToolSpec, mesh: SyncMesh) -> MeshTool:
    """One mesh tool as a crewAI tool (limits, answer flag and cache policy carried over)."""
    tool = MeshTool(
        name=spec.name,
        description=spec.description or spec.name,
        tool=spec.name,
        args_schema=args_model(spec),
        max_usage_count=spec.max_usage_count,
        result_as_answer=spec.result_as_answer,
    )
    # Assigned after construction: crewAI warns about closures passed to the constructor (they cannot be
    # checkpointed); the field is public and read at call time.
    tool.cache_function = _cache_function(spec)
    tool._mesh = mesh
    return tool


def crewai_tools(mesh: SyncMesh | None = None, *, only: Iterable[str] | None = None) -> list[BaseTool]:
    """Every tool of the mesh (or those in ``only``) as crewAI tools.

    Without ``mesh`` a ``SyncMesh`` on the configured mesh (``TOOLMESH_NATS_URL``,
    ``toolmesh.toml``) is opened and closed when the interpreter exits.
    """
    if mesh is None:
        mesh = SyncMesh()
        mesh.__enter__()
        atexit.register(mesh.__exit__, None, None, None)
    wanted = set(only) if only is not None else None
    return [to_crewai(spec, mesh) for spec in mesh.list_tools() if wanted is None or spec.name in wanted]


def mesh_spec(tool: BaseTool) -> ToolSpec:
    """The ``ToolSpec`` of a crewAI tool: normalized name, ``args_schema`` as JSON Schema, limits, env."""
    schema = tool.args_schema.model_json_schema()
    schema.pop("title", None)
    spec = ToolSpec(
        name=normalize_tool_name(tool.name),
        title=tool.name,
        description=tool.description,
        input_schema=schema,
        source=SOURCE,
        max_usage_count=tool.max_usage_count,
        result_as_answer=tool.result_as_answer,
    )
    variables = [EnvVar(var.name, var.description, var.required, var.default) for var in tool.env_vars]
    return with_env_vars(spec, variables) if variables else spec


class CrewAIToolsPlugin:
    """A node plugin serving crewAI tools; each runs in a worker thread through ``BaseTool.run``."""

    def __init__(self, tools: Iterable[BaseTool]) -> None:
        self.tools = list(tools)

    @hookimpl
    def toolmesh_discover_tools(self) -> list[tuple[ToolSpec, BaseTool]]:
        # each tool paired with its spec: of two with one name the kernel chooses, and reports the other
        return [(mesh_spec(tool), tool) for tool in self.tools]

    @hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
        tool = context.kernel.implementation_of(spec.name)
        if spec.source != SOURCE or not isinstance(tool, BaseTool):
            return None

        async def run() -> Any:
            value = await anyio.to_thread.run_sync(lambda: tool.run(**arguments))
            message = getattr(value, "message", None)
            if type(value).__name__ == "ToolFailure" and isinstance(message, str):
                raise ExecutionFailed(message)
            return (
                value
                if isinstance(value, (str, int, float, bool, list, dict)) or value is None
                else str(value)
            )

        return run()
