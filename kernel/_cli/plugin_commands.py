"""Plugins' commands for the ``toolmesh`` command line, added without importing the plugins' implementations.

A plugin contributes commands in one of two ways:

- an entry point in the ``toolmesh.cli`` group, named like the plugin, pointing at
  a typer app that becomes ``toolmesh NAME``; only that module is imported (and only
  for ``toolmesh NAME ...`` or help), so it imports its implementation inside its
  command functions::

      [project.entry-points."toolmesh.cli"]
      mine = "toolmesh_mine.cli:app"

- the ``toolmesh_cli(app)`` hook, for the plugins of a distribution that declares
  no ``toolmesh.cli`` entry point: those plugins are imported and the hook is called
  on them. A distribution that declares one declares all its commands that way (its
  plugins without commands, like ``python``, are then not imported for the command line).

``TOOLMESH_PLUGINS`` limits the commands as it limits the plugins a node loads.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["COMMANDS_ENTRY_POINT_GROUP", "add_plugin_commands"]

COMMANDS_ENTRY_POINT_GROUP = "toolmesh.cli"
"""Entry-point group of plugins' command groups: ``NAME = "module:typer_app"`` becomes ``toolmesh NAME``."""

# Named as in toolmesh._pipeline.plugin_manager, which imports pluggy and the hook specifications: too much for --help
_PLUGINS_ENTRY_POINT_GROUP = "toolmesh.plugins"
_PLUGINS_ENV = "TOOLMESH_PLUGINS"


def _allowed_plugins() -> set[str] | None:
    raw = os.environ.get(_PLUGINS_ENV)
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _command_group(entry_point: EntryPoint) -> typer.Typer:
    group = entry_point.load()
    if not isinstance(group, typer.Typer):
        from toolmesh._errors import ConfigError

        raise ConfigError(
            f"the {COMMANDS_ENTRY_POINT_GROUP} entry point {entry_point.name} = {entry_point.value!r} is a"
            f" {type(group).__name__}, not a typer.Typer; point it at the plugin's typer app"
        )
    return group


def _add_hook_commands(app: typer.Typer, plugins: list[EntryPoint]) -> None:
    """Import ``plugins`` (which declare no command group) and let their ``toolmesh_cli`` hook add commands."""
    import pluggy
    from toolmesh import hookspecs
    from toolmesh._pipeline.hook_calls import HookCalls

    pm = pluggy.PluginManager("toolmesh")
    pm.add_hookspecs(hookspecs)
    for entry_point in plugins:
        pm.register(entry_point.load(), name=entry_point.name)
    HookCalls(pm, kernel=None).cli(app=app)  # the kernel's one ordering rule, as for every other hook


def _distribution(entry_point: EntryPoint) -> str | None:
    return entry_point.dist.name if entry_point.dist is not None else None


def add_plugin_commands(app: typer.Typer, argv: list[str]) -> None:
    """Add the command groups of the installed plugins (honouring ``TOOLMESH_PLUGINS``) to ``app``.

    ``toolmesh NAME ...`` of a plugin with a ``toolmesh.cli`` entry point imports that
    group only; anything else (help, a mistyped command) adds every plugin's commands.
    The ``toolmesh_cli`` hook is called on the plugins of distributions that declare no
    ``toolmesh.cli`` entry point (a distribution that declares one declares all its commands).
    """
    from importlib.metadata import entry_points

    installed = entry_points()  # one scan of the installed distributions for both groups
    allowed = _allowed_plugins()
    plugins = installed.select(group=_PLUGINS_ENTRY_POINT_GROUP)
    if allowed is not None and not allowed <= set(plugins.names):
        from toolmesh._pipeline.plugin_manager import create_plugin_manager

        create_plugin_manager()  # raises the ConfigError that names the unknown plugins
    declared = installed.select(group=COMMANDS_ENTRY_POINT_GROUP)
    groups = {entry_point.name: entry_point for entry_point in declared if allowed is None or entry_point.name in allowed}
    wanted = argv[0] if argv and argv[0] in groups else None
    for name, entry_point in groups.items():
        if wanted is None or name == wanted:
            app.add_typer(_command_group(entry_point), name=name)
    if wanted is None:
        declaring = {_distribution(entry_point) for entry_point in declared} - {None}
        hooked = [
            entry_point
            for entry_point in plugins
            if _distribution(entry_point) not in declaring and (allowed is None or entry_point.name in allowed)
        ]
        if hooked:
            _add_hook_commands(app, hooked)
