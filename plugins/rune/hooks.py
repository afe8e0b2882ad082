"""The Rune plugin's hook implementations: claim ``.rn`` sources, serve their tools, reload them."""

from __future__ import annotations

from typing import Any

from toolmesh import CallContext, Kernel, hookimpl
from toolmesh.contracts import ToolSpec

from .loader import claims
from .reload import SOURCE, RuneCatalog

__all__ = [
    "catalog_of",
    "toolmesh_claim_sources",
    "toolmesh_cli",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
    "toolmesh_shutdown",
    "toolmesh_tools_changed",
]


def catalog_of(kernel: Kernel) -> RuneCatalog:
    """The kernel's ``RuneCatalog``, created on first use (the plugin module is shared by every kernel)."""
    catalog = kernel.plugin_state.get(SOURCE)
    if catalog is None:
        catalog = kernel.plugin_state[SOURCE] = RuneCatalog(kernel)
    return catalog


def _rune_sources(sources: list[Any], known: frozenset[str] = frozenset()) -> list[str]:
    # a folder stays a Rune source after its last .rn file is deleted, so a new one is picked up
    return [source for source in sources if isinstance(source, str) and (source in known or claims(source))]


@hookimpl
def toolmesh_claim_sources(sources: list[str]) -> list[str]:
    """Claim ``.rn`` files and directories that hold one."""
    return _rune_sources(sources)


@hookimpl
def toolmesh_discover_tools(kernel: Kernel, sources: list[Any]) -> Any:
    """Load the Rune tool files of ``sources`` (again on every refresh: unchanged files come from the cache)."""
    catalog = kernel.plugin_state.get(SOURCE)
    paths = _rune_sources(sources, catalog.sources if catalog is not None else frozenset())
    if not paths and catalog is None:
        return None  # nothing to serve: no catalog, no watcher
    return catalog_of(kernel).discover(paths)


@hookimpl
def toolmesh_execute_tool(spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
    """Run a Rune tool (ownership decided synchronously from ``spec.source``)."""
    if spec.source != SOURCE:
        return None
    return catalog_of(context.kernel).execute(spec, arguments, context)


@hookimpl
async def toolmesh_tools_changed(kernel: Kernel, tools: list[ToolSpec]) -> None:
    """Publish the ``reloaded`` / ``reload_failed`` events of the refresh that just took effect."""
    catalog = kernel.plugin_state.get(SOURCE)
    if catalog is not None:
        await catalog.emit_pending()


@hookimpl
async def toolmesh_shutdown(kernel: Kernel) -> None:
    """Stop the file watcher."""
    catalog = kernel.plugin_state.pop(SOURCE, None)
    if catalog is not None:
        await catalog.close()


@hookimpl
def toolmesh_cli(app: Any) -> None:
    """Add the ``toolmesh rune`` command group."""
    from .cli import rune_app  # typer loads only when the command line is built

    app.add_typer(rune_app, name="rune")
