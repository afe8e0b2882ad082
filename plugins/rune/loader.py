"""Find ``.rn`` files, compile them once per content, and check a set of them together.

A compiled file is cached under its path and the SHA-256 of its bytes: a file
read again with the same content is never parsed again, and calls only ever
use the ``Unit`` compiled at load time.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from toolmesh.plugins.rune.lang import RuneError, Unit, compile_source

from .host import HOST_MODULES
from .tool_format import Problem, RuneTool, legacy_tool_name, problem_from_error, tools_in_unit

__all__ = [
    "SUFFIX",
    "CheckReport",
    "LoadedFile",
    "check_paths",
    "claims",
    "find_rune_files",
    "load_file",
    "placeholder_name",
    "resolve_tools",
    "skipped",
]

SUFFIX = ".rn"
"""File name suffix of Rune scripts."""

CACHE_SIZE = 512
"""Compiled files kept in memory (per process, least recently used dropped first)."""


@dataclass(frozen=True)
class LoadedFile:
    """One read of a ``.rn`` file: its content hash, the compiled unit, its tools and problems."""

    path: str
    digest: str
    unit: Unit | None
    tools: tuple[RuneTool, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the file compiled and no tool definition has an error (it may be served)."""
        return self.unit is not None and not any(p.severity == "error" for p in self.problems)

    @property
    def errors(self) -> list[Problem]:
        """The problems that keep this version from being served."""
        return [p for p in self.problems if p.severity == "error"]


@dataclass
class CheckReport:
    """What ``toolmesh rune check`` found: files, the tools a node would serve from them, every problem."""

    files: list[LoadedFile] = field(default_factory=list)
    tools: list[RuneTool] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """True when any problem is an error."""
        return any(p.severity == "error" for p in self.problems)


_cache: OrderedDict[tuple[str, str], LoadedFile] = OrderedDict()
_cache_lock = threading.Lock()


_SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__"})


def skipped(relative: Path) -> bool:
    """True for a path (relative to a served folder) that scanning leaves out: anything in a hidden
    folder (``.git``, ``.venv``) or a well-known bulky one, and hidden files such as editor lock
    and swap files (``.#x.rn``)."""
    return any(part.startswith(".") or part in _SKIPPED_FOLDERS for part in relative.parts)


def _walk(root: Path, suffix: str = SUFFIX) -> Iterator[Path]:
    """Files ending in ``suffix`` under ``root``, except those ``skipped`` leaves out."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not skipped(Path(d)))
        for name in sorted(files):
            if name.endswith(suffix) and not skipped(Path(name)):
                yield Path(folder, name)


def claims(source: str) -> bool:
    """True for a ``.rn`` path (even a missing one, so loading reports it), a directory holding one,
    or an empty directory (``toolmesh up tools/`` before the first tool is written: it is watched)."""
    path = Path(source)
    if source.endswith(SUFFIX):
        return True
    if not source or not path.is_dir():
        return False
    return next(_walk(path), None) is not None or next(_walk(path, ""), None) is None


def find_rune_files(sources: Iterable[str]) -> list[Path]:
    """The ``.rn`` files the sources name, in a stable order (a file, or every file under a directory)."""
    found: list[Path] = []
    seen: set[Path] = set()
    for source in sources:
        path = Path(source)
        if path.is_dir():
            candidates = sorted(p for p in _walk(path) if p.is_file())
        else:
            candidates = [path]
        for candidate in candidates:
            key = candidate.resolve()
            if key not in seen:
                seen.add(key)
                found.append(candidate)
    return found


def _compile(path: str, source: str, digest: str) -> LoadedFile:
    try:
        unit = compile_source(source, filename=path, modules=HOST_MODULES)
    except RuneError as exc:
        return LoadedFile(path, digest, None, (), (problem_from_error(path, exc),))
    tools, problems = tools_in_unit(unit, source, path)
    return LoadedFile(path, digest, unit, tuple(tools), tuple(problems))


def load_file(path: Path) -> LoadedFile:
    """Read and compile one file, or return the cached result for the same path and content.

    Blocking (file I/O, compiling): call it from a worker thread on an event loop.
    """
    name = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return LoadedFile(
            name, "", None, (), (Problem(name, 1, 1, f"cannot read the file: {exc.strerror or exc}"),)
        )
    digest = hashlib.sha256(data).hexdigest()
    key = (name, digest)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        loaded = LoadedFile(
            name, digest, None, (), (Problem(name, 1, 1, f"the file is not UTF-8 text ({exc.reason})"),)
        )
    else:
        loaded = _compile(name, source, digest)
    with _cache_lock:
        _cache[key] = loaded
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return loaded


def resolve_tools(files: Iterable[LoadedFile]) -> tuple[dict[str, tuple[RuneTool, Unit]], list[Problem]]:
    """Tools by name across files (the first file in order wins a name) and the duplicate-name problems."""
    tools: dict[str, tuple[RuneTool, Unit]] = {}
    problems: list[Problem] = []
    for loaded in files:
        if loaded.unit is None:
            continue
        for tool in loaded.tools:
            if tool.name in tools:
                first = tools[tool.name][0]
                problems.append(
                    Problem(
                        tool.file,
                        tool.line,
                        1,
                        f"duplicate tool name {tool.name!r}: already defined at {first.file}:{first.line};"
                        " rename one of the functions (or files)",
                    )
                )
                continue
            tools[tool.name] = (tool, loaded.unit)
    return tools, problems


def placeholder_name(loaded: LoadedFile) -> str:
    """The name under which a file that never loaded is listed as unavailable."""
    return legacy_tool_name(loaded.path)


def check_paths(paths: Iterable[str]) -> CheckReport:
    """Load every ``.rn`` file under ``paths`` and lint them together (``toolmesh rune check``)."""
    report = CheckReport()
    for path in find_rune_files(paths):
        if not path.exists():
            report.problems.append(Problem(str(path), 1, 1, "no such file"))
            continue
        loaded = load_file(path)
        report.files.append(loaded)
        report.problems.extend(loaded.problems)
    tools, duplicates = resolve_tools(report.files)
    # the tools a node would serve: none of a file with an error
    served = {loaded.path for loaded in report.files if loaded.ok}
    report.tools = [tool for tool, _ in tools.values() if tool.file in served]
    report.problems.extend(duplicates)
    return report
