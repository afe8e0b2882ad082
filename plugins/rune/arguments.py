"""A tool call's JSON arguments as the Rune values its function is called with.

Values are read as upstream's serde reads JSON (``lang.json_values.from_json``: ``null`` is ``()``,
an object is an ``Object`` whatever its keys), then fitted to the declared ``#[param]`` type:

- ``integer``: an ``i64``; a whole float (``3.0``, which JSON Schema counts as an integer) becomes
  ``3``, anything else (``3.5``, ``true``, a number outside i64) is refused;
- ``number``: a whole number arrives as an ``i64`` however the caller wrote it (``3`` and ``3.0``
  alike, so ``x == 3`` holds), any other as an ``f64``;
- ``string``, ``boolean``, ``array``, ``object``: checked, then as read.

An optional parameter arrives as ``Some(value)`` or ``None``; more than four parameters arrive as
one array in declared order. A refusal is ``InvalidArguments`` naming the tool, the argument and
the value, before the script runs (the node's schema validation normally refuses first).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NoReturn

from toolmesh import InvalidArguments
from toolmesh.plugins.rune.lang import RuneError
from toolmesh.plugins.rune.lang.json_values import from_json
from toolmesh.plugins.rune.lang.runtime import I64_MAX, I64_MIN
from toolmesh.plugins.rune.lang.values import NONE, some

from .tool_format import RuneTool, ToolParam

__all__ = ["script_arguments"]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def script_arguments(tool: RuneTool, arguments: Mapping[str, Any]) -> list[Any]:
    """The Rune values ``tool``'s function is called with for the JSON ``arguments``."""
    values: dict[str, Any] = {}
    for param in tool.params:
        if param.name in arguments:
            value = _param_value(tool, param, arguments[param.name])
            values[param.name] = value if param.required else some(value)
        elif param.required:
            raise InvalidArguments(
                f"invalid arguments for tool {tool.name!r}: the required argument {param.name!r} is missing",
                details={"argument": param.name},
            )
        else:
            values[param.name] = NONE
    if tool.positional is None:
        return [[values[param.name] for param in tool.params]]
    return [values[name] for name in tool.positional]


def _param_value(tool: RuneTool, param: ToolParam, value: Any) -> Any:
    kind = param.type
    t = type(value)
    if kind == "integer" or kind == "number":
        if t is not int and t is not float:
            _refuse(tool, param, value, "is not an integer" if kind == "integer" else "is not a number")
        if t is float and not value.is_integer():
            if kind == "number":
                return value
            _refuse(tool, param, value, "is not an integer")
        if I64_MIN <= value <= I64_MAX:
            return int(value)
        if kind == "number" and t is float:
            return value  # a whole float past i64 (1e300) stays a float
        _refuse(tool, param, value, "is outside the range of an i64")
    expected = _JSON_TYPES.get(kind)
    if expected is not None and t not in expected:
        _refuse(tool, param, value, f"is not {'an' if kind[0] in 'ao' else 'a'} {kind}")
    try:
        return from_json(value)
    except RuneError as exc:
        raise InvalidArguments(
            f"invalid arguments for tool {tool.name!r}: argument {param.name!r}: {exc.message}",
            details={"argument": param.name},
        ) from None


def _refuse(tool: RuneTool, param: ToolParam, value: Any, why: str) -> NoReturn:
    raise InvalidArguments(
        f"invalid arguments for tool {tool.name!r}: argument {param.name!r} {why}: {_show(value)}"
        f" (declared `type = \"{param.type}\"`)",
        details={"argument": param.name, "type": param.type},
    )


def _show(value: Any) -> str:
    """The value as the caller wrote it (JSON), cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
