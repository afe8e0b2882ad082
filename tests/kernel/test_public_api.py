"""The public names of toolmesh and toolmesh.contracts are exactly what __all__ lists."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest
import toolmesh
import toolmesh.contracts
import toolmesh.testing


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
    from toolmesh._errors import error_class

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


_API_PAGE = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _documented_names() -> list[str]:
    """Names the reference page describes: each has a list item starting with its name in bold code."""
    return re.findall(r"^- \*\*`(\w+)`\*\* — \S", _API_PAGE.read_text(), re.MULTILINE)


@pytest.mark.parametrize("module", [toolmesh, toolmesh.testing], ids=lambda module: module.__name__)
def test_every_public_name_is_on_the_reference_page(module: ModuleType) -> None:
    """docs/api.md gives each name of __all__ its sentence."""
    assert sorted(set(module.__all__) - set(_documented_names())) == []


def test_the_reference_page_documents_only_public_names() -> None:
    """Nothing on docs/api.md is stale: every name it describes exists, once."""
    documented = _documented_names()
    assert sorted(set(documented) - {*toolmesh.__all__, *toolmesh.testing.__all__}) == []
    assert len(documented) == len(set(documented))


@pytest.mark.parametrize("name", sorted(set(toolmesh.__all__) - {"__version__"}))
def test_public_names_are_the_kernel_objects(name: str) -> None:
    """A public name is the kernel's own object, not a copy, so the old module paths keep working alike."""
    module = importlib.import_module(f"toolmesh.{toolmesh._MODULE_OF[name]}")
    assert getattr(toolmesh, name) is getattr(module, toolmesh._NAME_IN_MODULE.get(name, name))


def test_version_matches_the_distribution() -> None:
    """toolmesh.__version__ is the installed distribution's version."""
    from importlib.metadata import version

    assert toolmesh.__version__ == version("toolmesh")


_CONTRACT_MODULES = ["catalog", "codec", "content", "errors", "messages", "schemas", "spec", "subjects"]
_KERNEL_MODULES = [
    "_config",
    "_pipeline.context",
    "_pipeline.decisions",
    "_errors",
    "_pipeline.kernel",
    "_markers",
    "_pipeline.memory_cache",
    "_pipeline.pipeline",
    "_pipeline.plugin_manager",
    "_pipeline.results",
    "_pipeline.suggestions",
    "_telemetry.tracing",
    "_pipeline.tool_function",
    "_pipeline.validation",
    "_version",
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
