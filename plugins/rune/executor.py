"""Run a Rune tool: arguments in, a worker thread that can be stopped at the deadline, typed errors out.

Scripts run in worker threads (a script is CPU-bound Python code), at most a
few at a time (``pool.ScriptPool``: admission, waiting line, refusal).  A run
stops itself at the call's deadline (its tick counter looks at the clock, see
``lang.limits``), so a spin ends on time however many scripts share the CPU;
a call cancelled sooner (by its caller, or a node stopping) sets the run's
stop event, which the tick counter looks at with the clock.
The language's own budgets (instructions, recursion depth, value sizes and
memory) apply to every run as well.

A thread hop costs more than a trivial script, so a sync tool whose last
runs were all quick is first tried on the event loop with a tiny instruction
budget (``INLINE_BUDGET``) and memory budget (``INLINE_MEMORY``), so that no
attempt holds up the loop; if that is not enough it runs again in a thread.
Such a setback sends the tool back to worker threads until it has again been
quick there, for twice as many runs each time (capped), so a tool that is
only sometimes slow seldom holds up the event loop, while one hiccup of the
machine costs a quick tool only a few thread hops.  "Quick" is measured in
CPU time of the running thread, so waiting for the GIL or being descheduled
on a busy machine does not count against a script.
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from toolmesh import CallContext, CallTimeout, ExecutionFailed
from toolmesh.plugins.rune.lang import (
    RuneBudgetExceeded,
    RuneError,
    RuneLimitError,
    RunePanic,
    Unit,
    to_json,
)
from toolmesh.plugins.rune.lang.asyncio_bridge import HOST_AWAIT
from toolmesh.plugins.rune.lang.limits import MAX_MEMORY
from toolmesh.plugins.rune.lang.values import Option, Result

from .arguments import script_arguments
from .host import CURRENT_CALL, INLINE, NeedsThread
from .pool import ScriptPool, Slot
from .tool_format import RuneTool

__all__ = [
    "FAST_RUNS",
    "FAST_SECONDS",
    "INLINE_BUDGET",
    "INLINE_MEMORY",
    "MAX_BACKOFF",
    "ToolEntry",
    "run_tool",
]

_log = logging.getLogger("toolmesh.rune")

INLINE_BUDGET = 1_000
"""Instructions a quick sync tool may run on the event loop before it moves to a worker thread."""

INLINE_MEMORY = 1 << 20
"""Bytes of big values a quick sync tool may build on the event loop before it moves to a thread."""

FAST_SECONDS = 0.001
"""CPU seconds: a run this short counts as quick; an inline attempt longer than this is a setback."""

FAST_RUNS = 3
"""Quick worker-thread runs in a row after which a sync tool is tried on the event loop first
(doubled for every setback the tool has had, see ``MAX_BACKOFF``)."""

MAX_BACKOFF = 10
"""Setbacks after which the quick runs needed stop doubling (``FAST_RUNS << 10``: 3072 runs)."""


class _Run:
    """One script run in a worker thread, stoppable from the event loop.

    Stopping is cooperative: the run's tick counter looks at ``stop`` between two
    chunks of ticks (``lang.limits``), as it looks at the deadline, so the script
    ends within a few milliseconds of work; a run not started yet never starts.
    """

    def __init__(self) -> None:
        self.stop = threading.Event()

    def interrupt(self) -> None:
        """Stop the run: soon if it is running, before it starts otherwise."""
        self.stop.set()


def _location(tool: RuneTool, error: RuneError) -> str:
    file = error.file if error.line else tool.file
    line = error.line or tool.line
    return f"{file}:{line}:{error.column}" if error.line else f"{file}:{line}"


def _failure(tool: RuneTool, error: RuneError) -> ExecutionFailed | CallTimeout:
    where = _location(tool, error)
    details: dict[str, Any] = {
        "kind": type(error).__name__,
        "file": error.file if error.line else tool.file,
        "line": error.line or tool.line,
        "column": error.column,
        "trace": [str(frame) for frame in reversed(error.trace)],
    }
    if isinstance(error, RuneBudgetExceeded):
        return CallTimeout(
            f"tool {tool.name!r} stopped at {where}: {error.message} (an endless loop?);"
            " make it do less work per call or raise its timeout_ms",
            details=details,
        )
    if isinstance(error, RuneLimitError):
        return ExecutionFailed(f"tool {tool.name!r} hit a limit at {where}: {error.message}", details=details)
    verb = "panicked" if isinstance(error, RunePanic) else "failed"
    return ExecutionFailed(f"tool {tool.name!r} {verb} at {where}: {error.message}", details=details)


def _unwrap(tool: RuneTool, value: Any) -> Any:
    """A tool's Rune return value as JSON data: ``Ok(v)``/``Some(v)`` unwrap, ``Err(e)`` fails."""
    if type(value) is Result:
        if not value.is_ok:
            error = to_json(value.value, "the error value")
            # the value as the caller would see it: JSON, not Python's repr
            text = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)
            raise ExecutionFailed(
                f"tool {tool.name!r} returned Err({text}) (fn {tool.function} at {tool.file}:{tool.line})",
                details={"kind": "Err", "error": error, "file": tool.file, "line": tool.line},
            )
        value = value.value
    elif type(value) is Option:
        value = value.value if value.is_some else None
    return to_json(value, "the result")


@dataclass(eq=False)
class ToolEntry:
    """A served tool: its definition, the ``Unit`` it runs in, and how fast it has been."""

    tool: RuneTool
    unit: Unit
    quick_runs: int = 0
    """Consecutive worker-thread runs that used at most ``FAST_SECONDS`` of CPU time."""
    inline: bool = False
    """Try the next calls on the event loop first (see ``_run_inline``)."""
    setbacks: int = 0
    """Inline attempts that needed a worker thread after all or took too long."""

    @property
    def quick_runs_needed(self) -> int:
        """Quick worker-thread runs in a row that (again) switch on inline attempts."""
        return FAST_RUNS << min(self.setbacks, MAX_BACKOFF)

    def record(self, cpu_seconds: float) -> None:
        """Note a worker-thread run; enough quick ones in a row switch on inline attempts."""
        if cpu_seconds > FAST_SECONDS:
            self.quick_runs = 0
            return
        self.quick_runs += 1
        if self.quick_runs >= self.quick_runs_needed:
            self.inline = True

    def set_back(self) -> None:
        """An inline attempt did not fit: back to worker threads until quick there again, for longer."""
        self.inline, self.quick_runs = False, 0
        self.setbacks += 1


def _call(
    run: _Run, entry: ToolEntry, args: list[Any], context: CallContext, slot: Slot, max_memory: int
) -> tuple[Any, float]:
    """The worker thread's body: run the function, convert its value; errors are raised typed."""
    tool = entry.tool
    out = io.StringIO()
    try:
        if run.stop.is_set():
            return None, 0.0  # cancelled before it started: nobody waits for this run
        CURRENT_CALL.set(context)  # this thread runs in a copy of the caller's context
        HOST_AWAIT.set(slot.outside)
        started = time.thread_time()
        value = entry.unit.call(
            tool.function,
            *args,
            stdout=out,
            raw=True,
            deadline=context.deadline,
            max_memory=max_memory,
            stop=run.stop,
            rune_args=True,
        )
        return _unwrap(tool, value), time.thread_time() - started
    except RuneError as exc:
        if run.stop.is_set():  # stopped because its call was cancelled: nobody waits for this run
            _log.debug("%s stopped early: %s", tool.name, exc.message)
            return None, 0.0
        raise _failure(tool, exc) from None
    finally:
        if out.tell():
            _log.debug("%s printed: %s", tool.name, out.getvalue())


def _convert(tool: RuneTool, arguments: dict[str, Any]) -> list[Any]:
    return script_arguments(tool, arguments)  # raises InvalidArguments


def _run_inline(entry: ToolEntry, args: list[Any]) -> tuple[bool, Any]:
    """Try a quick sync tool on the event loop with a tiny budget; ``(False, None)`` when it needs more.

    An attempt is cut short before any effect beyond its discarded output (its
    arguments were a copy): by the budget, or by ``toolmesh::call``, which only
    a worker thread can await — so running it again in a thread is safe.  An
    attempt that is cut short or uses more than ``FAST_SECONDS`` of CPU time is
    a setback for the tool (``ToolEntry.set_back``).
    """
    tool = entry.tool
    started = time.thread_time()
    token = INLINE.set(True)
    try:
        value = entry.unit.call(
            tool.function,
            *args,
            stdout=_discard,
            raw=True,
            budget=INLINE_BUDGET,
            max_memory=INLINE_MEMORY,
            rune_args=True,
        )
    except (RuneLimitError, NeedsThread):  # the budget, memory or stack of an attempt: not a verdict
        entry.set_back()
        return False, None
    except RuneError as exc:
        raise _failure(tool, exc) from None
    finally:
        INLINE.reset(token)
    if time.thread_time() - started > FAST_SECONDS:
        entry.set_back()
    try:
        return True, _unwrap(tool, value)
    except RuneError as exc:  # a value that cannot become JSON (a function, say)
        raise _failure(tool, exc) from None


def _discard(text: str) -> None:
    pass


async def run_tool(
    entry: ToolEntry,
    arguments: dict[str, Any],
    context: CallContext,
    pool: ScriptPool,
    max_memory: int = MAX_MEMORY,
) -> Any:
    """Call the entry's tool with validated JSON ``arguments``; returns JSON data.

    Raises ``InvalidArguments`` for values Rune cannot hold, ``CallTimeout``
    when the instruction budget or the deadline runs out, ``ToolUnavailable``
    when too many scripts wait for ``pool``, ``ExecutionFailed`` (with the Rune
    message, location and stack trace) for panics, errors, limits and ``Err(...)``.
    """
    tool = entry.tool
    if entry.inline and not tool.is_async:
        done, value = _run_inline(entry, _convert(tool, arguments))
        if done:
            return value
    args = _convert(tool, arguments)
    run = _Run()
    slot = await pool.admit(tool.name, context.deadline)
    try:
        value, seconds = await anyio.to_thread.run_sync(
            _call, run, entry, args, context, slot, max_memory, abandon_on_cancel=True
        )
    except anyio.get_cancelled_exc_class():
        run.interrupt()
        raise
    finally:
        slot.close()
    if not tool.is_async:
        entry.record(seconds)
    return value
