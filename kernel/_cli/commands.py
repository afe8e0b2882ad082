"""The ``toolmesh`` command line (typer + rich); every command has ``--json``.

Start-up is kept short: this module imports typer and nothing heavy; each command
imports what it needs when it runs (``toolmesh --help`` loads no NATS client,
OpenTelemetry or plugin implementation). Plugins add their commands as
:mod:`toolmesh._cli.plugin_commands` describes.

Help texts are shown as written (``rich_markup_mode=None``), so ``#[test]`` or
``[default: 4222]`` are not taken for Rich markup.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import typer
from toolmesh._cli.options import JsonOption, NatsOption, PrefixOption, fail

if TYPE_CHECKING:
    from rich.console import Console
    from toolmesh._config import Settings

__all__ = ["app", "main"]

app = typer.Typer(
    name="toolmesh",
    help="A distributed execution layer for AI-agent tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    # --help is declared on _root: typer converts its own (unset: None) --help of the group with pydantic,
    # which costs every subcommand ~100 ms of start-up; a bool flag that defaults to False is not converted
    add_help_option=False,
)


@cache
def _out() -> Console:
    from rich.console import Console

    return Console()


def _err() -> Console:
    from toolmesh._cli import options as cli_options

    return cli_options.error_console


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _run(main: Any, *args: Any) -> Any:
    """Run ``main(*args)`` once on a new event loop: uvloop's when it is installed, asyncio's otherwise.

    Whether uvloop is there is decided before anything runs: a ``ModuleNotFoundError`` raised by the
    command itself is its own failure, never a reason to run it again.
    """
    import importlib.util

    import anyio

    use_uvloop = importlib.util.find_spec("uvloop") is not None  # no uvloop wheels on Windows
    return anyio.run(main, *args, backend_options={"use_uvloop": use_uvloop})


def _settings(**overrides: Any) -> Settings:
    from toolmesh._config import load_settings
    from toolmesh._errors import ToolmeshError

    try:
        return load_settings(overrides)
    except ToolmeshError as exc:
        raise fail(str(exc)) from None


def _version_callback(value: bool) -> None:
    if value:
        from toolmesh._version import package_version

        typer.echo(f"toolmesh {package_version()}")
        raise typer.Exit()


def _help_callback(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        typer.echo(ctx.get_help(), color=ctx.color)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version and exit.")
    ] = False,
    show_help: Annotated[
        bool, typer.Option("--help", callback=_help_callback, is_eager=True, help="Show this message and exit.")
    ] = False,
) -> None:
    """toolmesh: serve tools on NATS, call them from anywhere."""


# ------------------------------------------------------------------ up


@app.command()
def up(
    sources: Annotated[list[str] | None, typer.Argument(help="Tool sources: paths, files, module:attr.")] = None,
    nats_url: NatsOption = None,
    port: Annotated[int | None, typer.Option("--port", help="Port of the embedded broker [default: 4222]")] = None,
    prefix: PrefixOption = None,
    name: Annotated[str | None, typer.Option("--name", help="Node name [default: host-pid-random]")] = None,
    max_concurrency: Annotated[int | None, typer.Option(help="Concurrent calls before 'unavailable'.")] = None,
    metrics_port: Annotated[int | None, typer.Option(help="Serve Prometheus metrics on 127.0.0.1:PORT.")] = None,
    log_format: Annotated[str | None, typer.Option(help="Log format: text or json.")] = None,
    console: Annotated[bool, typer.Option("--console", help="Also serve the web console.")] = False,
    console_host: Annotated[str, typer.Option("--console-host", help="Console address.")] = "127.0.0.1",
    console_port: Annotated[int, typer.Option("--console-port", help="Console port (0: any).")] = 8470,
    console_token: Annotated[
        str | None,
        typer.Option("--console-token", envvar="TOOLMESH_CONSOLE_TOKEN", help="Console access token."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Start a node serving the tools in SOURCES (an embedded NATS broker starts if none is given or running)."""
    import signal
    import time

    import anyio
    import msgspec
    from toolmesh._errors import ToolmeshError
    from toolmesh._telemetry.export import configure_telemetry
    from toolmesh._telemetry.logs import configure_logging, redact_url
    from toolmesh._transport.node import Node

    settings = _settings(
        nats_url=nats_url, port=port, prefix=prefix, node_name=name, max_concurrency=max_concurrency,
        metrics_port=metrics_port, log_format=log_format,
    )
    started = time.perf_counter()
    configure_logging(settings.log_format, settings.log_level)
    try:
        configure_telemetry("toolmesh-node", metrics_port=settings.metrics_port)
    except ToolmeshError as exc:
        raise fail(str(exc)) from None
    node = Node(settings=settings, sources=sources or [])
    unclaimed = node.kernel.unclaimed_sources(node.sources)
    if unclaimed:
        raise fail(
            f"no installed plugin serves {', '.join(map(repr, unclaimed))}: give a directory, a .py/.rn file,"
            " or module:attr (see 'toolmesh plugins')",
            1,
        )

    def ready(node: Node) -> None:
        report: dict[str, Any] = {
            "event": "ready",
            "node": node.name,
            "url": redact_url(node.url or ""),  # Credentials in the URL stay off the screen
            "embedded_broker": node.broker is not None,
            "prefix": settings.prefix,
            "tools": [spec.name for spec in node.kernel.tools],
            "unavailable": {
                spec.name: spec.unavailable_reason or "no reason given"
                for spec in node.kernel.tools if not spec.available
            },
            "problems": node.problems,
            "startup_ms": round((time.perf_counter() - started) * 1000, 1),
        }
        if as_json:
            print(json.dumps(report), flush=True)
            return
        broker = "embedded broker" if node.broker else "broker"
        _err().print(
            f"[bold green]node {_escape(node.name)}[/] serving {len(report['tools'])} tools on {broker}"
            f" {_escape(report['url'])}"
            f" (ready in {report['startup_ms']} ms)",
            highlight=False,
        )
        for tool in report["tools"]:
            reason = report["unavailable"].get(tool)
            suffix = "" if reason is None else f" [yellow](unavailable: {_escape(reason)})[/]"
            _err().print(f"  • {_escape(tool)}{suffix}", highlight=False)
        for problem in node.problems:
            _err().print(f"[yellow]warning:[/] {_escape(problem)}", highlight=False)
        _err().print("Ctrl-C drains and stops.", style="dim")

    node.on_ready = ready
    serve_console: Any = _console_server() if console else None  # resolved before the node starts: fail fast
    node_ready = anyio.Event()

    def ready_then_console(node: Node) -> None:
        ready(node)
        node_ready.set()

    def console_ready(url: str) -> None:
        if as_json:
            print(json.dumps({"event": "console", "url": url}), flush=True)
        else:
            _err().print(f"console on {url}", highlight=False)

    async def console_beside_node() -> None:
        # The console joins the mesh the node serves (the embedded broker's URL too) once the node is ready.
        await node_ready.wait()
        await serve_console(
            msgspec.structs.replace(settings, nats_url=node.url), host=console_host, port=console_port,
            token=console_token, handle_signals=False, on_ready=console_ready,
        )

    if console:
        node.on_ready = ready_then_console

    async def serve() -> None:
        async with anyio.create_task_group() as tg:

            async def watch_signals() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        if node._stop.is_set():
                            tg.cancel_scope.cancel()
                            return
                        if as_json:
                            print(json.dumps({"event": "draining", "node": node.name}), flush=True)
                        else:
                            _err().print("draining: finishing in-flight calls (Ctrl-C again to abort)…")
                        node.stop()

            tg.start_soon(watch_signals)
            if console:
                tg.start_soon(console_beside_node)
            await node.serve()
            tg.cancel_scope.cancel()

    try:
        _run(serve)
    except ToolmeshError as exc:
        raise fail(str(exc), 1) from None
    except BaseExceptionGroup as group:  # a start-up failure arrives through the signal-watching task group
        failures, _ = group.split(ToolmeshError)
        if failures is None:
            raise
        failure: BaseException = failures
        while isinstance(failure, BaseExceptionGroup):
            failure = failure.exceptions[0]
        raise fail(str(failure), 1) from None
    if as_json:
        print(json.dumps({"event": "stopped", "node": node.name}), flush=True)


def _console_server() -> Any:
    """The console's ``serve_console``, found by its entry point name (the kernel never imports a plugin)."""
    from importlib.metadata import entry_points

    found = entry_points(group="toolmesh.console", name="serve")
    if not found:
        raise fail("--console needs the console: pip install 'toolmesh[console]'")
    return next(iter(found)).load()


# ------------------------------------------------------------------ tools


@app.command()
def tools(nats_url: NatsOption = None, prefix: PrefixOption = None, as_json: JsonOption = False) -> None:
    """List the tools served on the mesh."""
    import msgspec
    from rich.table import Table
    from toolmesh._errors import ToolmeshError
    from toolmesh._pipeline.authorization import client_identity, visible_tools
    from toolmesh._transport.catalog import merge_tools
    from toolmesh._transport.mesh import Mesh

    settings = _settings(nats_url=nats_url, prefix=prefix)

    async def fetch() -> list[Any]:
        async with Mesh(settings=settings) as mesh:
            return await mesh.nodes()

    try:
        entries = _run(fetch)
    except ToolmeshError as exc:
        raise fail(str(exc)) from None
    merged = merge_tools(entries)
    # Hide what this client's identity may not use (advisory, see toolmesh._pipeline.authorization)
    shown = {spec.name for spec in visible_tools(settings, client_identity(settings), [s for s, _ in merged.values()])}
    merged = {name: entry for name, entry in merged.items() if name in shown}
    if as_json:
        listing = []
        for spec, nodes in (merged[name] for name in sorted(merged)):
            entry = {**msgspec.to_builtins(spec), "nodes": nodes}
            if spec.annotations is not None:  # flat, as MCP lists them: the tool's own keys beside the hints
                entry["annotations"] = spec.annotations.as_mcp()
            listing.append(entry)
        print(json.dumps(listing, indent=2))
        return
    if not merged:
        _err().print("no tools are served on this mesh (start a node with 'toolmesh up PATH')")
        return
    table = Table("tool", "description", "source", "nodes", box=None, header_style="bold")
    for name in sorted(merged):
        spec, nodes = merged[name]
        description = _escape((spec.description or "").split("\n")[0][:70])
        if not spec.available:
            description = f"[yellow]unavailable:[/] {_escape(spec.unavailable_reason or 'no reason given')}"
        table.add_row(_escape(name), description, _escape(spec.source), str(len(nodes)))
    _out().print(table)


# ------------------------------------------------------------------ call


def _parse_assignment(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise fail(f"-a {text!r} is not key=value (values are JSON when they parse, text otherwise)")
    try:
        return key, json.loads(raw)
    except RecursionError:
        raise fail(f"-a {key}=...: the value nests arrays/objects too deeply to parse; flatten it") from None
    except ValueError:
        return key, raw


@app.command()
def call(
    name: Annotated[str, typer.Argument(help="Tool name.")],
    arguments: Annotated[str | None, typer.Argument(help="Arguments as a JSON object.")] = None,
    arg: Annotated[
        list[str] | None, typer.Option("-a", "--arg", help="One argument as key=value (value parsed as JSON if it can be).")
    ] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds to wait for the result.")] = None,
    durable: Annotated[
        bool, typer.Option("--durable", help="Through the JetStream work queue: survives node failure, runs once per --id.")
    ] = False,
    request_id: Annotated[str | None, typer.Option("--id", help="Request id (idempotency key of --durable calls).")] = None,
    nats_url: NatsOption = None,
    prefix: PrefixOption = None,
    as_json: JsonOption = False,
) -> None:
    """Call a tool and print its result; exits 1 on a tool error."""
    from toolmesh._errors import ToolmeshError
    from toolmesh._telemetry.export import configure_telemetry
    from toolmesh._transport.mesh import Mesh
    from toolmesh.contracts import ToolResult, encode

    settings = _settings(nats_url=nats_url, prefix=prefix)
    payload: dict[str, Any] = {}
    if arguments:
        try:
            payload = json.loads(arguments)
        except ValueError as exc:
            raise fail(f"ARGUMENTS is not valid JSON ({exc}); e.g. '{{\"a\": 1}}' or use -a key=value") from None
        except RecursionError:
            raise fail("ARGUMENTS nests arrays/objects too deeply to parse; flatten the data") from None
        if not isinstance(payload, dict):
            raise fail(f"ARGUMENTS must be a JSON object, got {type(payload).__name__}")
    payload.update(dict(_parse_assignment(item) for item in arg or ()))

    async def send() -> ToolResult:
        async with Mesh(settings=settings) as mesh:
            return await mesh.call(name, payload, timeout=timeout, durable=durable or None, id=request_id)

    configure_telemetry("toolmesh-client")

    try:
        result = _run(send)
    except ToolmeshError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print(encode(result).decode())
    elif result.is_error and result.error is not None:
        _err().print(f"[bold red]{result.error.code.value}:[/] {_escape(result.error.message)}", highlight=False)
    elif result.structured_content is not None and not isinstance(result.structured_content, str):
        _out().print_json(data=result.structured_content)
    else:
        _out().print(result.text, highlight=False, markup=False)
    if result.is_error:
        raise typer.Exit(1)


# ------------------------------------------------------------------ events


def _announce_watching(settings: Settings, as_json: bool) -> None:
    """Tell the user (or, with --json, a script) that events published from now on will be seen."""
    if as_json:
        print(json.dumps({"event": "subscribed"}), flush=True)
    else:
        _err().print(f"watching tool events under {_escape(settings.prefix)}.event (Ctrl-C to stop)", style="dim")


def _run_until_interrupted(main: Any) -> None:
    """:func:`_run` for a command that watches until Ctrl-C, which ends it quietly; a mesh error fails it."""
    from toolmesh._errors import ToolmeshError

    try:
        _run(main)
    except KeyboardInterrupt:
        pass
    except ToolmeshError as exc:
        raise fail(str(exc)) from None


@app.command()
def events(
    tool: Annotated[str | None, typer.Option("--tool", help="Only events of this tool.")] = None,
    kind: Annotated[str, typer.Option("--kind", help="Only events of this kind (started, finished, failed, …).")] = "*",
    count: Annotated[int | None, typer.Option("--count", "-n", help="Stop after this many events.")] = None,
    nats_url: NatsOption = None,
    prefix: PrefixOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print tool events as nodes publish them (Ctrl-C to stop)."""
    import time

    import anyio
    from toolmesh._transport.event_feed import subscribe_events
    from toolmesh._transport.mesh import Mesh
    from toolmesh.contracts import ToolEvent, encode

    settings = _settings(nats_url=nats_url, prefix=prefix)

    async def follow() -> None:
        async with Mesh(settings=settings) as mesh:
            seen = 0
            enough = anyio.Event()

            def show(event: ToolEvent) -> None:
                nonlocal seen
                if enough.is_set():
                    return
                if as_json:
                    print(encode(event).decode(), flush=True)
                else:
                    took = f" {event.duration_ms:.1f} ms" if event.duration_ms is not None else ""
                    code = f" {event.error_code.value}" if event.error_code else ""
                    node = _escape(f"[{event.node or '?'}]")  # unescaped, rich takes it for a style tag
                    _out().print(
                        f"{time.strftime('%H:%M:%S', time.localtime(event.timestamp))} {event.kind:<9}"
                        f" {_escape(event.tool)} {node}{took}{code}",
                        highlight=False,
                    )
                seen += 1
                if count is not None and seen >= count:
                    enough.set()

            await subscribe_events(mesh, show, kind, tool)
            _announce_watching(settings, as_json)
            await enough.wait()

    _run_until_interrupted(follow)


# ------------------------------------------------------------------ top


@app.command()
def top(
    duration: Annotated[float | None, typer.Option(help="Stop after this many seconds.")] = None,
    nats_url: NatsOption = None,
    prefix: PrefixOption = None,
    as_json: JsonOption = False,
) -> None:
    """A live view of tools and nodes: calls/s, p50/p99, errors, cache hit rate (from tool events)."""
    import anyio
    from rich.live import Live
    from toolmesh._cli.top import TopModel, render_top
    from toolmesh._transport.event_feed import subscribe_events
    from toolmesh._transport.mesh import Mesh

    settings = _settings(nats_url=nats_url, prefix=prefix)
    model = TopModel()

    async def watch() -> None:
        async with Mesh(settings=settings) as mesh:
            await subscribe_events(mesh, model.add)
            _announce_watching(settings, as_json)
            # Redrawn on the event loop (the model is not thread-safe), as of each redraw so
            # rates fall to zero when calls stop
            with Live(render_top(model), console=_out(), auto_refresh=False, transient=as_json) as live:
                with anyio.move_on_after(duration):
                    while True:
                        live.update(render_top(model), refresh=True)
                        await anyio.sleep(0.5)
                live.update(render_top(model))

    _run_until_interrupted(watch)
    if as_json:
        print(json.dumps(model.as_dict()))


# ------------------------------------------------------------------ bench


@app.command()
def bench(
    out_dir: Annotated[str, typer.Option("--out", help="Folder for report.md and the PNG plots.")] = "bench-report",
    quick: Annotated[bool, typer.Option("--quick", help="A short run (seconds) for a first look.")] = False,
    scripts_dir: Annotated[
        str | None,
        typer.Option("--scripts", help="Also run the scripts of this bench/ folder (a toolmesh checkout's)."),
    ] = None,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="With --scripts: run only this script (repeatable).")
    ] = None,
    script_timeout: Annotated[float, typer.Option("--script-timeout", help="Seconds each script may run.")] = 1800,
    as_json: JsonOption = False,
) -> None:
    """Measure call latency, throughput vs concurrency and scaling; write a Markdown report with plots."""
    from pathlib import Path

    from rich.progress import Progress
    from toolmesh._cli.bench_scripts import bench_scripts, run_script
    from toolmesh._cli.benchmark import run_suite, steps, write_report

    try:
        scripts = bench_scripts(Path(scripts_dir), only) if scripts_dir is not None else []
    except FileNotFoundError as exc:
        raise fail(str(exc)) from None
    runs = []
    with Progress(console=_err(), transient=as_json) as progress:
        tasks = {name: progress.add_task(name, total=total) for name, total in steps(quick).items()}
        results = _run(lambda: run_suite(quick=quick, progress=lambda name, amount: progress.advance(tasks[name], amount)))
        for script in scripts:
            task = progress.add_task(f"bench/{script.name}", total=1)
            runs.append(run_script(script, script_timeout))
            progress.advance(task)
    try:
        path = write_report(results, Path(out_dir), runs)
    except ImportError:
        raise fail("plots need matplotlib: pip install 'toolmesh[bench]'") from None
    failed = [run.script.name for run in runs if not run.ok]
    if as_json:
        print(json.dumps({"report": str(path), "latency": results.summary(),
                          "throughput": results.throughput_by_concurrency, "scaling": results.scaling,
                          "scripts": [{"script": run.script.name, "returncode": run.returncode,
                                       "seconds": round(run.seconds, 1)} for run in runs]}))
    else:
        _err().print(f"report written to {_escape(str(path))}")
    if failed:
        raise fail(f"bench script(s) failed: {', '.join(failed)}; their output is in {path}", 1)


# ------------------------------------------------------------------ plugins


@app.command()
def plugins(as_json: JsonOption = False) -> None:
    """List the loaded plugins and the hooks each implements."""
    from rich.table import Table
    from toolmesh._errors import ToolmeshError
    from toolmesh._pipeline.plugin_manager import create_plugin_manager, describe_plugins

    try:
        infos = describe_plugins(create_plugin_manager())
    except ToolmeshError as exc:
        raise fail(str(exc)) from None
    if as_json:
        print(json.dumps([info.__dict__ for info in infos], indent=2))
        return
    table = Table("plugin", "distribution", "hooks", box=None, header_style="bold")
    for info in infos:
        dist = f"{info.distribution} {info.version}" if info.distribution else "built-in"
        hooks = ", ".join(hook.removeprefix("toolmesh_") for hook in info.hooks)
        table.add_row(_escape(info.name), _escape(dist), hooks)
    _out().print(table)


@app.command("health")
def health(
    node: Annotated[str | None, typer.Option("--node", help="Node name [default: TOOLMESH_NODE_NAME]")] = None,
    live: Annotated[
        bool,
        typer.Option("--live", help="Liveness: fail if the node does not answer (or the embedded broker is gone)."),
    ] = False,
    nats_url: NatsOption = None,
    prefix: PrefixOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check that a node answers (and, without --live, is in the catalog and not draining); for probes."""
    from toolmesh._cli.health import health as check_health  # probes for containers (toolmesh._cli.health)

    check_health(node=node, live=live, nats_url=nats_url, prefix=prefix, as_json=as_json)


# ------------------------------------------------------------------ plugin commands


def _names_a_kernel_command(argv: list[str]) -> bool:
    """True when ``argv`` runs a command of the kernel itself (or ``--version``).

    Then the plugins' commands are not needed, and looking them up would only add to
    the start-up of each ``toolmesh call``.
    """
    if argv[:1] == ["--version"]:
        return True
    own = {command.name or command.callback.__name__ for command in app.registered_commands if command.callback}
    return bool(argv) and argv[0] in own


def main() -> None:
    """Entry point of the ``toolmesh`` script: adds plugin commands (unless a kernel command runs), then runs."""
    argv = sys.argv[1:]
    if not _names_a_kernel_command(argv):
        from toolmesh._cli.plugin_commands import add_plugin_commands

        try:
            add_plugin_commands(app, argv)
        except Exception as exc:  # a ToolmeshError is reported; anything else is a bug and raises
            from toolmesh._errors import (
                ToolmeshError,  # imported here: loading it costs every command's start-up
            )

            if not isinstance(exc, ToolmeshError):
                raise
            _err().print(f"[bold red]error:[/] {_escape(str(exc))}", highlight=False)
            sys.exit(2)
    app()
