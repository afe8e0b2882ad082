"""Find ``@toolmesh.tool`` functions in modules, files, directories and entry points."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
import types
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from toolmesh import ToolDefinitionError, ToolFunction

__all__ = ["ENTRY_POINT_GROUP", "claims", "entry_point_tools", "tools_from"]

ENTRY_POINT_GROUP = "toolmesh.tools"
"""Entry-point group whose members load to a tool, a list of tools, or a module of tools."""


def _is_module_reference(source: str) -> bool:
    module, _, _ = source.partition(":")
    if not module or "/" in module or module.endswith(".py"):
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def claims(source: str) -> bool:
    """True for sources this plugin serves: ``module:attr``, a module, a ``.py`` file, a directory."""
    path = Path(source)
    if path.is_dir() or (path.suffix == ".py" and path.is_file()):
        return True
    return _is_module_reference(source)


def _collect(value: Any, origin: str) -> Iterator[ToolFunction]:
    if isinstance(value, ToolFunction):
        yield value
    elif isinstance(value, types.ModuleType):
        for attribute in vars(value).values():
            if isinstance(attribute, ToolFunction):
                yield attribute
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _collect(item, origin)
    else:
        raise ToolDefinitionError(
            f"{origin} is a {type(value).__name__}, not a @toolmesh.tool function, a list of them or a module"
        )


def _import_file(path: Path) -> types.ModuleType:
    name = f"toolmesh_tools_{abs(hash(str(path.resolve())))}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ToolDefinitionError(f"cannot load tools from {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(path.parent.resolve())
    sys.path.insert(0, folder)  # sibling imports of the tool file
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - any error in user code is a definition error
        del sys.modules[name]
        raise ToolDefinitionError(f"cannot load tools from {path}: {type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.remove(folder)
    return module


def _from_string(source: str) -> Iterator[ToolFunction]:
    path = Path(source)
    if path.is_dir():
        for file in sorted(path.glob("*.py")):
            if not file.name.startswith("_"):
                yield from _collect(_import_file(file), str(file))
        return
    if path.suffix == ".py":
        yield from _collect(_import_file(path), source)
        return
    module_name, _, attribute = source.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001
        raise ToolDefinitionError(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}") from exc
    if not attribute:
        yield from _collect(module, source)
        return
    try:
        value = getattr(module, attribute)
    except AttributeError:
        raise ToolDefinitionError(f"module {module_name!r} has no attribute {attribute!r}") from None
    yield from _collect(value, source)


def tools_from(sources: Iterable[Any]) -> list[ToolFunction]:
    """Every tool in ``sources`` (strings this plugin claims, or objects passed in code)."""
    found: list[ToolFunction] = []
    for source in sources:
        if isinstance(source, str):
            if claims(source):
                found.extend(_from_string(source))
        elif isinstance(source, (ToolFunction, types.ModuleType, list, tuple)):
            found.extend(_collect(source, repr(source)))
    return found


def entry_point_tools() -> list[ToolFunction]:
    """Tools registered by installed packages under the ``toolmesh.tools`` entry-point group."""
    found: list[ToolFunction] = []
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            value = entry_point.load()
        except Exception as exc:  # noqa: BLE001
            raise ToolDefinitionError(
                f"entry point {entry_point.name!r} ({entry_point.value}) failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        found.extend(_collect(value, f"entry point {entry_point.name!r}"))
    return found
