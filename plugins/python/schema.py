"""JSON Schemas from a tool function's signature and return type, via msgspec.

The parameters become a generated ``msgspec.Struct`` (parameters with defaults
are optional); its JSON Schema is the tool's ``input_schema`` and the same
Struct converts incoming JSON arguments to typed Python values.
"""

from __future__ import annotations

import copy
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from toolmesh import CallContext, ToolDefinitionError
from toolmesh.contracts import ToolResult
from toolmesh.contracts.content import ContentBlock

__all__ = ["Signature", "describe_signature"]

_CONTENT_TYPES = (ToolResult, *typing.get_args(ContentBlock))


@dataclass(frozen=True)
class Signature:
    """What the executor needs (the argument Struct, how to pass it) and the two schemas."""

    arguments_type: type[msgspec.Struct]
    positional: tuple[str, ...]
    """Positional-only parameters, passed positionally in this order."""
    context_parameter: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace a top-level ``$ref`` by the definition it points to; other ``$defs`` stay on top."""
    reference = schema.get("$ref")
    if reference is None:
        return schema
    definitions = dict(schema.get("$defs", {}))
    root = dict(definitions.pop(reference.rsplit("/", 1)[-1]))
    if definitions:
        root["$defs"] = definitions
    return root


def _schema_of(annotation: Any, what: str) -> dict[str, Any]:
    try:
        return msgspec.json.schema(annotation)
    except (TypeError, ValueError) as exc:
        shown = getattr(annotation, "__name__", None) or repr(annotation)
        reason = str(exc).strip().splitlines()[-1]
        raise ToolDefinitionError(
            f"{what} has type {shown}, which toolmesh cannot describe as JSON Schema ({reason});"
            " use JSON types (str, int, float, bool, list, dict), Optional, Literal, msgspec.Struct"
            " or dataclasses"
        ) from exc


def _is_context(annotation: Any) -> bool:
    """True for ``CallContext`` (or a subclass), also as ``CallContext | None``."""
    if isinstance(annotation, type):
        return issubclass(annotation, CallContext)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
        return len(members) == 1 and _is_context(members[0])
    return False


def _returns_content(annotation: Any) -> bool:
    """True for ``ToolResult``, content blocks and lists of them, which carry no structured value."""
    if isinstance(annotation, type) and issubclass(annotation, _CONTENT_TYPES):
        return True
    arguments = typing.get_args(annotation)
    return bool(arguments) and all(
        _returns_content(argument) for argument in arguments if argument is not type(None)
    )


def _described(annotation: Any, description: str | None) -> Any:
    """Add a docstring description to an annotation, letting an explicit ``Meta(description=...)`` win."""
    if not description:
        return annotation
    if typing.get_origin(annotation) is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        # the docstring's Meta goes first: msgspec lets later metadata override earlier
        return typing.Annotated[(base, msgspec.Meta(description=description), *metadata)]
    return typing.Annotated[annotation, msgspec.Meta(description=description)]


def _default(tool: str, parameter: inspect.Parameter) -> Any:
    value = parameter.default
    try:
        msgspec.json.encode(value)
    except (TypeError, msgspec.EncodeError) as exc:
        raise ToolDefinitionError(
            f"tool {tool!r}, parameter {parameter.name!r}: its default {value!r} cannot be written as JSON"
            f" ({exc})"
        ) from exc
    if isinstance(value, (list, dict, set)) and value:
        # msgspec refuses shared mutable defaults; each call gets its own copy instead
        return msgspec.field(default_factory=lambda: copy.deepcopy(value))
    return value


def describe_signature(tool: str, function: Callable[..., Any], parameter_docs: dict[str, str]) -> Signature:
    """Build the argument Struct and the schemas of ``function``; raises ``ToolDefinitionError``."""
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        raise ToolDefinitionError(
            f"tool {tool!r} is a generator; return a value (e.g. a list) instead of yielding"
        )
    try:
        signature = inspect.signature(function, eval_str=True)
    except (NameError, SyntaxError, TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            f"tool {tool!r}: cannot resolve its signature and type hints ({exc})"
        ) from exc
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    positional: list[str] = []
    context_parameter = None
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            stars = "*" if parameter.kind is parameter.VAR_POSITIONAL else "**"
            raise ToolDefinitionError(
                f"tool {tool!r}: {stars}{parameter.name} cannot be described as a schema;"
                " declare each parameter with a type"
            )
        annotation = Any if parameter.annotation is parameter.empty else parameter.annotation
        if _is_context(annotation):
            context_parameter = parameter.name
            continue
        _schema_of(annotation, f"tool {tool!r}, parameter {parameter.name!r},")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            positional.append(parameter.name)
        annotation = _described(annotation, parameter_docs.get(parameter.name))
        if parameter.default is parameter.empty:
            fields.append((parameter.name, annotation))
        else:
            fields.append((parameter.name, annotation, _default(tool, parameter)))
    try:
        arguments_type = msgspec.defstruct(
            f"{tool}_arguments",
            fields,
            kw_only=True,
            forbid_unknown_fields=True,
            module=getattr(function, "__module__", None),
        )
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            f"tool {tool!r}: its parameters cannot form an argument type ({exc})"
        ) from exc
    input_schema = _inline_root(_schema_of(arguments_type, f"tool {tool!r}, its arguments,"))
    input_schema.pop("title", None)  # the generated Struct's name means nothing to a caller
    input_schema["additionalProperties"] = False
    input_schema.setdefault("required", [])
    returns = signature.return_annotation
    output_schema = None
    if returns not in (signature.empty, Any, None, type(None)) and not _returns_content(returns):
        output_schema = _inline_root(_schema_of(returns, f"tool {tool!r}, return value,"))
    return Signature(arguments_type, tuple(positional), context_parameter, input_schema, output_schema)
