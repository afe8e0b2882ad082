"""The public names of toolmesh and toolmesh.contracts are exactly what __all__ lists."""

from __future__ import annotations

import importlib
import inspect
from types import ModuleType

import pytest

import toolmesh
import toolmesh.contracts


def _public_definitions(module: ModuleType) -> set[str]:
    """Public classes and functions in the module's namespace that the package itself defines."""
    package = module.__name__
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and (value.__module__ == package or value.__module__.startswith(package + "."))
    }


@pytest.mark.parametrize("module", [toolmesh, toolmesh.contracts], ids=lambda module: module.__name__)
def test_all_names_exist(module: ModuleType) -> None:
    """Every name in __all__ is an attribute of the module, listed once."""
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []
    assert len(set(module.__all__)) == len(module.__all__)


@pytest.mark.parametrize("module", [toolmesh, toolmesh.contracts], ids=lambda module: module.__name__)
def test_public_definitions_are_listed(module: ModuleType) -> None:
    """Every public class or function the package puts in its namespace is in __all__."""
    assert _public_definitions(module) - set(module.__all__) == set()


def test_star_import_gives_the_api() -> None:
    """from toolmesh import * binds exactly the names of __all__."""
    namespace: dict[str, object] = {}
    exec("from toolmesh import *", namespace)  # noqa: S102 - the behaviour under test
    assert set(namespace) - {"__builtins__"} == set(toolmesh.__all__)


@pytest.mark.parametrize(
    "name",
    [
        "Kernel",
        "Mesh",
        "SyncMesh",
        "Node",
        "Settings",
        "load_settings",
        "tool",
        "hookimpl",
        "RunNormally",
        "Complete",
        "Reject",
        "ToolCallError",
        "ConfigError",
        "ToolDefinitionError",
    ],
)
def test_core_names_exported(name: str) -> None:
    """The names the documentation uses are importable from toolmesh."""
    assert name in toolmesh.__all__


def test_error_classes_map_to_their_codes() -> None:
    """Each exported ToolCallError subclass carries a distinct protocol error code."""
    from toolmesh.errors import error_class

    call_errors = [
        getattr(toolmesh, name)
        for name in toolmesh.__all__
        if inspect.isclass(getattr(toolmesh, name))
        and issubclass(getattr(toolmesh, name), toolmesh.ToolCallError)
        and getattr(toolmesh, name) is not toolmesh.ToolCallError
    ]
    codes = [cls.code for cls in call_errors]
    assert len(codes) == len(set(codes))
    assert all(error_class(cls.code) is cls for cls in call_errors)


def test_version_matches_the_distribution() -> None:
    """toolmesh.__version__ is the installed distribution's version."""
    from importlib.metadata import version

    assert toolmesh.__version__ == version("toolmesh")


_CONTRACT_MODULES = ["catalog", "codec", "content", "errors", "messages", "schemas", "spec", "subjects"]
_KERNEL_MODULES = [
    "config",
    "context",
    "decisions",
    "errors",
    "kernel",
    "markers",
    "memory_cache",
    "pipeline",
    "plugin_manager",
    "results",
    "suggestions",
    "telemetry",
    "tool_function",
    "validation",
]


@pytest.mark.parametrize(
    "name",
    [
        *(f"toolmesh.contracts.{name}" for name in _CONTRACT_MODULES),
        *(f"toolmesh.{name}" for name in _KERNEL_MODULES),
    ],
)
def test_module_all_is_complete(name: str) -> None:
    """Each module's __all__ names only what exists and every public class or function it defines."""
    module = importlib.import_module(name)
    assert [entry for entry in module.__all__ if not hasattr(module, entry)] == []
    defined = {
        attribute
        for attribute, value in vars(module).items()
        if not attribute.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == name
    }
    assert defined - set(module.__all__) == set()
