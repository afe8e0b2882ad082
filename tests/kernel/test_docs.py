"""The plugin guide documents every hook with its exact signature, and its examples run."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
import toolmesh
from toolmesh._pipeline.plugin_manager import create_plugin_manager

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-plugins.md"
API = GUIDE.with_name("api.md")


def _hooks() -> dict[str, tuple[str, ...]]:
    pm = create_plugin_manager(load_entrypoints=False)
    return {
        name: tuple(getattr(pm.hook, name).spec.argnames)
        for name in dir(pm.hook)
        if name.startswith("toolmesh_")
    }


@pytest.mark.parametrize("hook", sorted(_hooks()))
def test_every_hook_is_documented_with_its_signature(hook):
    """docs/writing-plugins.md has a heading 'hook(arg, ...)' matching the hookspec."""
    documented = dict(re.findall(r"^#### `(toolmesh_\w+)\(([^)]*)\)`", GUIDE.read_text(), re.MULTILINE))
    assert hook in documented, f"{hook} is not documented in {GUIDE.name}"
    arguments = tuple(arg.strip() for arg in documented[hook].split(",") if arg.strip())
    assert arguments == _hooks()[hook]


def test_no_documented_hook_is_missing_from_the_specs():
    """Every hook the guide documents exists."""
    documented = set(re.findall(r"^#### `(toolmesh_\w+)\(", GUIDE.read_text(), re.MULTILINE))
    assert documented == set(_hooks())


def test_guide_examples_run():
    """The Python blocks of the guide, run in order as one module, pass their own assertions."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.DOTALL)
    assert len(blocks) >= 2
    module = types.ModuleType("toolmesh_docs_example")
    sys.modules[module.__name__] = module
    try:
        for block in blocks:
            exec(compile(block, str(GUIDE), "exec"), module.__dict__)  # noqa: S102 - our own docs
    finally:
        del sys.modules[module.__name__]
    assert isinstance(module.toolmesh_execute_tool, types.FunctionType)
    assert toolmesh.Reject is module.toolmesh.Reject


def test_api_reference_examples_run(toolmesh_settings, monkeypatch):
    """The Python blocks of docs/api.md, run in order as one module against a real broker, pass their assertions."""
    blocks = re.findall(r"```python\n(.*?)```", API.read_text(), re.DOTALL)
    assert len(blocks) >= 6
    # the examples join "the mesh TOOLMESH_NATS_URL names", as a reader's `toolmesh up` would provide
    monkeypatch.setenv("TOOLMESH_NATS_URL", toolmesh_settings.nats_url)
    monkeypatch.setenv("TOOLMESH_PREFIX", toolmesh_settings.prefix)
    module = types.ModuleType("toolmesh_api_example")
    sys.modules[module.__name__] = module
    try:
        for block in blocks:
            exec(compile(block, str(API), "exec"), module.__dict__)  # noqa: S102 - our own docs
    finally:
        del sys.modules[module.__name__]
    assert module.add(2, 3) == 5
