"""The command line starts light: help and plugin commands import only what they need, in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.processes import ROOT, toolmesh

# Runs the ``toolmesh`` entry point in-process with ARGV, then prints the modules it imported.
_PROBE = textwrap.dedent(
    """
    import json, sys
    from toolmesh._cli.commands import main

    sys.argv = ["toolmesh", *json.loads(sys.argv[1])]
    try:
        main()
    except SystemExit as exit:
        code = exit.code
    else:
        code = 0
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
    """
)

HEAVY = ("nats", "opentelemetry", "pydantic", "mcp", "anyio", "pluggy", "msgspec", "jsonschema_rs", "uvloop")
"""Libraries no help text needs (and the node's: NATS, telemetry, the MCP SDK, pydantic through it)."""

# Each plugin's package (its names load on first use) and command group
LIGHT_PLUGIN_MODULES = {
    *(f"toolmesh.plugins.{name}" for name in ("console", "crew", "mcp", "rune", "sandbox")),
    *(f"toolmesh.plugins.{name}.cli" for name in ("console", "crew", "mcp", "rune", "sandbox")),
}


def _imported_by(*argv: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=60, check=False,
    )
    report = json.loads(done.stdout.splitlines()[-1])
    return report["code"], report["modules"]


def _heavy(modules: list[str]) -> list[str]:
    return [name for name in modules if name.split(".")[0] in HEAVY]


def _plugin_implementation(modules: list[str]) -> list[str]:
    return [name for name in modules if name.startswith("toolmesh.plugins.") and name not in LIGHT_PLUGIN_MODULES]


@pytest.mark.parametrize(
    "argv",
    [("--help",), (), ("call", "--help"), ("up", "--help"), ("health", "--help"), ("tools", "--help")],
    ids=lambda argv: " ".join(argv) or "no arguments",
)
def test_the_kernels_help_imports_no_node_library_and_no_plugin_implementation(argv: tuple[str, ...]) -> None:
    code, modules = _imported_by(*argv)
    assert code in (0, 2)  # click exits 2 after the help it shows for no arguments
    assert _heavy(modules) == []
    assert _plugin_implementation(modules) == []
    assert "toolmesh._transport.node" not in modules and "toolmesh._transport.mesh" not in modules and "toolmesh._pipeline.kernel" not in modules


@pytest.mark.parametrize(
    "argv",
    [
        ("rune", "--help"),
        ("rune", "test", "--help"),
        ("mcp", "serve", "--help"),
        ("mcp", "add", "--help"),
        ("crew", "replay", "--help"),
        ("sandbox", "run", "--help"),
    ],
    ids=" ".join,
)
def test_a_plugins_help_imports_only_its_command_group(argv: tuple[str, ...]) -> None:
    code, modules = _imported_by(*argv)
    assert code == 0
    # typer converts the group's own --help option with pydantic: that one is typer's
    assert [name for name in _heavy(modules) if name.split(".")[0] != "pydantic"] == []
    assert _plugin_implementation(modules) == []
    assert not [name for name in modules if name.startswith("toolmesh.plugins.") and argv[0] not in name]


def test_help_lists_every_plugin_group_from_its_entry_point() -> None:
    shown = toolmesh("--help").stdout
    for name in ("crew", "mcp", "rune", "sandbox"):
        assert f"  {name} " in shown


def test_rune_run_imports_the_language_but_not_the_tool_plugin(tmp_path: Path) -> None:
    script = tmp_path / "one.rn"
    script.write_text('pub fn main() { println!("hi"); 1 + 2 }\n', encoding="utf-8")
    code, modules = _imported_by("rune", "run", str(script))
    assert code == 0
    assert "toolmesh.plugins.rune.lang" in modules
    assert [name for name in modules if name.startswith("toolmesh.plugins.rune.") and ".lang" not in name] == [
        "toolmesh.plugins.rune.cli"
    ]
    # typer converts a command's parameters with pydantic; the language uses msgspec through toolmesh._errors
    assert [name for name in _heavy(modules) if name.split(".")[0] not in ("pydantic", "msgspec")] == []
    assert not [name for name in modules if name.startswith(("toolmesh.plugins.mcp", "toolmesh.plugins.crew"))]


def test_rune_run_prints_output_and_result(tmp_path: Path) -> None:
    script = tmp_path / "one.rn"
    script.write_text('pub fn main() { println!("hi"); 1 + 2 }\n', encoding="utf-8")
    done = toolmesh("rune", "run", str(script))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n3\n"


def test_help_texts_show_brackets_as_written() -> None:
    rune_test = toolmesh("rune", "test", "--help").stdout
    assert "Run #[test] functions" in rune_test
    assert "#[tool]/#[param] attributes" in toolmesh("rune", "check", "--help").stdout
    assert "[default: 4222]" in toolmesh("up", "--help").stdout
    assert "#[test]" in toolmesh("--help").stdout


def test_a_kernel_command_looks_up_no_plugin() -> None:
    code, modules = _imported_by("call", "--help")
    assert code == 0
    assert not [name for name in modules if name.startswith("toolmesh.plugins")]
    assert "importlib.metadata" not in modules  # not even the installed plugins' entry points are read


# A third-party distribution, laid out as pip installs one: a module and its .dist-info with entry points.
_HOOK_PLUGIN = '''
import typer
from toolmesh import hookimpl

extra = typer.Typer(help="Commands added through the toolmesh_cli hook.")


@extra.command()
def hello(name: str) -> None:
    """Greet NAME."""
    typer.echo(f"hello {name} [from the hook]")


@hookimpl
def toolmesh_cli(app):
    app.add_typer(extra, name="hooked")
'''

_GROUP_MODULE = '''
import typer

app = typer.Typer(help="Commands from a toolmesh.cli entry point.")


@app.command()
def ping() -> None:
    """Answer pong."""
    typer.echo("pong")


@app.command()
def other() -> None:
    """A second command, so the group keeps its sub-commands."""
'''


def _distribution(site: Path, name: str, entry_points: str) -> None:
    dist = site / f"{name}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(entry_points, encoding="utf-8")


def _install_third_party(site: Path) -> dict[str, str]:
    """Two distributions: one adds commands through the hook, one through a toolmesh.cli entry point."""
    (site / "hooked_plugin.py").write_text(_HOOK_PLUGIN, encoding="utf-8")
    (site / "grouped_cli.py").write_text(_GROUP_MODULE, encoding="utf-8")
    _distribution(site, "toolmesh_hooked", "[toolmesh.plugins]\nhooked = hooked_plugin\n")
    # Its plugin module does not exist: importing it (instead of only the command group) would fail.
    _distribution(
        site, "toolmesh_grouped", "[toolmesh.plugins]\ngrouped = grouped_plugin_absent\n\n"
        "[toolmesh.cli]\ngrouped = grouped_cli:app\n",
    )
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def test_third_party_plugins_add_commands_through_the_hook_or_an_entry_point(tmp_path: Path) -> None:
    env = _install_third_party(tmp_path)
    shown = toolmesh("--help", env=env).stdout
    assert "hooked" in shown and "grouped" in shown and "rune" in shown
    hooked = toolmesh("hooked", "hello", "ann", env=env)
    assert hooked.returncode == 0, hooked.stderr
    assert hooked.stdout == "hello ann [from the hook]\n"
    grouped = toolmesh("grouped", "ping", env=env)
    assert grouped.returncode == 0 and grouped.stdout == "pong\n"


def test_toolmesh_plugins_limits_the_commands_too(tmp_path: Path) -> None:
    env = _install_third_party(tmp_path)
    shown = toolmesh("--help", env={**env, "TOOLMESH_PLUGINS": "rune,grouped"}).stdout
    assert "rune" in shown and "grouped" in shown
    assert "hooked" not in shown and "crew" not in shown and "sandbox" not in shown
    refused = toolmesh("--help", env={"TOOLMESH_PLUGINS": "rune,nope"})
    assert refused.returncode == 2 and "nope" in refused.stderr


def test_a_command_fails_once_when_it_raises_module_not_found() -> None:
    """The uvloop choice is made before the command runs: its own ModuleNotFoundError is not a reason to rerun it."""
    from toolmesh._cli.commands import _run

    runs = []

    async def command() -> None:
        runs.append(1)
        raise ModuleNotFoundError("No module named 'an_optional_extra'", name="an_optional_extra")

    with pytest.raises(ModuleNotFoundError, match="an_optional_extra"):
        _run(command)
    assert runs == [1]


def test_commands_run_on_asyncio_without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from toolmesh._cli.commands import _run

    monkeypatch.setitem(sys.modules, "uvloop", None)  # as on Windows, where uvloop has no wheels

    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert _run(loop_module).startswith("asyncio")
    monkeypatch.undo()
    assert _run(loop_module).startswith("uvloop")
