"""``toolmesh crew``: debug an agent's tool calls by replaying them against the mesh."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from toolmesh import NatsOption, PrefixOption

if TYPE_CHECKING:
    from .replay import ReplayStep

__all__ = ["crew_app"]

# Light on purpose (the toolmesh.cli entry point imports it for `toolmesh --help`): the command
# imports the replay machinery when it runs.
crew_app = typer.Typer(
    name="crew",
    help="The agent tool-usage lifecycle: replay scripted agents against the mesh.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_step(step: ReplayStep) -> None:
    line, observation = step.line, step.observation
    who = " ".join(
        part
        for part in (f"agent={line.agent}" if line.agent else "", f"task={line.task}" if line.task else "")
        if part
    )
    shown = line.output if isinstance(line.output, str) else json.dumps(line.output)
    typer.echo(f"--- line {line.number}{' ' + who if who else ''}")
    typer.echo(f"agent: {shown}")
    status = "final answer" if observation.final_answer else ("answer" if observation.is_answer else "")
    status = status or ("ok" if observation.ok else f"error {observation.code}")
    cached = " (cached)" if observation.from_cache else ""
    text = observation.text.strip("\n").replace("\n", "\n    ")
    typer.echo(f"observation [{status}{cached}]: {text}")
    for event in observation.events:
        attributes = event.attributes or {}
        detail = attributes.get("error") or ""
        typer.echo(f"  event {event.kind} {event.tool}{': ' + str(detail) if detail else ''}")


@crew_app.command("replay")
def replay_command(
    file: Annotated[
        Path, typer.Argument(help="JSON lines: each an agent output, with optional agent and task.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per line.")] = False,
    nats_url: NatsOption = None,
    prefix: PrefixOption = None,
    model: Annotated[
        str | None, typer.Option("--model", help="The agent's model (gpt-4o etc. get 2 parsing attempts).")
    ] = None,
) -> None:
    """Replay a scripted agent: print each observation and the events it emitted."""
    import anyio
    from toolmesh import Mesh, ToolmeshError, load_settings

    from .replay import ScriptError, read_script, replay
    from .tool_usage import ToolUsage

    try:
        script = read_script(file)
    except ScriptError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None

    async def run() -> None:
        settings = load_settings({"nats_url": nats_url, "prefix": prefix})
        async with Mesh(settings=settings, name="toolmesh-crew-replay") as mesh:
            usage = await ToolUsage.connect(mesh, model=model)
            try:
                async for step in replay(usage, script):
                    if as_json:
                        typer.echo(json.dumps(step.as_dict(), default=str))
                    else:
                        _print_step(step)
            finally:
                await usage.close()

    try:
        anyio.run(run)
    except ToolmeshError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
