"""The Rune tool format: which functions of a compiled file are tools, and their schemas.

Two formats, both described in ``docs/rune-tools.md``:

* **attributes** — any number of tools per file::

      /// Long description (kept).
      #[param(name = "query", type = "string", desc = "Search query text")]
      #[tool(desc = "Search notes", version = "1.0.0", tags = ["search"], timeout_ms = 5000)]
      pub fn search_notes(query) { ... }

* **legacy** (Crucible's single-tool format) — ``//!`` lines at the top of the
  file; the tool is named after the file and runs ``@entry`` (default ``main``)::

      //! Count the words of a text.
      //! @param text string The text

Everything here is pure: it reads a ``Unit`` and its source and returns tool
definitions plus every problem found, each with a file position.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolmesh.plugins.rune.lang import FunctionInfo, RuneError, RuneSyntaxError, Unit
from toolmesh.plugins.rune.lang.nodes import Attribute

__all__ = [
    "DEFAULT_VERSION",
    "FUNCTION_ATTRIBUTES",
    "MAX_POSITIONAL",
    "PARAM_KEYS",
    "PARAM_TYPES",
    "TOOL_KEYS",
    "TOOL_PREFIX",
    "Problem",
    "RuneTool",
    "ToolParam",
    "legacy_tool_name",
    "problem_from_error",
    "tools_in_unit",
]

TOOL_PREFIX = "rune_"
"""Every Rune tool's name starts with this (``search_notes`` → ``rune_search_notes``)."""

MAX_POSITIONAL = 4
"""Up to this many parameters are passed positionally; a tool with more gets one array."""

DEFAULT_VERSION = "0.1.0"
"""``version`` of a tool whose ``#[tool]`` names none."""

PARAM_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
"""Values of ``#[param(type = ...)]``; each is the JSON Schema type of the property."""

_TYPES_TEXT = ", ".join(sorted(PARAM_TYPES))

TOOL_KEYS = ("desc", "version", "tags", "timeout_ms")
"""Keys ``#[tool(...)]`` accepts."""

PARAM_KEYS = ("name", "type", "desc", "required")
"""Keys ``#[param(...)]`` accepts."""

# Crucible's legacy headers accept Rust-ish spellings of the types; map them to JSON Schema.
_LEGACY_TYPES = {
    "string": "string", "str": "string", "String": "string",
    "number": "number", "float": "number", "f32": "number", "f64": "number",
    "integer": "integer", "int": "integer", "i32": "integer", "i64": "integer",
    "boolean": "boolean", "bool": "boolean",
    "array": "array", "list": "array", "Vec": "array",
    "object": "object", "map": "object", "Object": "object",
}  # fmt: skip

_LEGACY_DIRECTIVES = ("entry", "version", "tags", "param", "timeout_ms")

FUNCTION_ATTRIBUTES = ("tool", "param", "test", "bench")
"""Attributes a function of a tool file may carry (``#[test]``/``#[bench]`` are upstream Rune's)."""

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Problem:
    """Something wrong (or worth a warning) in a Rune tool file, at ``file:line:column``."""

    file: str
    line: int
    column: int
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        """JSON form (``toolmesh rune check --json``, event attributes)."""
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "message": self.message,
        }


@dataclass(frozen=True)
class ToolParam:
    """One declared parameter: its JSON name, JSON Schema type, description and whether it is required."""

    name: str
    type: str
    description: str
    required: bool = True


@dataclass(frozen=True)
class RuneTool:
    """A tool found in a Rune file: what the spec shows and how to call the function."""

    name: str
    function: str
    description: str
    doc: str
    version: str
    tags: tuple[str, ...]
    params: tuple[ToolParam, ...]
    positional: tuple[str, ...] | None
    """Parameter names in the function's signature order, or ``None``: one array of all (> 4 params)."""
    timeout_ms: int | None
    is_async: bool
    file: str
    line: int
    format: Literal["attribute", "legacy"]

    @property
    def input_schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments: every param typed, required ones listed, nothing else allowed."""
        properties = {p.name: {"type": p.type, "description": p.description} for p in self.params}
        return {
            "type": "object",
            "properties": properties,
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def call_arguments(self, arguments: Mapping[str, Any]) -> list[Any]:
        """The function's arguments for validated JSON ``arguments``.

        A required parameter is passed as its value; an optional one as
        ``Some(value)`` or ``None`` (Python ``{"Some": v}`` / ``{"None": None}``,
        which the bridge turns into Rune ``Option``s).  More than four
        parameters arrive as one array in declared order.
        """
        values: dict[str, Any] = {}
        for param in self.params:
            if param.required:
                values[param.name] = arguments.get(param.name)
            elif param.name in arguments:
                values[param.name] = {"Some": arguments[param.name]}
            else:
                values[param.name] = {"None": None}
        if self.positional is None:
            return [[values[param.name] for param in self.params]]
        return [values[name] for name in self.positional]


def legacy_tool_name(path: str | Path) -> str:
    """The tool name of a legacy file: ``rune_`` plus its stem, other characters replaced by ``_``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(path).stem)
    return (TOOL_PREFIX + stem)[:128]


def problem_from_error(file: str, error: RuneError) -> Problem:
    """A syntax or compile error as a ``Problem`` at its position."""
    message = f"syntax error: {error.message}" if isinstance(error, RuneSyntaxError) else error.message
    return Problem(file, max(error.line, 1), max(error.column, 1), message)


# ------------------------------------------------------------------ attribute format


class _Collector:
    """Gathers problems of one file with the file name filled in."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def error(self, line: int, column: int, message: str) -> None:
        self.problems.append(Problem(self.file, line, column, message))

    def warning(self, line: int, column: int, message: str) -> None:
        self.problems.append(Problem(self.file, line, column, message, "warning"))


def _check_keys(attr: Attribute, allowed: Iterable[str], out: _Collector) -> bool:
    ok = True
    if attr.positional:
        out.error(
            attr.line,
            attr.col,
            f"#[{attr.path}] takes `key = value` arguments only, not {attr.positional[0]!r}",
        )
        ok = False
    for key in attr.args:
        if key not in allowed:
            out.error(
                attr.line,
                attr.col,
                f"#[{attr.path}] has an unknown key `{key}`; allowed keys: {', '.join(allowed)}",
            )
            ok = False
    return ok


def _string(attr: Attribute, key: str, out: _Collector, *, required: bool) -> str | None:
    value = attr.args.get(key)
    if value is None:
        if required:
            out.error(attr.line, attr.col, f'#[{attr.path}] needs `{key} = "..."`')
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        out.error(attr.line, attr.col, f"#[{attr.path}] `{key}` must be a non-empty string, not {value!r}")
        return None
    return value


def _tool_params(fn: FunctionInfo, attrs: list[Attribute], out: _Collector) -> tuple[list[ToolParam], bool]:
    params: list[ToolParam] = []
    ok = True
    seen: set[str] = set()
    for attr in attrs:
        ok = _check_keys(attr, PARAM_KEYS, out) and ok
        name = _string(attr, "name", out, required=True)
        kind = _string(attr, "type", out, required=True)
        desc = _string(attr, "desc", out, required=True)
        required = attr.args.get("required", True)
        if not isinstance(required, bool):
            out.error(attr.line, attr.col, f"#[param] `required` must be true or false, not {required!r}")
            ok = False
        if kind is not None and kind not in PARAM_TYPES:
            out.error(
                attr.line,
                attr.col,
                f"#[param(name = {name!r})] has an unknown type {kind!r}; use one of {_TYPES_TEXT}",
            )
            ok = False
        if name is not None and name in seen:
            out.error(attr.line, attr.col, f"#[param(name = {name!r})] is declared twice on `fn {fn.name}`")
            ok = False
        if None in (name, kind, desc):
            ok = False
            continue
        assert name is not None and kind is not None and desc is not None
        seen.add(name)
        params.append(ToolParam(name, kind, desc, bool(required)))
    return params, ok


def _declared(name: str, legacy: bool) -> str:
    return f"`//! @param {name}`" if legacy else f"#[param(name = {name!r})]"


def _match_signature(
    fn: FunctionInfo, params: list[ToolParam], line: int, column: int, out: _Collector, *, legacy: bool
) -> tuple[tuple[str, ...] | None, bool]:
    """Check declared params against ``fn``'s signature; returns the positional order."""
    signature = f"fn {fn.name}({', '.join(fn.params)})"
    if len(params) > MAX_POSITIONAL:
        if len(fn.params) != 1:
            out.error(
                line,
                column,
                f"`{signature}` declares {len(params)} params: a tool with more than {MAX_POSITIONAL}"
                " receives them as one array, so the function must take exactly one parameter",
            )
            return None, False
        return None, True
    ok = True
    declared = {p.name for p in params}
    for param in params:
        if param.name not in fn.params:
            out.error(
                line, column, f"{_declared(param.name, legacy)} does not match a parameter of `{signature}`"
            )
            ok = False
    for name in fn.params:
        if name not in declared:
            out.error(
                line,
                column,
                f"parameter `{name}` of `{signature}` has no {_declared(name, legacy)}",
            )
            ok = False
    return tuple(fn.params), ok


def _timeout(attr: Attribute, out: _Collector) -> tuple[int | None, bool]:
    value = attr.args.get("timeout_ms")
    if value is None:
        return None, True
    if type(value) is not int or value <= 0:
        out.error(attr.line, attr.col, f"#[tool] `timeout_ms` must be a positive integer, not {value!r}")
        return None, False
    return value, True


def _attribute_tool(
    fn: FunctionInfo, tool_attrs: list[Attribute], file: str, out: _Collector
) -> RuneTool | None:
    attr = tool_attrs[0]
    ok = True
    for extra in tool_attrs[1:]:
        out.error(extra.line, extra.col, f"`fn {fn.name}` has more than one #[tool] attribute")
        ok = False
    if "::" in fn.name:
        out.error(
            attr.line,
            attr.col,
            f"#[tool] functions must be at the top level of the file; `{fn.name}` is in a module",
        )
        return None
    ok = _check_keys(attr, TOOL_KEYS, out) and ok
    desc = _string(attr, "desc", out, required=True)
    version = _string(attr, "version", out, required=False) or DEFAULT_VERSION
    tags = attr.args.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        out.error(
            attr.line, attr.col, f'#[tool] `tags` must be a list of strings like ["search"], not {tags!r}'
        )
        ok, tags = False, []
    timeout_ms, timeout_ok = _timeout(attr, out)
    params, params_ok = _tool_params(fn, [a for a in fn.attributes if a.path == "param"], out)
    positional, signature_ok = _match_signature(fn, params, attr.line, attr.col, out, legacy=False)
    if not (ok and timeout_ok and params_ok and signature_ok) or desc is None:
        return None
    return RuneTool(
        name=TOOL_PREFIX + fn.name,
        function=fn.name,
        description=desc,
        doc="\n".join(fn.docs).strip(),
        version=version,
        tags=tuple(tags),
        params=tuple(params),
        positional=positional,
        timeout_ms=timeout_ms,
        is_async=fn.is_async,
        file=file,
        line=fn.line,
        format="attribute",
    )


# ------------------------------------------------------------------ legacy format


@dataclass
class _Header:
    description: list[str]
    directives: list[tuple[int, int, str, str]]  # (line, column, name, rest)


def _legacy_header(source: str) -> _Header:
    """The ``//!`` lines before the first line of code (blank lines and ``//`` comments are skipped)."""
    header = _Header([], [])
    for number, raw in enumerate(source.splitlines(), 1):
        text = raw.strip()
        if text.startswith("//!"):
            comment = text[3:].strip()
            column = raw.index("//!") + 1
            if comment.startswith("@"):
                name, _, rest = comment[1:].partition(" ")
                header.directives.append((number, column, name, rest.strip()))
            elif comment or header.description:
                header.description.append(comment)
        elif text and not text.startswith("//"):
            break
    return header


def _function(unit: Unit, name: str) -> FunctionInfo | None:
    info = unit.functions.get(name)
    if info is not None:
        return info
    try:
        unit.lookup(name)  # the implicit `main` of a file of top-level statements
    except RuneError:
        return None
    return FunctionInfo(name, [], [], [], True, False, 1)


def _legacy_tool(unit: Unit, header: _Header, file: str, out: _Collector) -> RuneTool | None:
    ok = True
    tags: tuple[str, ...]
    entry, version, tags, timeout_ms = "main", DEFAULT_VERSION, (), None
    entry_at = (1, 1)
    params: list[ToolParam] = []
    for line, column, name, rest in header.directives:
        if name not in _LEGACY_DIRECTIVES:
            out.error(
                line,
                column,
                f"unknown header directive `@{name}`; use {', '.join('@' + d for d in _LEGACY_DIRECTIVES)}",
            )
            ok = False
        elif name == "entry":
            entry, entry_at = rest, (line, column)
        elif name == "version":
            version = rest or DEFAULT_VERSION
        elif name == "tags":
            tags = tuple(tag.strip() for tag in rest.split(",") if tag.strip())
        elif name == "timeout_ms":
            if not rest.isdigit() or int(rest) <= 0:
                out.error(line, column, f"`@timeout_ms` needs a positive integer, not {rest!r}")
                ok = False
            else:
                timeout_ms = int(rest)
        else:  # @param name[?] type description
            parts = rest.split(None, 2)
            if len(parts) < 3:
                out.error(
                    line, column, "`@param` needs `name type description`, e.g. `@param text string The text`"
                )
                ok = False
                continue
            pname, kind, desc = parts
            optional = pname.endswith("?")
            pname = pname.removesuffix("?")
            if kind not in _LEGACY_TYPES:
                out.error(
                    line,
                    column,
                    f"@param {pname} has an unknown type {kind!r}; use one of {_TYPES_TEXT}",
                )
                ok = False
                continue
            if any(p.name == pname for p in params):
                out.error(line, column, f"@param {pname} is declared twice")
                ok = False
                continue
            params.append(ToolParam(pname, _LEGACY_TYPES[kind], desc, not optional))
    if not header.description:
        out.error(1, 1, "the legacy `//!` header needs a description line before its @directives")
        ok = False
    fn = _function(unit, entry)
    if fn is None:
        out.error(*entry_at, f"the entry function `{entry}` is not defined (set it with `//! @entry name`)")
        return None
    positional, signature_ok = _match_signature(fn, params, *entry_at, out, legacy=True)
    if not (ok and signature_ok):
        return None
    return RuneTool(
        name=legacy_tool_name(file),
        function=entry,
        description=header.description[0],
        doc="\n".join(header.description[1:]).strip(),
        version=version,
        tags=tags,
        params=tuple(params),
        positional=positional,
        timeout_ms=timeout_ms,
        is_async=fn.is_async,
        file=file,
        line=fn.line,
        format="legacy",
    )


# ------------------------------------------------------------------ whole-file checks


def _check_function_attributes(unit: Unit, out: _Collector) -> None:
    """A misspelt attribute (``#[tols(...)]``) would silently turn a tool into a private helper."""
    for fn in unit.functions.values():
        for attr in fn.attributes:
            if attr.path not in FUNCTION_ATTRIBUTES:
                allowed = ", ".join(f"#[{name}]" for name in FUNCTION_ATTRIBUTES)
                out.error(
                    attr.line, attr.col, f"unknown attribute #[{attr.path}] on `fn {fn.name}`; use {allowed}"
                )


# ------------------------------------------------------------------ entry point


def tools_in_unit(unit: Unit, source: str, file: str) -> tuple[list[RuneTool], list[Problem]]:
    """Every tool of a compiled file and every problem with its definitions.

    A file with a ``#[tool]`` function uses the attribute format; otherwise a
    ``//!`` header makes it a legacy single-tool file; otherwise it has no tools
    (a warning).  A tool with any error is left out.
    """
    out = _Collector(file)
    _check_function_attributes(unit, out)
    tools: list[RuneTool] = []
    attributed = [fn for fn in unit.functions.values() if fn.attribute("tool") is not None]
    for fn in unit.functions.values():
        tool_attrs = [a for a in fn.attributes if a.path == "tool"]
        if not tool_attrs:
            stray = fn.attribute("param")
            if stray is not None:
                out.error(
                    stray.line, stray.col, f"#[param] on `fn {fn.name}`, which has no #[tool(desc = ...)]"
                )
            continue
        tool = _attribute_tool(fn, tool_attrs, file, out)
        if tool is not None:
            tools.append(tool)
    if not attributed:
        header = _legacy_header(source)
        if header.description or header.directives:
            tool = _legacy_tool(unit, header, file, out)
            if tool is not None:
                tools.append(tool)
        else:
            out.warning(
                1, 1, "no tools: mark functions with #[tool(desc = ...)] or add a legacy `//!` header"
            )
    return tools, sorted(out.problems, key=lambda problem: (problem.line, problem.column))
