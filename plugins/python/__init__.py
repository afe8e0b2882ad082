"""Python tools plugin: ``@toolmesh.tool`` functions served on the mesh.

Sources: ``package.module:attr``, ``package.module``, a ``.py`` file, a
directory of them (and of packages), tools, lists of tools and modules passed
in code, and the ``toolmesh.tools`` entry-point group (skipped when
``entry_points = false`` in the ``[python]`` table of ``toolmesh.toml``).
Schemas come from type hints (msgspec) and parameter descriptions from the
docstring; sync functions run in worker threads, ``async def`` ones on the
event loop.  A parameter annotated ``toolmesh.CallContext`` receives the
call's context (a sync tool reaches its async methods with
``anyio.from_thread.run``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any

from toolmesh import CallContext, Kernel, ToolFunction, ToolUnavailable, hookimpl
from toolmesh.contracts import ToolSpec

from .docstrings import split_docstring
from .executor import PythonTool, run_tool
from .loader import ENTRY_POINT_GROUP, claims, entry_point_tools, tools_from
from .schema import Signature, describe_signature

__all__ = [
    "ENTRY_POINT_GROUP",
    "SOURCE",
    "PythonTool",
    "Signature",
    "python_tool",
    "spec_for",
    "toolmesh_claim_sources",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
]

SOURCE = "python"
"""``ToolSpec.source`` of the tools this plugin executes, and its key in ``Kernel.plugin_state``."""


def python_tool(tool: ToolFunction) -> PythonTool:
    """Describe a ``@toolmesh.tool`` function; raises ``ToolDefinitionError`` for what JSON cannot carry."""
    doc = inspect.getdoc(tool.function) or ""
    _, parameter_docs = split_docstring(doc)
    return PythonTool(tool, describe_signature(tool.name, tool.function, parameter_docs))


def spec_for(python: PythonTool) -> ToolSpec:
    """The public spec of a Python tool.

    A description taken from the docstring loses its parameter section, which
    lives on as the ``description`` of each input-schema property.
    """
    tool = python.tool
    description = tool.description
    if description == (inspect.getdoc(tool.function) or ""):
        description, _ = split_docstring(description)
    return ToolSpec(
        name=tool.name,
        description=description,
        title=tool.title,
        version=tool.version,
        tags=tool.tags,
        input_schema=tool.input_schema if tool.input_schema is not None else python.signature.input_schema,
        output_schema=tool.output_schema if tool.output_schema is not None else python.signature.output_schema,
        task_support=tool.task_support,
        required_env=tool.required_env,
        annotations=tool.annotations,
        meta=tool.meta,
        source=SOURCE,
        cache=tool.cache,
        timeout=tool.timeout,
        max_usage_count=tool.max_usage_count,
        result_as_answer=tool.result_as_answer,
        examples=tool.examples,
        durable=tool.durable,
        max_concurrency=tool.max_concurrency,
    )


def _definition(tool: ToolFunction) -> tuple[Any, ...]:
    """Identifies one definition, so a tool reached twice (module and file, re-exports) counts once."""
    code = getattr(tool.function, "__code__", None)
    return (
        (tool.name, code.co_filename, code.co_firstlineno)
        if code is not None
        else (tool.name, id(tool.function))
    )


@hookimpl
def toolmesh_claim_sources(sources: list[str]) -> list[str]:
    return [source for source in sources if claims(source)]


@hookimpl
def toolmesh_discover_tools(kernel: Kernel, sources: list[Any]) -> list[tuple[ToolSpec, PythonTool]]:
    tools = tools_from(sources)
    if kernel.settings.plugins.get(SOURCE, {}).get("entry_points", True):
        tools.extend(entry_point_tools())
    seen: set[tuple[Any, ...]] = set()
    provided = []
    for tool in tools:
        if _definition(tool) in seen:
            continue
        seen.add(_definition(tool))
        python = python_tool(tool)
        # every definition goes to the kernel, paired with its spec: of two with one name the kernel
        # chooses, and execution runs what it chose (Kernel.implementation_of)
        provided.append((spec_for(python), python))
    # per kernel (the plugin module is shared by every kernel in the process): the names loaded here
    kernel.plugin_state[SOURCE] = frozenset(spec.name for spec, _ in provided)
    return provided


@hookimpl
def toolmesh_execute_tool(
    spec: ToolSpec, arguments: dict[str, Any], context: CallContext
) -> Awaitable[Any] | None:
    if spec.source != SOURCE:
        return None
    python = context.kernel.implementation_of(spec.name)
    if not isinstance(python, PythonTool):
        return _not_loaded(spec.name)
    return run_tool(python, arguments, context)


async def _not_loaded(name: str) -> Any:
    raise ToolUnavailable(
        f"Python tool {name!r} is not loaded on this kernel; restart the node with its source"
    )
