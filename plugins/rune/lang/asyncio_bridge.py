"""``.await`` support: Rune futures resolve inline; host coroutines are awaited on the event
loop that started the run (scripts run in a worker thread under ``Unit.call_async``)."""

from __future__ import annotations

import inspect
from typing import Any

from .errors import RuneRuntimeError
from .runtime import type_name
from .values import Future


async def _await(awaitable: Any) -> Any:
    return await awaitable


def await_value(v: Any) -> Any:
    if type(v) is Future:
        return v.resolve()
    if inspect.isawaitable(v):
        import anyio.from_thread

        try:
            return anyio.from_thread.run(_await, v)
        except RuntimeError as exc:
            if inspect.iscoroutine(v):
                v.close()
            raise RuneRuntimeError("host coroutines can only be awaited under `call_async`") from exc
    raise RuneRuntimeError(f"`{type_name(v)}` is not a future")
