"""JSON Schemas from a tool function's signature and return type, via msgspec."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import msgspec

from toolmesh import CallContext, ToolDefinitionError

__all__ = ["Signature", "describe_signature"]


class Signature(msgspec.Struct, frozen=True):
    """What the executor needs: the argument Struct, the context parameter, the schemas."""

    arguments_type: type
    context_parameter: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    definitions = dict(schema.get("$defs", {}))
    reference = schema.get("$ref")
    if reference is None:
        return schema
    root = dict(definitions.pop(reference.rsplit("/", 1)[-1]))
    if definitions:
        root["$defs"] = definitions
    return root


def _schema_of(annotation: Any, what: str) -> dict[str, Any]:
    try:
        return msgspec.json.schema(annotation)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"{what} has type {annotation!r}, which has no JSON Schema ({exc})") from exc


def _parameter_docs(doc: str) -> dict[str, str]:
    """Descriptions from a Google-style ``Args:`` section of a docstring."""
    found: dict[str, str] = {}
    in_args = False
    current = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
            continue
        if in_args:
            if not stripped:
                current = None
                continue
            if stripped.endswith(":") and " " not in stripped:
                break  # the next section (Returns:, Raises:)
            name, sep, text = stripped.partition(":")
            name = name.split("(")[0].strip()
            if sep and name.isidentifier() and line.startswith(("    ", "\t")) and not line.startswith("        "):
                found[name] = text.strip()
                current = name
            elif current:
                found[current] += " " + stripped
    return found


def describe_signature(name: str, function: Callable[..., Any], description: str) -> Signature:
    """Build the argument Struct and schemas of ``function``; raises ``ToolDefinitionError``."""
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - NameError etc. from unresolvable annotations
        raise ToolDefinitionError(f"tool {name!r}: cannot resolve its type hints ({exc})") from exc
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    context_parameter = None
    docs = _parameter_docs(inspect.getdoc(function) or "")
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {name!r}: *args/**kwargs cannot be described as a schema; declare each parameter"
            )
        annotation = hints.get(parameter.name, Any)
        if annotation is CallContext:
            context_parameter = parameter.name
            continue
        _schema_of(annotation, f"tool {name!r}, parameter {parameter.name!r},")
        if docs.get(parameter.name):
            annotation = typing.Annotated[annotation, msgspec.Meta(description=docs[parameter.name])]
        if parameter.default is parameter.empty:
            fields.append((parameter.name, annotation))
        else:
            fields.append((parameter.name, annotation, parameter.default))
    arguments_type = msgspec.defstruct(
        f"{name}_arguments", fields, kw_only=True, forbid_unknown_fields=True, module=function.__module__
    )
    input_schema = _inline_root(_schema_of(arguments_type, f"tool {name!r} arguments"))
    input_schema.pop("title", None)
    input_schema["additionalProperties"] = False
    if description:
        input_schema.pop("description", None)
    returns = hints.get("return", Any)
    output_schema = None
    if returns not in (Any, None, type(None)):
        output_schema = _inline_root(_schema_of(returns, f"tool {name!r}, return value,"))
    return Signature(arguments_type, context_parameter, input_schema, output_schema)
