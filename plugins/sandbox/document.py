"""Loading ``tool.code.v1`` documents: find ``*.tool.json`` files, check them, report every problem.

A document is checked in two passes so that *all* its problems are reported
at once: the JSON Schema of the ``ToolCodeDocument`` contract (every
structural problem, each with its JSON path), then the rules a schema cannot
say (required tags, the name in ``tool:{name}``, valid input/output schemas,
an exported ``execute``).  Only a document with no problem becomes a
``CodeTool``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import msgspec
from toolmesh import compile_schema, json_path, schema_issues
from toolmesh.contracts.tool_code import TOOL_CODE_TAGS, ToolCodeDocument

__all__ = ["SUFFIX", "CodeTool", "DocumentProblem", "check_document", "find_documents", "load_file", "load_sources"]

SUFFIX = ".tool.json"
"""Files the sandbox plugin serves."""

# An ES module exports `execute` as a function, a const/let binding, or in an export list.
_EXPORTS_EXECUTE = re.compile(
    r"export\s+(?:async\s+)?function\s*\*?\s*execute\b"
    r"|export\s+(?:const|let|var)\s+execute\b"
    r"|export\s*\{[^}]*\bexecute\b[^}]*\}"
)


@dataclass(frozen=True, slots=True)
class DocumentProblem:
    """One reason a document is refused: where (file and JSON path) and why."""

    file: str
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.reason}"


@dataclass(frozen=True, slots=True)
class CodeTool:
    """A document that passed every check, with the file it came from (``None``: from the mesh)."""

    document: ToolCodeDocument
    file: str | None = None

    @property
    def name(self) -> str:
        """The tool name."""
        return self.document.context.name


def _drill(node: Any) -> Any:
    # `Struct | None` becomes anyOf[$ref, null], whose error is one vague line for the whole
    # object; validating against the struct alone names each bad field inside it.
    if isinstance(node, dict):
        options = node.get("anyOf")
        if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
            other = options[0] if options[1] == {"type": "null"} else options[1]
            if "$ref" in other:
                return _drill({key: value for key, value in node.items() if key != "anyOf"} | other)
        return {key: _drill(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_drill(item) for item in node]
    return node


@cache
def _document_validator() -> Any:
    return jsonschema_rs.validator_for(_drill(msgspec.json.schema(ToolCodeDocument)))


def check_document(data: Any, file: str = "<message>") -> tuple[CodeTool | None, list[DocumentProblem]]:
    """Check decoded JSON against ``tool.code.v1``; returns the tool or every problem found."""
    validator = _document_validator()
    problems = [
        DocumentProblem(file, json_path(error.instance_path), error.message) for error in validator.iter_errors(data)
    ]
    # The tag rule needs only the tags and the name: check it even when other parts are wrong.
    tags = data.get("tags") if isinstance(data, dict) else None
    context_data = data.get("context") if isinstance(data, dict) else None
    name = context_data.get("name") if isinstance(context_data, dict) else None
    if isinstance(tags, list) and isinstance(name, str):
        missing = [tag for tag in (*TOOL_CODE_TAGS, f"tool:{name}") if tag not in tags]
        if missing:
            problems.append(DocumentProblem(file, "$.tags", f"missing required tag(s): {', '.join(missing)}"))
    if problems:
        return None, problems
    document = msgspec.convert(data, ToolCodeDocument)
    context = document.context
    for label, schema in (("input_schema", context.input_schema), ("output_schema", context.output_schema)):
        if schema is not None:
            try:
                compile_schema(schema)
            except ValueError as exc:
                problems.append(DocumentProblem(file, f"$.context.{label}", str(exc)))
    if not _EXPORTS_EXECUTE.search(context.code.source):
        problems.append(
            DocumentProblem(file, "$.context.code.source", "the source must export a function named execute(input, context)")
        )
    if context.bootstrap is not None and context.bootstrap.enabled and context.bootstrap.mode == "disabled":
        problems.append(
            DocumentProblem(file, "$.context.bootstrap.mode",
                            "bootstrap is enabled but mode is 'disabled': set mode to 'once' or 'continuous'")
        )
    if context.bootstrap is not None and context.name in context.bootstrap.wait_for:
        problems.append(DocumentProblem(file, "$.context.bootstrap.wait_for", "a tool cannot wait for itself"))
    for index, example in enumerate(context.examples):
        if not problems:
            for issue in schema_issues(context.input_schema, example.input):
                problems.append(
                    DocumentProblem(file, f"$.context.examples[{index}].input{issue.path[1:]}",
                                    f"does not match input_schema: {issue.message}")
                )
    return (None if problems else CodeTool(document, None if file == "<message>" else file)), problems


def load_file(path: Path) -> tuple[CodeTool | None, list[DocumentProblem]]:
    """Read and check one ``*.tool.json`` file."""
    file = str(path)
    try:
        data = msgspec.json.decode(path.read_bytes())
    except OSError as exc:
        return None, [DocumentProblem(file, "$", f"cannot read the file: {exc.strerror or exc}")]
    except msgspec.DecodeError as exc:
        return None, [DocumentProblem(file, "$", f"not valid JSON: {exc}")]
    return check_document(data, file)


def find_documents(source: str) -> list[Path]:
    """The ``*.tool.json`` files a source names: the file itself, or those under a directory."""
    path = Path(source)
    if path.is_dir():
        return sorted(candidate for candidate in path.rglob(f"*{SUFFIX}") if candidate.is_file())
    if path.name.endswith(SUFFIX):
        return [path]
    return []


def load_sources(sources: list[str]) -> tuple[list[CodeTool], list[DocumentProblem]]:
    """Load every document the sources name; returns the good tools and all problems."""
    tools: list[CodeTool] = []
    problems: list[DocumentProblem] = []
    for source in sources:
        for path in find_documents(source):
            tool, found = load_file(path)
            problems.extend(found)
            if tool is not None:
                tools.append(tool)
    return tools, problems
