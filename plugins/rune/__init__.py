"""toolmesh Rune plugin: runs tool scripts written in the Rune language (see ``lang``)."""

from toolmesh import hookimpl


@hookimpl
def toolmesh_cli(app):  # type: ignore[no-untyped-def]
    """Add the ``toolmesh rune`` command group."""
    from toolmesh.plugins.rune.cli import rune_app

    app.add_typer(rune_app, name="rune")
