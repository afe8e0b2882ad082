"""What every ``toolmesh`` command shares, plugin commands included: mesh options and error output.

Light on purpose: plugins' command modules import it to declare their options, and
``toolmesh --help`` must not pay for Rich until something is printed to the console.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    error_console: Console

__all__ = ["JsonOption", "NatsOption", "PrefixOption", "error_console", "fail"]

NatsOption = Annotated[
    str | None,
    typer.Option("--nats", envvar="TOOLMESH_NATS_URL", help="NATS URL of the mesh [default: nats://127.0.0.1:4222]"),
]
"""``--nats URL`` (or ``TOOLMESH_NATS_URL``)."""

PrefixOption = Annotated[str | None, typer.Option("--prefix", help="Subject prefix of the mesh [default: tool]")]
"""``--prefix P``: which mesh on a shared NATS account."""

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
"""``--json``, which every command offers."""


@cache
def _error_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


def __getattr__(name: str) -> Any:
    # ``error_console`` (a Rich console on stderr, where human-readable messages go; stdout stays for
    # results) is made on first use, so importing this module does not import Rich.
    if name == "error_console":
        return _error_console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the ``typer.Exit`` to raise."""
    from rich.markup import escape

    _error_console().print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(code)
