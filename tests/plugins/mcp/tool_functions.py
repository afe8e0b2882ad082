"""Serve ``@toolmesh.tool`` functions of a file, for MCP tests that must not depend on the python plugin."""

from __future__ import annotations

import importlib.util
import inspect
import typing
from pathlib import Path
from typing import Any

import msgspec
import toolmesh
from toolmesh import CallContext, ToolFunction
from toolmesh.contracts import ToolSpec

SOURCE = "mcptest-functions"


def _input_schema(function: ToolFunction) -> tuple[dict[str, Any], str | None]:
    hints = typing.get_type_hints(function.function)
    fields: list[tuple[str, Any]] = []
    context_name = None
    for name, parameter in inspect.signature(function.function).parameters.items():
        annotation = hints.get(name, Any)
        if annotation is CallContext:
            context_name = name
            continue
        if parameter.default is inspect.Parameter.empty:
            fields.append((name, annotation))
        else:
            fields.append((name, annotation, parameter.default))  # type: ignore[arg-type]
    struct = msgspec.defstruct(f"{function.name}_arguments", fields, forbid_unknown_fields=True)
    (_,), components = msgspec.json.schema_components([struct])
    schema = dict(components[struct.__name__])
    schema.pop("title", None)
    return schema, context_name


class FileTools:
    """The ``@toolmesh.tool`` functions of one Python file as a plugin."""

    def __init__(self, path: Path) -> None:
        spec = importlib.util.spec_from_file_location(f"_tools_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.functions: dict[str, tuple[ToolFunction, str | None, ToolSpec]] = {}
        for value in vars(module).values():
            if isinstance(value, ToolFunction):
                schema, context_name = _input_schema(value)
                tool_spec = ToolSpec(
                    name=value.name,
                    description=value.description,
                    title=value.title,
                    input_schema=schema,
                    annotations=value.annotations,
                    meta=value.meta,
                    source=SOURCE,
                )
                self.functions[value.name] = (value, context_name, tool_spec)

    @toolmesh.hookimpl
    def toolmesh_discover_tools(self, kernel: toolmesh.Kernel, sources: list[str]) -> list[ToolSpec]:
        return [spec for _, _, spec in self.functions.values()]

    @toolmesh.hookimpl
    def toolmesh_execute_tool(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
        if spec.source != SOURCE or spec.name not in self.functions:
            return None
        function, context_name, _ = self.functions[spec.name]
        keywords = dict(arguments)
        if context_name:
            keywords[context_name] = context

        async def run() -> Any:
            value = function.function(**keywords)
            return await value if inspect.isawaitable(value) else value

        return run()
