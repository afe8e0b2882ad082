"""Per-run resource limits: instruction budget, deadline, recursion depth and memory.

The budget of a run is an iterator of ``budget`` ticks passed to every compiled function as its
first argument: function entry takes a tick with ``next()`` and loops zip their items with it,
so a tick costs a C-level step instead of Python arithmetic.  The iterator is a chain of
``itertools.repeat`` chunks of ``CHECK_EVERY`` ticks; between two chunks a generator compares
the clock with the run's deadline, and when the last chunk is spent it raises
``RuneBudgetExceeded``, so a spin stops at its deadline however many scripts share the CPU.

Memory: every operation that can build a big value (string concatenation, ``format!``,
templates, ``replace``, ``repeat``, ``join``, vector growth, ``collect``, ``clone``, bytes...)
calls ``allocate`` with the size the result *would* have before building it: one value may hold
at most ``max_length`` elements (characters, items or bytes), and the values a run builds count
against its ``max_memory`` budget (estimated bytes: a character of an ASCII string is one, of
another string four, a vector item eight).  Small values built inline by the generated code (a few
characters of a template, one pushed item) are paid for by the instruction budget instead.

Recursion depth: a Rune call to a known function is one Python frame, so the depth is bounded
by Python's own recursion limit, reached at the run's ``max_depth`` by starting the run that
many frames below the limit (``at_depth``).  The process-wide limit is never changed: other
threads (Python tools, request decoding) keep their full depth while scripts run.
"""

from __future__ import annotations

import io
import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .errors import RuneBudgetExceeded, RuneLimitError

DEFAULT_BUDGET = 50_000_000
MAX_DEPTH = 900
MAX_LENGTH = 10_000_000  # elements of one vector, string or byte array
MAX_MEMORY = 256 * 1024 * 1024
"""Bytes (estimated) the big-value operations of one run may build in total."""
ITEM_BYTES = 8
"""Estimated bytes of one vector or object item that refers to a value counted already (a copy)."""
OBJECT_KEY_BYTES = 80
"""Estimated bytes of an object entry's key and hash-table slot, besides its value."""
ITEM_BLOCK = 65_536
"""Vectors and objects growing item by item are accounted for a block of this many items at a
time (``grow``), so the generated code adds items inline and calls out once per block."""
INLINE_APPEND = 4096
"""Characters a string may grow by in the generated code without a call to ``allocate``: a
template or ``push_str`` this small is paid for by the instruction budget."""
CHECK_EVERY = 10_000
"""Ticks between two looks at the clock: a tick is a few microseconds of work at most, apart
from bulk operations, which look at the clock themselves (``allocate``)."""

Run = Iterator[bool]


def new_run(
    budget: int = DEFAULT_BUDGET, deadline: float | None = None, stop: threading.Event | None = None
) -> Run:
    """The tick iterator of one run: ``budget`` ticks, ending at ``deadline`` (``time.monotonic``)
    or, sooner, once ``stop`` is set (by another thread: the run's call was cancelled)."""
    return itertools.chain.from_iterable(_chunks(max(budget, 0), deadline, stop))


def _chunks(budget: int, deadline: float | None, stop: threading.Event | None) -> Iterator[Iterator[bool]]:
    clock = time.monotonic
    while budget > 0:
        if deadline is not None and clock() >= deadline:
            raise RuneBudgetExceeded("the run's deadline passed (timeout)")
        if stop is not None and stop.is_set():
            raise RuneBudgetExceeded("the run was stopped: its call was cancelled")
        step = min(budget, CHECK_EVERY)
        budget -= step
        yield itertools.repeat(True, step)
    out_of_budget()


class RunState(threading.local):
    """The current run of this thread (concurrent runs live in separate worker threads), for
    values called back from Python helpers (iterator adaptors, host code) and memory accounting."""

    def __init__(self) -> None:
        self.run = new_run()
        self.max_length = MAX_LENGTH
        self.max_memory = MAX_MEMORY
        self.allocated = 0
        self.deadline: float | None = None


STATE = RunState()


def out_of_budget() -> None:
    raise RuneBudgetExceeded("instruction budget exhausted (timeout)")


def metered(it: Iterator[Any]) -> Iterator[Any]:
    """An endless iterator (``0..``) that takes one budget tick per item, so consumers written
    in C (``count``, ``sum``, ``collect``) cannot run forever; raises when the budget is gone."""
    return itertools.chain(itertools.compress(it, STATE.run), _budget_gone())


def _budget_gone() -> Iterator[Any]:
    out_of_budget()
    yield  # pragma: no cover - makes this a generator: raises when first advanced


def check_length(n: int, what: str) -> None:
    """Raise RuneLimitError if one string or vector would grow beyond the per-value cap."""
    if n > STATE.max_length:
        raise RuneLimitError(
            f"{what} of {n} elements exceeds the limit of {STATE.max_length} elements per value;"
            " build smaller values"
        )


_LOOK_AT_CLOCK = 100_000  # an allocation this big is worth a look at the deadline


def allocate(n: int, what: str, item_bytes: int = 1) -> None:
    """Account for a value of ``n`` elements of ``item_bytes`` each about to be built: the cap per
    value and the memory budget of the run.  Call it *before* building the value."""
    state = STATE
    if n > state.max_length:
        check_length(n, what)
    total = state.allocated + n * item_bytes
    if total > state.max_memory:
        raise RuneLimitError(
            f"{what} of {n} elements would bring the memory this run built to about {total} bytes,"
            f" over its budget of {state.max_memory} bytes; keep fewer or smaller values"
            " (build long strings with push_str or join, not `s = s + x`)"
        )
    state.allocated = total
    if n >= _LOOK_AT_CLOCK and state.deadline is not None and time.monotonic() >= state.deadline:
        raise RuneBudgetExceeded("the run's deadline passed (timeout)")


def allocate_string(s: str, what: str = "string") -> str:
    """``allocate`` for a string built already by code that cannot know its size in advance
    (bounded by the caps of its parts); returns ``s``."""
    allocate(len(s), what, 1 if s.isascii() else 4)
    return s


def new_item_bytes(sample: Any) -> int:
    """Estimated bytes of one item of a vector whose items are made on the way (``collect``):
    the reference and, up to a small value's size, the value itself (like ``sample``)."""
    return ITEM_BYTES + min(sys.getsizeof(sample), 128)


def grow(container: Any, item: Any, what: str) -> None:
    """Before one more item goes into a vector, object or byte string: a container starting a new
    block of ``ITEM_BLOCK`` items accounts for the whole block (cap and memory budget)."""
    n = len(container)
    if n and not n % ITEM_BLOCK:
        check_length(n + 1, what)
        size = 1 if isinstance(container, bytearray) else new_item_bytes(item)
        if isinstance(container, dict):
            size += OBJECT_KEY_BYTES
        allocate(ITEM_BLOCK, f"{what} growing past {n} items: a block", size)


def allocate_text(fixed: int, *parts: str) -> None:
    """``allocate`` for a template or ``format!`` of ``fixed`` literal characters and ``parts``."""
    wide = any(not part.isascii() for part in parts)
    allocate(fixed + sum(map(len, parts)), "formatted string", 4 if wide else 1)


class TextBuilder:
    """A string written piece by piece (``debug`` of a vector, ``format!``) that stops as soon as
    it would pass the per-value cap, instead of building first and measuring after."""

    __slots__ = ("_out", "size", "what")

    def __init__(self, what: str) -> None:
        self._out = io.StringIO()
        self.size = 0
        self.what = what

    def add(self, piece: str) -> None:
        size = self.size + len(piece)
        if size > STATE.max_length:
            check_length(size, self.what)
        self.size = size
        self._out.write(piece)

    def text(self) -> str:
        """The string built, counted against the run's memory budget."""
        return allocate_string(self._out.getvalue(), self.what)


def at_depth(max_depth: int, slack: int, fn: Callable[..., Any], *args: Any) -> Any:
    """Call ``fn(*args)`` so that Python's recursion limit stops it ``max_depth + slack`` frames
    deeper than the caller (or sooner, when the process's limit leaves less room)."""
    room = sys.getrecursionlimit() - _stack_depth() - 2
    return _descend(room - max_depth - slack, fn, args)


def _descend(frames: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    # Each level is one Python frame: the run starts ``frames`` levels below its caller.
    if frames > 0:
        return _descend(frames - 1, fn, args)
    return fn(*args)


def _stack_depth() -> int:
    depth = 0
    frame: Any = sys._getframe(1)
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth
