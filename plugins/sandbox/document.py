"""Loading ``tool.code.v1`` documents: find ``*.tool.json`` files, check them, report every problem.

A document is checked in two passes, both always run, so that *all* its
problems are reported at once: the JSON Schema of the ``ToolCodeDocument``
contract (every structural problem, each with its JSON path), then the rules
a schema cannot say (required tags, the name in ``tool:{name}``, valid
input/output schemas, an exported ``execute``, examples and
``bootstrap.input`` that match the input schema, config fields without
secret values).  The rules read the raw JSON, each only the parts it needs,
so a malformed part elsewhere does not hide them.  Only a document with no
problem becomes a ``CodeTool``.
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

__all__ = [
    "SECRET_FIELD_TYPES",
    "SECRET_VALUE_KEYS",
    "SUFFIX",
    "CodeTool",
    "DocumentProblem",
    "check_document",
    "find_documents",
    "load_file",
    "load_sources",
]

SUFFIX = ".tool.json"
"""Files the sandbox plugin serves."""

SECRET_FIELD_TYPES = frozenset({"secret", "password"})
"""``config_fields[].type`` values that make a field a secret (as does a name in ``required_secrets``)."""

SECRET_VALUE_KEYS = ("default", "value")
"""Keys of a config field that would hold a value; a secret field may have none of them."""

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
    ui_schema: dict[str, Any] | None = None
    """``context.ui_schema`` exactly as the document gives it: the contract keeps only the keys it names."""

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
    document_data = data if isinstance(data, dict) else {}
    context = document_data.get("context")
    context = context if isinstance(context, dict) else {}
    # The rules below read the raw data, so they run (and report) even when other parts are malformed:
    # each looks only at the parts it needs, and leaves a part of the wrong type to the schema's report.
    problems.extend(_tag_problems(document_data.get("tags"), context.get("name"), file))
    problems.extend(_rule_problems(context, file))
    if problems:
        return None, problems
    document = msgspec.convert(data, ToolCodeDocument)
    ui_schema = context.get("ui_schema")
    return CodeTool(document, None if file == "<message>" else file, ui_schema), []


def _tag_problems(tags: Any, name: Any, file: str) -> list[DocumentProblem]:
    if not isinstance(tags, list) or not isinstance(name, str):
        return []
    missing = [tag for tag in (*TOOL_CODE_TAGS, f"tool:{name}") if tag not in tags]
    if not missing:
        return []
    return [DocumentProblem(file, "$.tags", f"missing required tag(s): {', '.join(missing)}")]


def _rule_problems(context: dict[str, Any], file: str) -> list[DocumentProblem]:
    problems: list[DocumentProblem] = []
    input_schema: dict[str, Any] | None = None
    for label in ("input_schema", "output_schema"):
        schema = context.get(label)
        if isinstance(schema, dict):
            try:
                compile_schema(schema)
            except ValueError as exc:
                problems.append(DocumentProblem(file, f"$.context.{label}", str(exc)))
            else:
                input_schema = schema if label == "input_schema" else input_schema
    code = context.get("code")
    source = code.get("source") if isinstance(code, dict) else None
    if isinstance(source, str) and source and not _EXPORTS_EXECUTE.search(source):
        problems.append(
            DocumentProblem(file, "$.context.code.source", "the source must export a function named execute(input, context)")
        )
    problems.extend(_bootstrap_problems(context, input_schema, file))
    examples = context.get("examples")
    if input_schema is not None and isinstance(examples, list):
        for index, example in enumerate(examples):
            if isinstance(example, dict) and isinstance(example.get("input"), dict):
                path = f"$.context.examples[{index}].input"
                problems.extend(_input_problems(input_schema, example["input"], path, file))
    problems.extend(_ui_problems(context, file))
    return problems


def _input_problems(
    schema: dict[str, Any], value: dict[str, Any], path: str, file: str
) -> list[DocumentProblem]:
    return [
        DocumentProblem(file, f"{path}{issue.path[1:]}", f"does not match input_schema: {issue.message}")
        for issue in schema_issues(schema, value)
    ]


def _bootstrap_problems(
    context: dict[str, Any], input_schema: dict[str, Any] | None, file: str
) -> list[DocumentProblem]:
    bootstrap = context.get("bootstrap")
    if not isinstance(bootstrap, dict):
        return []
    problems: list[DocumentProblem] = []
    if bootstrap.get("enabled") is True and bootstrap.get("mode") == "disabled":
        problems.append(
            DocumentProblem(file, "$.context.bootstrap.mode",
                            "bootstrap is enabled but mode is 'disabled': set mode to 'once' or 'continuous'")
        )
    wait_for = bootstrap.get("wait_for")
    if isinstance(wait_for, list) and context.get("name") in wait_for:
        problems.append(DocumentProblem(file, "$.context.bootstrap.wait_for", "a tool cannot wait for itself"))
    # A bootstrap run passes this input unchanged (``{}`` when absent): a mismatch would otherwise show only
    # at start, as a failed run.
    runs = bootstrap.get("enabled") is True and bootstrap.get("mode") in ("once", "continuous")
    value = bootstrap.get("input", {} if runs else None)
    if input_schema is not None and isinstance(value, dict):
        problems.extend(_input_problems(input_schema, value, "$.context.bootstrap.input", file))
    return problems


def _ui_problems(context: dict[str, Any], file: str) -> list[DocumentProblem]:
    ui_schema = context.get("ui_schema")
    fields = ui_schema.get("config_fields") if isinstance(ui_schema, dict) else None
    if not isinstance(fields, list):
        return []
    problems: list[DocumentProblem] = []
    secrets = context.get("required_secrets")
    secret_names = {name for name in secrets if isinstance(name, str)} if isinstance(secrets, list) else set()
    seen: set[str] = set()
    for index, field in enumerate(fields):
        if not isinstance(field, dict) or not isinstance(field.get("name"), str):
            continue  # the schema reports it
        name = field["name"]
        path = f"$.context.ui_schema.config_fields[{index}]"
        if name in seen:
            problems.append(DocumentProblem(
                file, f"{path}.name", f"config field {name!r} is declared twice: give each field one entry"
            ))
        seen.add(name)
        # ui_schema is shown to every client of the catalog: a secret's value must never be written there.
        is_secret = name in secret_names or str(field.get("type", "")).lower() in SECRET_FIELD_TYPES
        for key in SECRET_VALUE_KEYS:
            if is_secret and field.get(key) not in (None, ""):
                problems.append(DocumentProblem(
                    file, f"{path}.{key}",
                    f"config field {name!r} is a secret and must not carry a value in the document"
                    " (the catalog shows ui_schema to every client): remove it and set the secret in the"
                    " node's environment or the [sandbox] secrets_file",
                ))
    return problems


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
