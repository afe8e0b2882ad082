"""The dependency rule holds: contracts <- kernel <- plugins, plugins use only the public API, no cycles.

``lint-imports`` checks the import-linter contracts of pyproject.toml.  It reads
the package from the file system, and the source tree keeps ``toolmesh``
in three folders (kernel/, contracts/, plugins/), so each run gets the package
laid out as installed: a folder of links built from pyproject's package-dir.
The fault tests add one offending module to that layout and show the contract
that must catch it does.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
import toolmesh

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LINT_IMPORTS = Path(sysconfig.get_path("scripts")) / "lint-imports"


def _installed_layout(target: Path) -> Path:
    """The source folders laid out in ``target`` the way pyproject maps them to packages; returns ``target``.

    Folders are made, files are links: a fault case may then add or replace a module of the layout
    without writing into the source tree.
    """
    for package, folder in sorted(PYPROJECT["tool"]["setuptools"]["package-dir"].items()):
        shutil.copytree(
            ROOT / folder, target.joinpath(*package.split(".")), copy_function=os.symlink,
            ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True,
        )
    return target


def _lint_imports(layout: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    selection = [argument for contract in contracts for argument in ("--contract", contract)]
    path = [str(layout), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", *selection],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    return _installed_layout(tmp_path / "site")


def test_every_contract_is_kept(layout: Path) -> None:
    """The tree as it is keeps every import-linter contract in pyproject.toml."""
    run = _lint_imports(layout)
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Contracts: {len(contracts)} kept, 0 broken." in run.stdout


def test_the_layout_holds_the_whole_package(layout: Path) -> None:
    """The linted layout has the contracts and every plugin, so a contract can never pass on an empty graph."""
    assert (layout / "toolmesh" / "contracts" / "messages.py").exists()
    for name in PYPROJECT["project"]["entry-points"]["toolmesh.plugins"]:
        assert (layout / "toolmesh" / "plugins" / name / "__init__.py").exists(), name


_INTRUDER_PLUGIN = "toolmesh/plugins/intruder/__init__.py"
_FAULTS: dict[str, tuple[str, dict[str, str]]] = {
    # fault: (the contract that must catch it, {module to write: its source; "+" appends to a linked module})
    "a plugin imports a kernel module": ("plugins-public-api", {_INTRUDER_PLUGIN: "from toolmesh._transport.mesh import Mesh\n"}),
    "a plugin imports a kernel module through the root": (
        "plugins-public-api", {_INTRUDER_PLUGIN: "from toolmesh import _config\n"}),
    "a plugin imports a kernel module for annotations only": (
        "plugins-public-api",
        {_INTRUDER_PLUGIN: "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toolmesh._transport.node import Node\n"}),
    "a plugin imports another plugin": (
        "plugins-independent", {_INTRUDER_PLUGIN: "from toolmesh.plugins.python import loader\n"}),
    "a plugin imports the plugins package": ("plugins-share-nothing", {_INTRUDER_PLUGIN: "import toolmesh.plugins\n"}),
    "the kernel imports a plugin": ("kernel-without-plugins", {"toolmesh/intruder.py": "import toolmesh.plugins.rune\n"}),
    "the contracts import a kernel module": (
        "contracts-stand-alone", {"toolmesh/contracts/intruder.py": "from toolmesh._errors import ToolmeshError\n"}),
    "the contracts import the public API": (
        "contracts-stand-alone", {"toolmesh/contracts/intruder.py": "from toolmesh import Mesh\n"}),
    "two kernel modules import each other": (
        "acyclic", {"toolmesh/_pipeline/intruder.py": "from toolmesh._pipeline import kernel\n",
                    "toolmesh/_pipeline/kernel.py": "+from toolmesh._pipeline import intruder\n"}),
    "the Rune code generator's base imports the generator for annotations": (
        "acyclic", {"toolmesh/plugins/rune/lang/intruder.py":
                    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .codegen import CodeGen\n",
                    "toolmesh/plugins/rune/lang/codegen_base.py": "+from . import intruder\n"}),
    "the pipeline imports the transport": (
        "kernel-layers", {"toolmesh/_pipeline/intruder.py": "from toolmesh._transport import node\n"}),
    "telemetry imports the settings": (
        "kernel-layers", {"toolmesh/_telemetry/intruder.py": "import toolmesh._config\n"}),
}


@pytest.mark.parametrize("fault", list(_FAULTS))
def test_a_broken_boundary_fails_its_contract(layout: Path, fault: str) -> None:
    """One offending import added to the clean tree breaks the contract that guards that boundary."""
    contract, modules = _FAULTS[fault]
    for relative, source in modules.items():
        module = layout / relative
        if source.startswith("+"):  # a private copy of the linked module, so the source tree stays untouched
            source = module.read_text() + source[1:]
            module.unlink()
        module.parent.mkdir(exist_ok=True)
        module.write_text(source)
    run = _lint_imports(layout, contract)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "BROKEN" in run.stdout and "intruder" in run.stdout, run.stdout


def _plugin_imports_of_toolmesh() -> list[tuple[str, int, str]]:
    """(file, line, name) for every ``from toolmesh import name`` in the plugins, annotation-only ones too."""
    found = []
    for path in sorted((ROOT / "plugins").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "toolmesh":
                found += [(str(path.relative_to(ROOT)), node.lineno, alias.name) for alias in node.names]
    return found


def test_plugins_take_only_public_names_from_toolmesh() -> None:
    """What a plugin imports from ``toolmesh`` is in ``toolmesh.__all__``: import-linter sees modules, not names."""
    imports = _plugin_imports_of_toolmesh()
    assert imports, "the scan found no imports: the plugins moved?"
    assert [entry for entry in imports if entry[2] not in toolmesh.__all__] == []


if __name__ == "__main__":  # pragma: no cover - `python tests/test_boundaries.py` lints by hand
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        result = _lint_imports(_installed_layout(Path(scratch) / "site"), *sys.argv[1:])
    print(result.stdout + result.stderr)
    sys.exit(result.returncode)
