"""The built wheel contains every package and the entry points."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("toolmesh-*.whl")
    with zipfile.ZipFile(path) as archive:
        yield archive


def _source_packages() -> set[str]:
    roots = {"kernel": "toolmesh", "contracts": "toolmesh/contracts", "plugins": "toolmesh/plugins"}
    packages = set()
    for folder, target in roots.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            packages.add(f"{target}/{relative}".rstrip("/.") if str(relative) != "." else target)
    return packages


def test_every_source_package_is_in_the_wheel(wheel):
    """Each folder with an __init__.py under kernel/, contracts/, plugins/ ships in the wheel."""
    names = set(wheel.namelist())
    missing = sorted(pkg for pkg in _source_packages() if f"{pkg}/__init__.py" not in names)
    assert not missing, f"add these to [tool.setuptools] packages: {missing}"
    assert "toolmesh/py.typed" in names


def test_wheel_declares_entry_points(wheel):
    """The console script, the first-party plugins and the pytest plugin are declared."""
    (entry_points,) = [name for name in wheel.namelist() if name.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "toolmesh = toolmesh._cli.commands:main" in text
    assert "[toolmesh.plugins]" in text and "python = toolmesh.plugins.python" in text
    assert "[pytest11]" in text
