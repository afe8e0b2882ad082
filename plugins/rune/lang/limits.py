"""Per-run resource limits: instruction budget, recursion depth and allocation caps.

The budget of a run is an iterator of ``budget`` ticks (``itertools.repeat``) passed to every
compiled function as its first argument: function entry takes a tick with ``next()`` and loops
zip their items with it, so the check costs a C-level step instead of Python arithmetic. The
recursion depth is bounded by the Python recursion limit that ``Unit.call`` sets for the run
(a Rune call to a known function is one Python frame)."""

from __future__ import annotations

import itertools
import operator
import sys
import threading
from collections.abc import Iterator
from typing import Any

from .errors import RuneBudgetExceeded, RuneLimitError

DEFAULT_BUDGET = 50_000_000
MAX_DEPTH = 500
MAX_LENGTH = 10_000_000  # elements of a vector or characters of a string


Run = Iterator[bool]


def new_run(budget: int = DEFAULT_BUDGET) -> Run:
    return itertools.repeat(True, max(budget, 0))


class RunState(threading.local):
    """The current run of this thread (concurrent ``call_async`` runs live in separate worker
    threads), for values called back from Python helpers (iterator adaptors, host code)."""

    def __init__(self) -> None:
        self.run = new_run()
        self.max_length = MAX_LENGTH


STATE = RunState()


class RecursionLimit:
    """The process-wide Python recursion limit, shared by runs in several threads.

    Each run needs the limit at its own entry depth plus ``max_depth``; the limit is global,
    so while runs overlap it is the largest of their needs, and the limit found before the
    first run is restored when the last one ends (saving and restoring per run would leave
    a lowered limit behind when runs end in another order than they started)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._needs: list[int] = []
        self._outside = 0

    def enter(self, need: int) -> None:
        with self._lock:
            if not self._needs:
                self._outside = sys.getrecursionlimit()
            self._needs.append(need)
            sys.setrecursionlimit(max(self._needs))

    def leave(self, need: int) -> None:
        with self._lock:
            self._needs.remove(need)
            sys.setrecursionlimit(max(self._needs) if self._needs else self._outside)


RECURSION_LIMIT = RecursionLimit()


def out_of_budget() -> None:
    raise RuneBudgetExceeded("instruction budget exhausted (timeout)")


def metered(it: Iterator[Any]) -> Iterator[Any]:
    """An endless iterator (``0..``) that takes one budget tick per item, so consumers written
    in C (``count``, ``sum``, ``collect``) cannot run forever; raises when the budget is gone."""
    return itertools.chain(itertools.compress(it, STATE.run), _budget_gone())


def _budget_gone() -> Iterator[Any]:
    out_of_budget()
    yield  # pragma: no cover - makes this a generator: raises when first advanced


def loop_end(run: Run) -> None:
    """After a ``for`` loop: it may have stopped because the budget ran out."""
    if not operator.length_hint(run):
        out_of_budget()


def check_length(n: int, what: str) -> None:
    """Raise RuneLimitError if a string or vector would grow beyond the cap."""
    if n > STATE.max_length:
        raise RuneLimitError(f"{what} of {n} elements exceeds the limit of {STATE.max_length}")
