"""Python tools plugin: ``@toolmesh.tool`` functions served on the mesh.

Sources: ``package.module:attr``, ``package.module``, a ``.py`` file, a
directory of them, tool objects passed in code, and the ``toolmesh.tools``
entry-point group.  Schemas come from type hints (msgspec); sync functions
run in worker threads, ``async def`` ones on the event loop.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from typing import Any

import anyio.to_thread
import msgspec

from toolmesh import CallContext, InvalidArguments, Kernel, ToolFunction, hookimpl
from toolmesh.contracts import ToolSpec

from .loader import claims, entry_point_tools, tools_from
from .schema import Signature, describe_signature

__all__ = ["SOURCE", "spec_for"]

SOURCE = "python"
"""``ToolSpec.source`` of the tools this plugin executes."""


def spec_for(tool: ToolFunction, signature: Signature) -> ToolSpec:
    """The public spec of a Python tool."""
    return ToolSpec(
        name=tool.name,
        description=tool.description,
        title=tool.title,
        version=tool.version,
        tags=tool.tags,
        input_schema=signature.input_schema,
        output_schema=signature.output_schema,
        annotations=tool.annotations,
        meta=tool.meta,
        source=SOURCE,
        cache=tool.cache,
        timeout=tool.timeout,
        max_usage_count=tool.max_usage_count,
        result_as_answer=tool.result_as_answer,
        examples=tool.examples,
    )


def _registry(kernel: Kernel) -> dict[str, tuple[ToolFunction, Signature]]:
    return kernel.plugin_state.setdefault(SOURCE, {})


@hookimpl
def toolmesh_claim_sources(sources: list[str]) -> list[str]:
    return [source for source in sources if claims(source)]


@hookimpl
def toolmesh_discover_tools(kernel: Kernel, sources: list[Any]) -> list[ToolSpec]:
    tools = tools_from(sources)
    if kernel.settings.plugins.get(SOURCE, {}).get("entry_points", True):
        tools.extend(entry_point_tools())
    registry = _registry(kernel)
    registry.clear()
    specs = []
    for tool in tools:
        signature = describe_signature(tool.name, tool.function, tool.description)
        registry[tool.name] = (tool, signature)
        specs.append(spec_for(tool, signature))
    return specs


@hookimpl
def toolmesh_execute_tool(spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Awaitable[Any] | None:
    if spec.source != SOURCE:
        return None
    entry = _registry(context.kernel).get(spec.name)
    if entry is None:
        return None
    return _run(*entry, arguments, context)


async def _run(tool: ToolFunction, signature: Signature, arguments: dict[str, Any], context: CallContext) -> Any:
    try:
        converted = msgspec.convert(arguments, signature.arguments_type, strict=False)
    except msgspec.ValidationError as exc:
        raise InvalidArguments(f"invalid arguments for tool {tool.name!r}: {exc}") from exc
    kwargs = {name: getattr(converted, name) for name in signature.arguments_type.__struct_fields__}
    if signature.context_parameter is not None:
        kwargs[signature.context_parameter] = context
    if tool.is_async:
        return await tool.function(**kwargs)
    # abandon_on_cancel: the deadline returns the call at once; the thread finishes on its own.
    return await anyio.to_thread.run_sync(functools.partial(tool.function, **kwargs), abandon_on_cancel=True)
