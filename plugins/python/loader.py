"""Find ``@toolmesh.tool`` functions in modules, files, directories and entry points.

A directory contributes its public ``*.py`` files and its packages (folders
with an ``__init__.py``, every public module in them); other folders are left
to other plugins.  Files are imported under unique module names, so two
folders may both hold a ``tools.py``, and afresh on every discovery.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import keyword
import logging
import pkgutil
import re
import sys
import types
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from toolmesh import ToolDefinitionError, ToolFunction

__all__ = ["ENTRY_POINT_GROUP", "claims", "entry_point_tools", "tools_from"]

ENTRY_POINT_GROUP = "toolmesh.tools"
"""Entry-point group whose members load to a tool, a list of tools, or a module of tools."""

_MODULE_PREFIX = "toolmesh_tools_"

_log = logging.getLogger("toolmesh.python")


def _dotted(name: str) -> bool:
    parts = name.split(".")
    return all(part.isidentifier() and not keyword.iskeyword(part) for part in parts)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except Exception as exc:  # noqa: BLE001 - isolation boundary around the parent package's import-time code
        _log.debug("%s is not importable, so not served here: %r", module, exc)
        return False  # a parent package failing to import means "not ours to serve"


def claims(source: str) -> bool:
    """True for what this plugin serves: ``module:attr``, an importable module, a ``.py`` file, a directory.

    ``.py`` paths and ``module:attr`` references are claimed even when they do
    not resolve, so that loading reports exactly what is wrong with them.
    """
    if not source:
        return False  # Path("") is the current directory, but nobody means that
    if source.endswith(".py") or Path(source).is_dir():
        return True
    module, colon, attribute = source.partition(":")
    if colon:
        return _dotted(module) and _dotted(attribute)
    return _dotted(source) and _importable(source)


def _collect(value: Any, origin: str) -> Iterator[ToolFunction]:
    if isinstance(value, ToolFunction):
        yield value
    elif isinstance(value, types.ModuleType):
        for attribute in list(vars(value).values()):
            if isinstance(attribute, ToolFunction):
                yield attribute
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _collect(item, origin)
    else:
        raise ToolDefinitionError(
            f"{origin} is a {type(value).__name__}, not a @toolmesh.tool function, a list of them or a module"
        )


def _module_name(path: Path) -> str:
    # unique per file (two folders may both hold "tools.py") and stable across reloads
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    return f"{_MODULE_PREFIX}{stem}_{digest}"


def _execute(name: str, path: Path, package: Path | None = None) -> types.ModuleType:
    """Run ``path`` as a fresh module ``name`` (a package when ``package`` is its folder)."""
    locations = [str(package)] if package is not None else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=locations)
    if spec is None or spec.loader is None:
        raise ToolDefinitionError(f"cannot load tools from {path}: not a Python file")
    for stale in [module for module in sys.modules if module.startswith(name + ".")]:
        del sys.modules[stale]  # submodules of an earlier load, so a reload sees edited files
    module = importlib.util.module_from_spec(spec)
    # registered before running: dataclasses, msgspec and typing resolve names through sys.modules
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # a script calling sys.exit() must not stop the node
        sys.modules.pop(name, None)
        raise ToolDefinitionError(f"cannot load tools from {path}: {type(exc).__name__}: {exc}") from exc
    return module


@contextlib.contextmanager
def _importable_folder(folder: Path) -> Iterator[None]:
    """Put ``folder`` first on ``sys.path`` while its files load, so they can import their siblings."""
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))


def _import_file(path: Path) -> types.ModuleType:
    """Execute a ``.py`` file as a fresh module, with its folder importable for sibling modules."""
    path = path.resolve()
    if not path.is_file():
        raise ToolDefinitionError(f"cannot load tools from {path}: no such file")
    with _importable_folder(path.parent):
        return _execute(_module_name(path), path)


def _import_package(folder: Path) -> list[types.ModuleType]:
    """A package folder and every public module inside it, imported under a unique name."""
    name = _module_name(folder)
    modules = [_execute(name, folder / "__init__.py", package=folder)]
    for found in pkgutil.walk_packages(modules[0].__path__, prefix=f"{name}."):
        if found.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        try:
            modules.append(importlib.import_module(found.name))
        except (Exception, SystemExit) as exc:
            shown = folder.joinpath(*found.name.split(".")[1:])
            shown = shown if found.ispkg else shown.with_suffix(".py")
            raise ToolDefinitionError(f"cannot load tools from {shown}: {type(exc).__name__}: {exc}") from exc
    return modules


def _from_directory(folder: Path) -> Iterator[ToolFunction]:
    """Tools of the public ``*.py`` files in ``folder`` and of its packages (folders with ``__init__.py``)."""
    folder = folder.resolve()
    with _importable_folder(folder):
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith(("_", ".")):
                continue
            if entry.suffix == ".py" and entry.is_file():
                yield from _collect(_import_file(entry), str(entry))
            elif entry.is_dir() and (entry / "__init__.py").is_file():
                for module in _import_package(entry):
                    yield from _collect(module, str(entry))


def _import_module(name: str) -> types.ModuleType:
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:
        raise ToolDefinitionError(
            f"cannot load tools from module {name!r}: {type(exc).__name__}: {exc}"
        ) from exc


def _from_string(source: str) -> Iterator[ToolFunction]:
    path = Path(source)
    if path.is_dir():
        yield from _from_directory(path)
        return
    if source.endswith(".py"):
        yield from _collect(_import_file(path), source)
        return
    module_name, _, attribute = source.partition(":")
    value: Any = _import_module(module_name)
    for part in attribute.split(".") if attribute else ():
        try:
            value = getattr(value, part)
        except AttributeError:
            raise ToolDefinitionError(
                f"cannot load tools from {source!r}: {module_name} has no {attribute!r}"
            ) from None
    yield from _collect(value, source)


def tools_from(sources: Iterable[Any]) -> list[ToolFunction]:
    """Every tool in ``sources``: strings this plugin claims, or tools, lists and modules passed in code."""
    found: list[ToolFunction] = []
    for source in sources:
        if isinstance(source, str):
            if claims(source):
                found.extend(_from_string(source))
        elif isinstance(source, (ToolFunction, types.ModuleType, list, tuple)):
            found.extend(_collect(source, repr(source)))
    return found


def entry_point_tools() -> list[ToolFunction]:
    """Tools that installed packages register under the ``toolmesh.tools`` entry-point group."""
    found: list[ToolFunction] = []
    seen: set[tuple[str, str]] = set()
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if (entry_point.name, entry_point.value) in seen:
            continue  # the same distribution visible twice on sys.path
        seen.add((entry_point.name, entry_point.value))
        try:
            value = entry_point.load()
        except (Exception, SystemExit) as exc:
            raise ToolDefinitionError(
                f"cannot load tools from entry point {entry_point.name!r} ({entry_point.value}):"
                f" {type(exc).__name__}: {exc} (to skip entry points, set entry_points = false"
                " in the [python] table of toolmesh.toml)"
            ) from exc
        found.extend(_collect(value, f"entry point {entry_point.name!r} ({entry_point.value})"))
    return found
