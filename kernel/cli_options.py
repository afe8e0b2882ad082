"""What every ``toolmesh`` command shares, plugin commands included: mesh options and error output."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

__all__ = ["JsonOption", "NatsOption", "PrefixOption", "error_console", "fail"]

NatsOption = Annotated[
    Optional[str],
    typer.Option("--nats", envvar="TOOLMESH_NATS_URL", help="NATS URL of the mesh [default: nats://127.0.0.1:4222]"),
]
"""``--nats URL`` (or ``TOOLMESH_NATS_URL``)."""

PrefixOption = Annotated[Optional[str], typer.Option("--prefix", help="Subject prefix of the mesh [default: tool]")]
"""``--prefix P``: which mesh on a shared NATS account."""

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
"""``--json``, which every command offers."""

error_console = Console(stderr=True, soft_wrap=True)
"""Where human-readable messages go (stdout stays for results)."""


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the ``typer.Exit`` to raise."""
    error_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(code)
