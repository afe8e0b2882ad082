"""Where ``print!``/``println!`` write: a per-run sink set by ``Unit.call``."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable


class _Sinks(threading.local):
    def __init__(self) -> None:
        self.stack: list[Callable[[str], object]] = []


_sinks = _Sinks()


def write(text: str) -> None:
    stack = _sinks.stack
    if stack:
        stack[-1](text)
    else:
        sys.stdout.write(text)


def push_sink(sink: Callable[[str], object]) -> None:
    _sinks.stack.append(sink)


def pop_sink() -> None:
    _sinks.stack.pop()
