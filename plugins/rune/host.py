"""The ``toolmesh`` host module: the one capability a Rune tool gets from its host.

``toolmesh::call(name, args)`` returns a future; awaiting it calls another tool
on the mesh (through the running call's ``CallContext``, so the nested call
shares the caller and the remaining deadline) and yields ``Ok(value)`` — the
structured result, else its text — or ``Err(#{code, message})``::

    pub async fn total(values) {
        let sum = toolmesh::call("add", #{a: values[0], b: values[1]}).await?;
        sum * 2
    }

The module is compiled into every tool file; the running call is found
through a context variable set in the worker thread that runs the script.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import anyio
from toolmesh import CallContext
from toolmesh.contracts import TextContent
from toolmesh.plugins.rune.lang import RuneRuntimeError, to_json
from toolmesh.plugins.rune.lang.json_values import from_json
from toolmesh.plugins.rune.lang.values import Result

__all__ = ["CURRENT_CALL", "HOST_MODULES", "INLINE", "NeedsThread", "call"]

CURRENT_CALL: ContextVar[CallContext | None] = ContextVar("toolmesh_rune_call", default=None)
"""The call a script runs for; set by the executor in the script's thread (unset on the event loop)."""

INLINE: ContextVar[bool] = ContextVar("toolmesh_rune_inline", default=False)
"""True while the executor tries a script on the event loop."""


class NeedsThread(BaseException):
    """Raised by ``toolmesh::call`` in a script tried on the event loop: only a worker thread can
    await the mesh.  A BaseException, so the interpreter passes it through untouched."""


async def _nested(context: CallContext, name: str, arguments: dict[str, Any]) -> Any:
    remaining = context.remaining()
    assert context.call_tool is not None
    # The parent's deadline bounds the nested call: the script is interrupted then anyway.
    with anyio.move_on_after(remaining) as scope:
        result = await context.call_tool(name, arguments)
    if scope.cancelled_caught:
        return _err("timeout", f"{name!r} did not answer before the calling tool's deadline")
    if result.is_error:
        error = result.error
        code = error.code.value if error is not None else "execution_failed"
        message = error.message if error is not None else "the tool failed"
        return _err(code, message)
    value = result.structured_content
    if value is None:
        value = "".join(block.text for block in result.content if isinstance(block, TextContent)) or None
    return Result(True, from_json(value))  # read as upstream's serde reads JSON: `{"Some": 1}` stays an object


def _err(code: str, message: str) -> Result:
    return Result(False, {"code": code, "message": message})


def call(name: Any, arguments: Any = None) -> Any:
    """``toolmesh::call(name, #{...})``: a future of ``Ok(result)`` or ``Err(#{code, message})``."""
    context = CURRENT_CALL.get()
    if context is None and INLINE.get():
        raise NeedsThread
    if context is None or context.call_tool is None:
        raise RuneRuntimeError("`toolmesh::call` works only while a tool is being called on a node")
    if type(name) is not str:
        raise RuneRuntimeError("`toolmesh::call` expects the tool name as a string first")
    args = {} if arguments is None else to_json(arguments, "the arguments")  # JSON: no inf/NaN
    if not isinstance(args, dict):
        raise RuneRuntimeError("`toolmesh::call` expects the arguments as an object, e.g. #{a: 1}")
    return _nested(context, name, args)


HOST_MODULES: dict[str, dict[str, Any]] = {"toolmesh": {"call": call}}
"""The host modules every Rune tool file is compiled with."""
