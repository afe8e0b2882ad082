"""``toolmesh console``: the mesh in a web page."""

from __future__ import annotations

from typing import Annotated

import typer
from toolmesh import NatsOption, PrefixOption, cli_error

__all__ = ["console_app", "run_console"]

# Light on purpose (the toolmesh.cli entry point imports it for `toolmesh --help`): the command imports the
# web stack when it runs.
console_app = typer.Typer(
    name="console",
    help="Serve the mesh's web console: catalog, tool forms, live calls, nodes.",
    rich_markup_mode=None,
    invoke_without_command=True,
)


def run_console(
    nats_url: str | None,
    *,
    prefix: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8470,
    token: str | None = None,
    trace_url: str | None = None,
) -> None:
    """Serve the console until interrupted; errors are printed as the other commands print them."""
    try:  # only to name the missing extra before anything else fails
        import jinja2  # noqa: F401
        import sse_starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise cli_error(f"the console needs its extra: pip install 'toolmesh[console]' ({exc})") from exc
    import anyio
    from toolmesh import ToolmeshError, cli_stderr, load_settings

    from .server import serve_console

    def ready(url: str) -> None:
        typer.echo(f"toolmesh console on {url}", err=False)

    try:
        settings = load_settings({"nats_url": nats_url, "prefix": prefix})
        if not settings.nats_url:
            raise cli_error(
                "no mesh to show: pass --nats URL (or set TOOLMESH_NATS_URL), or run 'toolmesh up --console'"
            )
        anyio.run(
            lambda: serve_console(
                settings, host=host, port=port, token=token, trace_url=trace_url, on_ready=ready
            )
        )
        typer.echo("console stopped", err=True)
    except ToolmeshError as exc:
        raise cli_error(str(exc)) from exc
    except KeyboardInterrupt:
        cli_stderr.print("console stopped")


@console_app.callback(invoke_without_command=True)
def console(
    nats_url: NatsOption = None,
    prefix: PrefixOption = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (loopback unless a token is set).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = 8470,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="TOOLMESH_CONSOLE_TOKEN",
            show_envvar=True,
            help="Token every request must present; required to listen beyond loopback.",
        ),
    ] = None,
    trace_url: Annotated[
        str | None,
        typer.Option(
            "--trace-url",
            envvar="TOOLMESH_CONSOLE_TRACE_URL",
            help="Link to a call's trace, with {trace_id} in it (when traces are exported).",
        ),
    ] = None,
) -> None:
    """Serve the console of the mesh at --nats (calls from the page carry this process's identity)."""
    run_console(nats_url, prefix=prefix, host=host, port=port, token=token, trace_url=trace_url)
