"""``toolmesh sandbox``: run code tools and their examples locally, without a mesh."""

from __future__ import annotations

import json
import logging
import sys
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import typer
from toolmesh import NatsOption, cli_error

if TYPE_CHECKING:
    from rich.console import Console
    from toolmesh import Kernel, Settings
    from toolmesh.contracts import ToolResult

    from .selftest import ExampleOutcome

__all__ = ["sandbox_app"]

# Light on purpose (the toolmesh.cli entry point imports it for `toolmesh --help`): each command imports
# the sandbox when it runs.
sandbox_app = typer.Typer(
    help="Code tools (tool.code.v1) in the Deno sandbox.", no_args_is_help=True, rich_markup_mode=None
)


@cache
def _out() -> Console:
    from rich.console import Console

    return Console()


def _kernel(settings: Settings) -> Kernel:
    import msgspec
    from toolmesh import Kernel
    sandbox = sys.modules[__package__]  # this plugin's own package, as a plugin object

    # Local runs exercise the tools asked for: no bootstrap side effects at start.
    table = {**settings.plugins.get("sandbox", {}), "bootstrap": False}
    settings = msgspec.structs.replace(settings, plugins={**settings.plugins, "sandbox": table})
    return Kernel([sandbox], settings=settings, load_entrypoints=False)


def _paths(paths: list[str]) -> list[str]:
    from .document import find_documents

    missing = [path for path in paths if not find_documents(path)]
    if missing:
        raise cli_error(f"no *.tool.json document at {', '.join(missing)}")
    return paths


@sandbox_app.command("test")
def test_command(
    paths: Annotated[list[str], typer.Argument(help="Tool files or folders of *.tool.json files.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Run every tool's examples and report mismatches; exits 1 when any fails."""
    from rich.markup import escape

    from .selftest import run_examples

    settings = _load()

    async def main() -> list[ExampleOutcome]:
        kernel = _kernel(settings)
        try:
            await kernel.start(_paths(paths))
            return await run_examples(kernel)
        finally:
            await kernel.stop()

    outcomes = _run(main)
    failed = [outcome for outcome in outcomes if outcome.problem]
    if as_json:
        print(json.dumps({"passed": len(outcomes) - len(failed), "failed": len(failed), "outcomes": [
            {"tool": o.tool, "example": o.index, "description": o.description, "problem": o.problem} for o in outcomes
        ]}))
    else:
        for outcome in outcomes:
            label = "load" if outcome.index < 0 else f"example {outcome.index}"
            if outcome.problem:
                _out().print(f"[red]FAIL[/] {escape(outcome.tool)} {label}: {escape(outcome.problem)}", highlight=False)
            else:
                _out().print(f"[green]ok[/]   {escape(outcome.tool)} {label} {escape(outcome.description)}", highlight=False)
        _out().print(f"{len(outcomes) - len(failed)} passed, {len(failed)} failed", highlight=False)
    if failed:
        raise typer.Exit(1)


@sandbox_app.command("check")
def check_command(
    paths: Annotated[list[str], typer.Argument(help="Tool files or folders of *.tool.json files.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Check documents without running them and list every problem of each; exits 1 when any is refused."""
    from rich.markup import escape

    from .document import load_sources

    tools, problems = load_sources(_paths(paths))
    if as_json:
        print(json.dumps({"tools": sorted(tool.name for tool in tools), "problems": [
            {"file": problem.file, "path": problem.path, "reason": problem.reason} for problem in problems
        ]}))
    else:
        for tool in sorted(tools, key=lambda tool: tool.name):
            _out().print(f"[green]ok[/]   {escape(tool.name)} ({escape(tool.file or '')})", highlight=False,
                         soft_wrap=True)
        for problem in problems:  # one line each, unwrapped: a path is copied from it
            _out().print(f"[red]FAIL[/] {escape(str(problem))}", highlight=False, soft_wrap=True)
        refused = len({problem.file for problem in problems})
        _out().print(f"{len(tools)} conform, {refused} refused ({len(problems)} problem(s))", highlight=False)
    if problems:
        raise typer.Exit(1)


@sandbox_app.command("run")
def run_command(
    path: Annotated[str, typer.Argument(help="A *.tool.json file (or a folder; then --tool picks one).")],
    input_json: Annotated[str, typer.Option("--input", help="The input as a JSON object.")] = "{}",
    tool: Annotated[str | None, typer.Option("--tool", help="Tool name when PATH holds several.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole ToolResult as JSON.")] = False,
) -> None:
    """Run one tool locally with --input and print its result and console output; exits 1 on error."""
    import msgspec
    from rich.markup import escape
    from toolmesh.contracts import ToolRequest, encode

    try:
        arguments = json.loads(input_json)
    except ValueError as exc:
        raise cli_error(f"--input is not valid JSON ({exc}); e.g. --input '{{\"a\": 1}}'") from None
    if not isinstance(arguments, dict):
        raise cli_error(f"--input must be a JSON object, got {type(arguments).__name__}")
    settings = _load()

    async def main() -> ToolResult:
        kernel = _kernel(settings)
        try:
            await kernel.start(_paths([path]))
            names = [spec.name for spec in kernel.tools]
            name = tool or (names[0] if len(names) == 1 else None)
            if name is None:
                raise cli_error(f"{path} holds {len(names)} tools ({', '.join(names)}); pick one with --tool")
            result = await kernel.call(ToolRequest(id="run", tool=name, arguments=arguments))
            return result
        finally:
            await kernel.stop()

    # The tool's console output reaches the "toolmesh.tool" log: show it on stderr.
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("log %(levelname)s %(message)s"))
    tool_log = logging.getLogger("toolmesh.tool")
    tool_log.addHandler(handler)
    tool_log.setLevel(logging.DEBUG)
    try:
        result = _run(main)
    finally:
        tool_log.removeHandler(handler)
    if as_json:
        print(encode(result).decode())
    elif result.is_error and result.error is not None:
        from toolmesh import cli_stderr  # made on first use, like every Rich console of the command line

        cli_stderr.print(f"[bold red]{result.error.code.value}:[/] {escape(result.error.message)}", highlight=False)
    else:
        _out().print_json(data=msgspec.to_builtins(result.structured_content))
    if result.is_error:
        raise typer.Exit(1)


@sandbox_app.command("publish")
def publish_command(
    paths: Annotated[list[str], typer.Argument(help="Tool files or folders of *.tool.json files.")],
    nats_url: NatsOption = None,
    prefix: Annotated[str | None, typer.Option("--prefix", help="Subject prefix of the mesh.")] = None,
) -> None:
    """Publish documents on the mesh; nodes with [sandbox] mesh_tools = true serve them."""
    import msgspec
    from rich.markup import escape
    from toolmesh import ToolmeshError, load_settings

    from .breadcrumbs import NatsBreadcrumbs
    from .document import load_sources
    from .service import document_id

    try:
        settings = load_settings({"nats_url": nats_url, "prefix": prefix})
    except ToolmeshError as exc:
        raise cli_error(str(exc)) from None
    tools, problems = load_sources(_paths(paths))
    if problems:
        raise cli_error("refused, nothing published:\n" + "\n".join(f"  {problem}" for problem in problems))

    async def main() -> None:
        from toolmesh import connect_nats

        nc = await connect_nats(settings.connect_url, name="toolmesh sandbox publish", settings=settings)
        try:
            store = await NatsBreadcrumbs.open(nc, settings.prefix)
            for tool in tools:
                document = msgspec.to_builtins(tool.document)
                del document["schema_name"]
                if tool.ui_schema is not None:  # as written: the contract keeps only the keys it names
                    document["context"]["ui_schema"] = tool.ui_schema
                await store.put(document_id(tool.name), {"schema_name": "tool.code.v1", **document})
                _out().print(f"published {escape(tool.name)} as {escape(document_id(tool.name))}", highlight=False)
            await nc.flush()
        finally:
            await nc.close()

    _run(main)


def _load() -> Settings:
    from toolmesh import ToolmeshError, load_settings

    try:
        return load_settings()
    except ToolmeshError as exc:
        raise cli_error(str(exc)) from None


def _run(main: Any) -> Any:
    import anyio
    from toolmesh import ToolmeshError

    try:
        return anyio.run(main)
    except ToolmeshError as exc:
        raise cli_error(str(exc)) from None
