"""The hook implementations of the sandbox plugin."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import msgspec
from toolmesh import CallContext, Kernel, Node, ToolDefinitionError, hookimpl
from toolmesh.contracts import ToolSpec, is_valid_tool_name

from .bootstrap import bootstrap_order
from .config import SandboxSettings
from .document import SUFFIX, DocumentProblem, find_documents, load_sources
from .service import SOURCE, Sandbox

__all__ = [
    "sandbox_of",
    "toolmesh_claim_sources",
    "toolmesh_cli",
    "toolmesh_discover_tools",
    "toolmesh_execute_tool",
    "toolmesh_shutdown",
    "toolmesh_startup",
]

STATE_KEY = "sandbox"
"""Key of the plugin's ``Sandbox`` in ``kernel.plugin_state``."""

_log = logging.getLogger("toolmesh.sandbox")


def sandbox_of(kernel: Kernel) -> Sandbox:
    """The kernel's ``Sandbox``, created on first use (a kernel may discover before it starts)."""
    sandbox = kernel.plugin_state.get(STATE_KEY)
    if sandbox is None:
        sandbox = Sandbox(kernel, SandboxSettings.from_table(kernel.settings.plugins.get(STATE_KEY)))
        kernel.plugin_state[STATE_KEY] = sandbox
    return sandbox


@hookimpl
def toolmesh_claim_sources(sources: list[str]) -> list[str]:
    return [source for source in sources if source.endswith(SUFFIX) or find_documents(source)]


@hookimpl
async def toolmesh_startup(kernel: Kernel) -> None:
    sandbox = sandbox_of(kernel)
    on_mesh = any(isinstance(plugin, Node) for plugin in kernel.pm.get_plugins())
    await sandbox.open(on_mesh)


@hookimpl
async def toolmesh_shutdown(kernel: Kernel) -> None:
    sandbox = kernel.plugin_state.pop(STATE_KEY, None)
    if sandbox is not None:
        await sandbox.close()


def _unavailable_name(problems: list[DocumentProblem], file: str) -> str:
    # Name the refused tool after the document when it names itself validly, else after the file.
    try:
        data = msgspec.json.decode(Path(file).read_bytes())
        name = data["context"]["name"]
        if isinstance(name, str) and is_valid_tool_name(name):
            return name
    except (OSError, ValueError, LookupError, TypeError) as exc:  # unreadable or unnamed: use the file name
        _log.debug("no tool name read from %s: %r", file, exc)
    stem = Path(file).name.removesuffix(SUFFIX)
    return re.sub(r"[^A-Za-z0-9_.-]", "_", stem)[:128] or "unnamed"


@hookimpl
async def toolmesh_discover_tools(kernel: Kernel, sources: list[Any]) -> list[ToolSpec]:
    paths = [source for source in sources if isinstance(source, str) and toolmesh_claim_sources([source])]
    sandbox = sandbox_of(kernel)
    if not paths and not sandbox.tools and not sandbox.mesh_tools:
        return []
    tools, problems = load_sources(paths)
    from_files = {tool.name for tool in tools}
    for name, tool in sandbox.mesh_tools.items():
        if name in from_files:
            _log.warning("published tool.code.v1 document %s is shadowed by the file %s", name,
                         next(t.file for t in tools if t.name == name))
        else:
            tools.append(tool)
    if problems and sandbox.settings.strict:
        raise ToolDefinitionError(
            "tool.code.v1 document(s) refused:\n" + "\n".join(f"  {problem}" for problem in problems)
        )
    first = not sandbox.specs
    specs = await sandbox.register(tools)
    _, refused = bootstrap_order(tools)
    for index, spec in enumerate(specs):
        if spec.name in refused:
            specs[index] = msgspec.structs.replace(spec, available=False, unavailable_reason=refused[spec.name])
            sandbox.specs[spec.name] = specs[index]
    by_file: dict[str, list[DocumentProblem]] = {}
    for problem in problems:
        by_file.setdefault(problem.file, []).append(problem)
    refused_names = set()
    for file, found in by_file.items():
        reason = "the document does not conform to tool.code.v1: " + "; ".join(
            f"{problem.path}: {problem.reason}" for problem in found
        )
        _log.warning("refused %s: %s", file, reason)
        refused_names.add(_unavailable_name(found, file))
        specs.append(
            ToolSpec(name=_unavailable_name(found, file), description=f"refused tool.code.v1 document {file}",
                     source=SOURCE, available=False, unavailable_reason=reason, meta={"file": file})
        )
    for spec in specs:
        if not spec.available and spec.name not in refused_names:
            # Not a warning: the catalog, `toolmesh tools` and `toolmesh up` show the tool as unavailable
            # with this reason, and a missing secret or runtime is a state of the deployment, not a fault.
            _log.debug("code tool %s is unavailable: %s", spec.name, spec.unavailable_reason)
    await sandbox.activate(refused, first=first)
    return specs


@hookimpl
def toolmesh_execute_tool(spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
    if spec.source != SOURCE:
        return None
    return sandbox_of(context.kernel).execute(spec, arguments, context)


@hookimpl
def toolmesh_cli(app: Any) -> None:
    from .cli import sandbox_app  # rich and typer load only when the command line is built

    app.add_typer(sandbox_app, name="sandbox")
