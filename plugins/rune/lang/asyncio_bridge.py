"""``.await`` support: Rune futures resolve inline; host coroutines are awaited on the event
loop that started the run (scripts run in a worker thread under ``Unit.call_async``).

A host may set ``HOST_AWAIT`` in the script's context: that coroutine function then awaits each
host coroutine on the loop (to free the script's worker slot while it waits, say)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from typing import Any

from .errors import RuneRuntimeError
from .runtime import type_name
from .values import Future

HOST_AWAIT: ContextVar[Callable[[Awaitable[Any]], Coroutine[Any, Any, Any]] | None] = ContextVar(
    "rune_host_await", default=None
)
"""How a host coroutine is awaited on the loop (``None``: plainly)."""


async def _await(awaitable: Any) -> Any:
    return await awaitable


def await_value(v: Any) -> Any:
    if type(v) is Future:
        return v.resolve()
    if inspect.isawaitable(v):
        import anyio.from_thread

        wait = HOST_AWAIT.get() or _await
        try:
            return anyio.from_thread.run(wait, v)
        except RuntimeError as exc:
            if inspect.iscoroutine(v):
                v.close()
            raise RuneRuntimeError("host coroutines can only be awaited under `call_async`") from exc
    raise RuneRuntimeError(f"`{type_name(v)}` is not a future")
