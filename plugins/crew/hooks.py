"""The crew plugin's hook implementations: the ``toolmesh crew`` command and env-var checks on load."""

from __future__ import annotations

import msgspec
import typer
from toolmesh import hookimpl
from toolmesh.contracts import ToolSpec

from .env import check_env

__all__ = ["toolmesh_cli", "toolmesh_tool_spec"]


@hookimpl
def toolmesh_cli(app: typer.Typer) -> None:
    """Add ``toolmesh crew replay``."""
    from .cli import crew_app

    app.add_typer(crew_app, name="crew")


@hookimpl
def toolmesh_tool_spec(spec: ToolSpec) -> ToolSpec | None:
    """Mark a tool unavailable when an environment variable it requires is missing."""
    if not spec.required_env and not (spec.meta and "crew" in spec.meta):
        return None
    reason = check_env(spec)
    if reason is None or not spec.available:
        return None
    return msgspec.structs.replace(spec, available=False, unavailable_reason=reason)
