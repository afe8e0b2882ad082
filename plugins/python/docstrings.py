"""Parameter descriptions from Google, NumPy and Sphinx style docstrings.

The parameter section moves into the input schema (one ``description`` per
property), so the tool description keeps only the rest of the docstring.
"""

from __future__ import annotations

import re

__all__ = ["split_docstring"]

_GOOGLE_HEADER = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters):\s*$"
)
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:(.*)$")
_NUMPY_HEADERS = {"Parameters", "Params", "Arguments", "Other Parameters", "Keyword Arguments"}
_NUMPY_RULE = re.compile(r"^-{3,}\s*$")
_NUMPY_ENTRY = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")
_SPHINX_PARAM = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:(.*)$"
)
_SPHINX_TYPE = re.compile(r"^:type\s+\*{0,2}\w+\s*:")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _append(params: dict[str, str], name: str, text: str) -> None:
    text = text.strip()
    if text:
        params[name] = f"{params[name]} {text}".strip() if name in params else text


def _google_section(lines: list[str], start: int, header_indent: int, params: dict[str, str]) -> int:
    """Read ``name (type): text`` entries below a Google header; returns the index after the section."""
    entry_indent: int | None = None
    current: str | None = None
    index = start
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        match = _GOOGLE_ENTRY.match(line.strip())
        if indent <= entry_indent and match:
            current = match.group(1)
            params.setdefault(current, "")
            _append(params, current, match.group(2))
        elif current is not None:
            _append(params, current, line)
        index += 1
    return index


def _numpy_section(lines: list[str], start: int, header_indent: int, params: dict[str, str]) -> int:
    """Read ``name : type`` entries (descriptions indented below) of a NumPy section."""
    current: list[str] = []
    index = start
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        if _indent(line) <= header_indent:
            if index + 1 < len(lines) and _NUMPY_RULE.match(lines[index + 1].strip()):
                break  # the next section (Returns, Raises ...)
            match = _NUMPY_ENTRY.match(line.strip())
            if match is None:
                break
            current = [name.strip().lstrip("*") for name in match.group(1).split(",")]
            for name in current:
                params.setdefault(name, "")
        else:
            for name in current:
                _append(params, name, line)
        index += 1
    return index


def _field_end(lines: list[str], start: int, field_indent: int) -> int:
    """Index after the continuation lines (indented deeper) of a Sphinx field."""
    index = start
    while index < len(lines) and lines[index].strip() and _indent(lines[index]) > field_indent:
        index += 1
    return index


def _tidy(lines: list[str]) -> str:
    kept: list[str] = []
    for line in lines:
        if line.strip() or (kept and kept[-1].strip()):
            kept.append(line.rstrip())
    return "\n".join(kept).strip()


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a cleaned docstring into its text without parameter sections and each parameter's description."""
    lines = doc.splitlines()
    kept: list[str] = []
    params: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        indent = _indent(line)
        if _GOOGLE_HEADER.match(stripped):
            index = _google_section(lines, index + 1, indent, params)
        elif (
            stripped in _NUMPY_HEADERS
            and index + 1 < len(lines)
            and _NUMPY_RULE.match(lines[index + 1].strip())
        ):
            index = _numpy_section(lines, index + 2, indent, params)
        elif match := _SPHINX_PARAM.match(stripped):
            end = _field_end(lines, index + 1, indent)
            params.setdefault(match.group(1), "")
            for part in [match.group(2), *lines[index + 1 : end]]:
                _append(params, match.group(1), part)
            index = end
        elif _SPHINX_TYPE.match(stripped):
            index = _field_end(lines, index + 1, indent)
        else:
            kept.append(line)
            index += 1
    return _tidy(kept), {name: text for name, text in params.items() if text}
