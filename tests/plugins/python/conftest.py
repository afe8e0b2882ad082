"""Fixtures of the Python tools plugin tests: kernels serving given sources, throw-away packages."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import toolmesh
import toolmesh.plugins.python as python_plugin
from toolmesh.plugins.python.loader import ENTRY_POINT_GROUP

TOOLS = '''
import toolmesh

@toolmesh.tool
def first(a: int) -> int:
    """First tool."""
    return a

@toolmesh.tool(name="second")
async def _second_impl(text: str) -> str:
    """Second tool."""
    return text

NOT_A_TOOL = 42
'''
"""A module with two tools (one async, named explicitly) and one other attribute."""

KernelFor = Callable[..., AbstractAsyncContextManager[toolmesh.Kernel]]
WritePackage = Callable[[dict[str, str]], str]
InstallEntryPoints = Callable[[dict[str, str]], None]


@pytest.fixture
def kernel_for() -> KernelFor:
    """``async with kernel_for(sources) as kernel``: a started kernel with only the Python plugin.

    Entry points are off unless ``entry_points=True``, so installed packages cannot add tools.
    """

    @asynccontextmanager
    async def start(sources: list[Any], *, entry_points: bool = False) -> AsyncIterator[toolmesh.Kernel]:
        settings = toolmesh.Settings(plugins={"python": {"entry_points": entry_points}})
        kernel = toolmesh.Kernel(plugins=[python_plugin], settings=settings, load_entrypoints=False)
        await kernel.start(sources)
        try:
            yield kernel
        finally:
            await kernel.stop()

    return start


@pytest.fixture
def write_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WritePackage]:
    """Write an importable package (``{"module.py": source}``) under a unique name; returns that name."""
    names: list[str] = []
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(files: dict[str, str]) -> str:
        name = f"toolmesh_test_pkg_{uuid.uuid4().hex[:8]}"
        package = tmp_path / name
        package.mkdir()
        (package / "__init__.py").write_text(files.pop("__init__.py", ""))
        for file, source in files.items():
            (package / file).write_text(source)
        names.append(name)
        return name

    yield write
    for module in [module for module in sys.modules if module.split(".")[0] in names]:
        del sys.modules[module]


@pytest.fixture
def install_entry_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> InstallEntryPoints:
    """Make a fake installed distribution (``*.dist-info``) with these ``toolmesh.tools`` entry points."""

    def install(entry_points: dict[str, str]) -> None:
        name = f"toolmesh_fake_{uuid.uuid4().hex[:8]}"
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        lines = [f"[{ENTRY_POINT_GROUP}]", *(f"{key} = {value}" for key, value in entry_points.items())]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        monkeypatch.syspath_prepend(str(tmp_path))

    return install
