"""Run a Python tool: JSON arguments to typed values, sync functions in worker threads."""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import msgspec
from toolmesh import CallContext, InvalidArguments, ToolFunction

from .schema import Signature

__all__ = ["PythonTool", "run_tool"]

_AT_PATH = re.compile(r"^(.*) - at `(\$[^`]*)`$")


@dataclass(frozen=True)
class PythonTool:
    """A ``@toolmesh.tool`` function with the signature built for it."""

    tool: ToolFunction
    signature: Signature

    @functools.cached_property
    def is_async(self) -> bool:
        """True when calling the function returns a coroutine (``async def``, also as ``__call__``)."""
        function = self.tool.function
        # a callable object with ``async def __call__`` is a coroutine function only through its type
        return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(type(function).__call__)


def _invalid(tool: str, error: msgspec.ValidationError) -> InvalidArguments:
    message = str(error)
    match = _AT_PATH.match(message)
    path, text = (match.group(2), match.group(1)) if match else ("$", message)
    return InvalidArguments(
        f"invalid arguments for tool {tool!r}: {path}: {text}",
        details={"issues": [{"path": path, "message": text}]},
    )


async def run_tool(python_tool: PythonTool, arguments: dict[str, Any], context: CallContext) -> Any:
    """Call the function with ``arguments`` converted to its parameter types; returns its raw value."""
    signature = python_tool.signature
    try:
        # not strict: JSON has no tuples, sets or datetimes; msgspec builds them from lists and strings
        converted = msgspec.convert(arguments, signature.arguments_type, strict=False)
    except msgspec.ValidationError as exc:
        raise _invalid(python_tool.tool.name, exc) from None
    keywords = {name: getattr(converted, name) for name in signature.arguments_type.__struct_fields__}
    positional = [keywords.pop(name) for name in signature.positional]
    if signature.context_parameter is not None:
        keywords[signature.context_parameter] = context
    function = python_tool.tool.function
    if python_tool.is_async:
        return await function(*positional, **keywords)
    # abandon_on_cancel: the deadline answers the caller at once; the thread finishes on its own
    value = await anyio.to_thread.run_sync(
        functools.partial(function, *positional, **keywords), abandon_on_cancel=True
    )
    if inspect.isawaitable(value):  # a sync wrapper around a coroutine function
        value = await value
    return value
