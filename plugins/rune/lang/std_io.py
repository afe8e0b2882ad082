"""``std::io`` functions (``print``, ``println``, ``dbg``) and ``std::clone::clone``, all in the prelude."""

from __future__ import annotations

from typing import Any

from . import output
from .formatting import debug, display


def _print(text: Any) -> None:
    output.write(display(text))


def _println(text: Any) -> None:
    output.write(display(text) + "\n")


def _dbg(*values: Any) -> None:
    for v in values:
        output.write(debug(v) + "\n")


def clone_value(v: Any) -> Any:
    """``clone(v)``: what ``v.clone()`` gives."""
    from .std_methods import call_method

    return call_method(v, "clone", [])


IO_FUNCTIONS: dict[str, Any] = {"print": _print, "println": _println, "dbg": _dbg}


def join(futures: Any) -> Any:
    """``std::future::join``: a future of the results of a tuple or vector of futures, in order."""
    from .asyncio_bridge import await_value
    from .errors import RuneRuntimeError
    from .values import Future

    if futures is None:
        return Future.of(lambda: None)
    if type(futures) not in (list, tuple):
        raise RuneRuntimeError("`future::join` takes a tuple or a vector of futures")
    kind = type(futures)
    return Future.of(lambda: kind(await_value(f) for f in futures))
