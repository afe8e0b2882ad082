"""Per-kernel state of the Rune plugin: the files served, their last good versions, hot reload.

Discovery reads every ``.rn`` file of the sources (compiling only content it
has not seen) and serves, per file, its newest version that loads without
errors — an edit that breaks a file keeps its last good version serving and
is reported (log and a ``reload_failed`` event).  A file that never loaded is
listed as an unavailable tool carrying the error.

A ``watchfiles`` watcher on the sources calls ``kernel.refresh_tools()`` after
each batch of changes; the node then re-subscribes and republishes its catalog
entry, so the mesh sees added, edited and removed tools within a second.
Calls hold the ``Unit`` they started with, so a reload never changes a call
in flight.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from toolmesh import CallContext, ConfigError, Kernel, ToolUnavailable
from toolmesh.contracts import ToolSpec

from .executor import ToolEntry, run_tool
from .lang.limits import MAX_MEMORY
from .loader import SUFFIX, LoadedFile, find_rune_files, load_file, placeholder_name, resolve_tools, skipped
from .pool import DEFAULT_MAX_RUNNING, DEFAULT_MAX_WAITING, ScriptPool
from .tool_format import Problem, RuneTool

__all__ = ["DEFAULT_TIMEOUT_MS", "SOURCE", "RuneCatalog", "RuneSettings"]

SOURCE = "rune"
"""``ToolSpec.source`` of Rune tools; the plugin's key in ``Kernel.plugin_state`` and ``toolmesh.toml``."""

DEFAULT_TIMEOUT_MS = 30_000
"""Timeout of a tool whose ``#[tool]`` sets no ``timeout_ms``."""

_log = logging.getLogger("toolmesh.rune")


_INTEGER_SETTINGS = {
    # name: (default, lowest, highest)
    "debounce_ms": (50, 1, 5000),
    "max_running": (DEFAULT_MAX_RUNNING, 1, 256),
    "max_waiting": (DEFAULT_MAX_WAITING, 0, 100_000),
    "max_memory_mb": (MAX_MEMORY >> 20, 1, 1 << 20),
}


@dataclass(frozen=True)
class RuneSettings:
    """The ``[rune]`` table of ``toolmesh.toml``: ``watch`` (hot reload, default true),
    ``debounce_ms`` (how long a burst of file changes is gathered, default 50), ``max_running``
    (scripts run at once, default 2), ``max_waiting`` (calls that may wait for one of them,
    default 200) and ``max_memory_mb`` (memory the big values of one run may take, default 256)."""

    watch: bool = True
    debounce_ms: int = 50
    max_running: int = DEFAULT_MAX_RUNNING
    max_waiting: int = DEFAULT_MAX_WAITING
    max_memory_mb: int = MAX_MEMORY >> 20

    @classmethod
    def from_table(cls, table: dict[str, Any] | None) -> RuneSettings:
        """Build from the TOML table, with a readable error for a wrong value."""
        table = dict(table or {})
        known = {"watch", *_INTEGER_SETTINGS}
        unknown = set(table) - known
        if unknown:  # a warning, not an error: the table may also hold settings of the language
            _log.warning(
                "ignoring unknown [rune] settings %s; the plugin knows %s",
                sorted(unknown),
                ", ".join(sorted(known)),
            )
        watch = table.get("watch", True)
        if not isinstance(watch, bool):
            raise ConfigError(f"[rune] watch must be true or false, not {watch!r}")
        numbers: dict[str, int] = {}
        for name, (default, low, high) in _INTEGER_SETTINGS.items():
            value = table.get(name, default)
            if type(value) is not int or not low <= value <= high:
                raise ConfigError(f"[rune] {name} must be an integer from {low} to {high}, not {value!r}")
            numbers[name] = value
        return cls(watch=watch, **numbers)


def _spec(tool: RuneTool, digest: str) -> ToolSpec:
    description = tool.description if not tool.doc else f"{tool.description}\n\n{tool.doc}"
    return ToolSpec(
        name=tool.name,
        description=description,
        version=tool.version,
        tags=tool.tags,
        input_schema=tool.input_schema,
        source=SOURCE,
        timeout=(tool.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000,
        meta={
            "rune": {
                "file": tool.file,
                "function": tool.function,
                "line": tool.line,
                "format": tool.format,
                "digest": digest[:16],
                "long_description": tool.doc,
            }
        },
    )


class RuneCatalog:
    """The Rune tools one kernel serves, kept current by a file watcher."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.settings = RuneSettings.from_table(kernel.settings.plugins.get(SOURCE))
        self.good: dict[str, LoadedFile] = {}
        """Per path, the newest version that loaded without errors (what is served)."""
        self.failed: dict[str, LoadedFile] = {}
        """Per path, a newer version that did not load (reported, not served)."""
        self.tools: dict[str, ToolEntry] = {}
        """Served tools by name: the definition and the compiled ``Unit`` it runs in."""
        self.problems: list[Problem] = []
        self.sources: frozenset[str] = frozenset()
        """The sources of the last discovery."""
        self._pending_events: list[tuple[str, str, dict[str, Any]]] = []
        self._discovering = anyio.Lock()
        self._scanned = False
        self._roots: tuple[tuple[Path, ...], frozenset[Path]] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stop: anyio.Event | None = None
        self._pool: ScriptPool | None = None

    # -------------------------------------------------------------- discovery

    async def discover(self, sources: list[str]) -> list[ToolSpec | tuple[ToolSpec, ToolEntry]]:
        """Load the files of ``sources`` (in a worker thread) and return the specs to serve."""
        # One discovery at a time: other plugins (sandbox, mcp) refresh the kernel too, and a
        # read that started before an edit must not be applied after the read that saw it.
        async with self._discovering:
            self.sources = frozenset(sources)
            loaded = await anyio.to_thread.run_sync(_load_all, sources)
            self._apply(loaded)
        if self.settings.watch and _watchfiles_installed():
            self._ensure_watcher(sources)
        return self.specs()

    def _apply(self, loaded: list[LoadedFile]) -> None:
        report = self._scanned  # the first scan is reported in the log only, later ones as events too
        self._scanned = True
        before = dict(self.good)
        previous_failures = {path: version.digest for path, version in self.failed.items()}
        good: dict[str, LoadedFile] = {}
        failed: dict[str, LoadedFile] = {}
        for version in loaded:
            if version.ok:
                good[version.path] = version
                continue
            failed[version.path] = version
            if version.path in self.good:
                good[version.path] = self.good[version.path]  # keep serving the last good version
            if previous_failures.get(version.path) != version.digest:
                self._report_failure(version, kept=version.path in self.good, event=report)
        for version in loaded:
            for problem in version.problems:
                if problem.severity == "warning" and version.path not in before:
                    _log.info("%s", problem)
        self.good, self.failed = good, failed
        ordered = [self.good[path] for path in sorted(self.good)]
        resolved, duplicates = resolve_tools(ordered)
        previous = self.tools
        self.tools = {}
        for name, (tool, unit) in resolved.items():
            entry = previous.get(name)
            # an unchanged tool keeps its entry (and what is known about its speed)
            unchanged = entry is not None and entry.unit is unit and entry.tool == tool
            self.tools[name] = entry if unchanged and entry is not None else ToolEntry(tool, unit)
        for problem in duplicates:
            _log.warning("%s", problem)
        self.problems = [p for v in failed.values() for p in v.errors] + duplicates
        if report:
            self._note_changes(before)

    def _report_failure(self, version: LoadedFile, *, kept: bool, event: bool) -> None:
        errors = "; ".join(str(problem) for problem in version.errors)
        if kept:
            _log.warning(
                "rune file %s did not reload, its last good version keeps serving: %s", version.path, errors
            )
        else:
            _log.warning("rune file %s did not load: %s", version.path, errors)
        if event:
            names = [tool.name for tool in self.good[version.path].tools] if kept else []
            attributes = {
                "file": version.path,
                "kept_last_good": kept,
                "problems": [problem.as_dict() for problem in version.errors],
            }
            for name in names or [placeholder_name(version)]:
                self._pending_events.append(("reload_failed", name, attributes))

    def _note_changes(self, before: dict[str, LoadedFile]) -> None:
        for path in sorted(set(before) | set(self.good)):
            old, new = before.get(path), self.good.get(path)
            if (old.digest if old else None) == (new.digest if new else None):
                continue
            change = "added" if old is None else "removed" if new is None else "modified"
            names = sorted(
                {tool.name for version in (old, new) if version is not None for tool in version.tools}
            )
            _log.info("rune file %s %s: %s", path, change, ", ".join(names) or "no tools")
            for name in names or [placeholder_name(LoadedFile(path, "", None))]:
                attributes = {"file": path, "change": change, "digest": new.digest if new else None}
                self._pending_events.append(("reloaded", name, attributes))

    def specs(self) -> list[ToolSpec | tuple[ToolSpec, ToolEntry]]:
        """Specs of the served tools (each paired with its entry), plus an unavailable one per file that never loaded."""
        specs: list[ToolSpec | tuple[ToolSpec, ToolEntry]] = [
            (_spec(entry.tool, self._digest(entry.tool)), entry) for entry in self.tools.values()
        ]
        for path, version in sorted(self.failed.items()):
            name = placeholder_name(version)
            if path in self.good or name in self.tools:
                continue
            reason = "the Rune file does not load: " + "; ".join(str(problem) for problem in version.errors)
            specs.append(
                ToolSpec(
                    name=name,
                    description=f"Rune file {path} (not loaded)",
                    source=SOURCE,
                    available=False,
                    unavailable_reason=reason,
                    meta={"rune": {"file": path}},
                )
            )
        return specs

    def _digest(self, tool: RuneTool) -> str:
        version = self.good.get(tool.file)
        return version.digest if version else ""

    async def emit_pending(self) -> None:
        """Publish the reload events gathered by the last discoveries (after the kernel applied them)."""
        events, self._pending_events = self._pending_events, []
        for kind, tool, attributes in events:
            await self.kernel.emit(kind, tool, attributes=attributes)

    # -------------------------------------------------------------- execution

    def execute(self, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
        """The awaitable result of one call of the entry the kernel chose for ``spec`` (its latest refresh)."""
        entry = context.kernel.implementation_of(spec.name)
        if not isinstance(entry, ToolEntry):
            return _unavailable(spec)
        if self._pool is None:  # made on first use, inside the event loop
            self._pool = ScriptPool(self.settings.max_running, self.settings.max_waiting)
        return run_tool(entry, arguments, context, self._pool, self.settings.max_memory_mb << 20)

    # -------------------------------------------------------------- hot reload

    def _ensure_watcher(self, sources: Iterable[str]) -> None:
        dirs = {Path(s).resolve() for s in sources if Path(s).is_dir()}
        singles = {Path(s).resolve() for s in sources if not Path(s).is_dir()}
        roots = tuple(sorted(dirs | {path.parent for path in singles if path.parent.is_dir()}))
        key = (roots, frozenset(singles))
        if key == self._roots and self._watcher is not None and not self._watcher.done():
            return
        self.stop_watching()
        self._roots = key
        if roots:
            self._stop = anyio.Event()
            self._watcher = asyncio.get_running_loop().create_task(
                self._watch(roots, dirs, frozenset(singles))
            )

    async def _watch(self, roots: tuple[Path, ...], dirs: set[Path], singles: frozenset[Path]) -> None:
        import watchfiles

        assert self._stop is not None
        try:
            async for _changes in watchfiles.awatch(
                *roots,
                watch_filter=functools.partial(self._wanted, dirs=dirs, singles=singles),
                debounce=max(self.settings.debounce_ms * 6, 300),
                step=self.settings.debounce_ms,
                stop_event=self._stop,
                recursive=True,
                ignore_permission_denied=True,
            ):
                try:
                    await self.kernel.refresh_tools()
                except Exception:  # noqa: BLE001 - isolation boundary around plugins' discovery hooks
                    _log.exception("refreshing tools after a Rune file change failed")
        except FileNotFoundError as exc:
            _log.warning("stopped watching Rune files: %s", exc)

    def _wanted(self, change: Any, path: str, *, dirs: set[Path], singles: frozenset[Path]) -> bool:
        """Whether a change reported by the watcher calls for a new scan of the sources."""
        import watchfiles

        file = Path(path)
        if file.resolve() in singles:
            return True
        root = next((root for root in dirs if file.is_relative_to(root)), None)
        if root is None or skipped(file.relative_to(root)):
            return False  # e.g. git at work in .git/ of a served folder
        if file.suffix == SUFFIX:
            return True
        # A folder moved in, or created with files written before the watch on it existed, and a
        # folder moved away: the watcher reports only the folder, a scan finds what it holds.
        if change == watchfiles.Change.added:
            return file.is_dir()
        if change == watchfiles.Change.deleted:
            return any(Path(known).resolve().is_relative_to(file) for known in (*self.good, *self.failed))
        return False

    def stop_watching(self) -> None:
        """Stop the file watcher (idempotent)."""
        if self._stop is not None:
            self._stop.set()
        if self._watcher is not None:
            self._watcher.cancel()
        self._watcher, self._stop, self._roots = None, None, None

    async def close(self) -> None:
        """Stop watching and wait for the watcher to end."""
        watcher = self._watcher
        self.stop_watching()
        if watcher is not None:
            with anyio.CancelScope(shield=True):
                await asyncio.gather(watcher, return_exceptions=True)


@functools.cache
def _watchfiles_installed() -> bool:
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        _log.warning("hot reload of Rune tools needs watchfiles: pip install 'toolmesh[rune]'")
        return False
    return True


def _load_all(sources: list[str]) -> list[LoadedFile]:
    # in a worker thread: walking folders, reading and compiling files all block
    return [load_file(path) for path in find_rune_files(sources) if path.exists()]


async def _unavailable(spec: ToolSpec) -> Any:
    raise ToolUnavailable(
        f"Rune tool {spec.name!r} is not loaded on this kernel any more; it was just removed"
    )
