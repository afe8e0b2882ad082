"""Per-run resource limits: instruction budget, recursion depth and allocation caps."""

from __future__ import annotations

import threading

from .errors import RuneBudgetExceeded, RuneLimitError

DEFAULT_BUDGET = 50_000_000
MAX_DEPTH = 500
MAX_LENGTH = 10_000_000  # elements of a vector or characters of a string


class RunState(threading.local):
    """Mutable counters of the current run, per thread so concurrent ``call_async`` runs in
    worker threads keep separate budgets; reset by ``Unit.call``."""

    def __init__(self) -> None:
        self.budget = DEFAULT_BUDGET
        self.depth = 0
        self.max_depth = MAX_DEPTH
        self.max_length = MAX_LENGTH


STATE = RunState()


def out_of_budget() -> None:
    raise RuneBudgetExceeded("instruction budget exhausted (timeout)")


def too_deep() -> None:
    raise RuneLimitError(f"recursion limit of {STATE.max_depth} calls exceeded")


def check_length(n: int, what: str) -> None:
    """Raise RuneLimitError if a string or vector would grow beyond the cap."""
    if n > STATE.max_length:
        raise RuneLimitError(f"{what} of {n} elements exceeds the limit of {STATE.max_length}")
