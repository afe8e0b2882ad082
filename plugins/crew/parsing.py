"""Read an agent's output as a tool call or a final answer.

Accepted forms, tried in this order:

- a function-call object (``{"name", "arguments"}`` with arguments as an
  object or a JSON string; OpenAI ``{"function": {...}}``; Anthropic
  ``{"type": "tool_use", "name", "input"}``; crewAI ``{"tool_name", "arguments"}``),
  given as a mapping or as JSON text;
- ReAct text (``Action:`` / ``Action Input:``, crewAI's patterns) or
  ``Final Answer:``;
- a Python-literal dict (``{'name': 'add', 'arguments': {'a': 1}}``);
- malformed JSON, repaired with json-repair.

Arguments given as text go through crewAI's chain: JSON, Python literal, then
repaired JSON; they must end up as an object.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ParseError

try:  # the ``crew`` extra installs it; without it malformed JSON is not repaired
    from json_repair import repair_json

    HAS_JSON_REPAIR = True
except ImportError:  # pragma: no cover - exercised only without the extra
    HAS_JSON_REPAIR = False  # repair_json stays unbound: every use is behind this flag

__all__ = ["FinalAnswer", "ParsedCall", "parse_agent_output", "parse_arguments", "provider_call_id"]

FINAL_ANSWER = "Final Answer:"
_ACTION_INPUT = re.compile(r"Action\s*\d*\s*:\s*(.*?)\s*Action\s*\d*\s*Input\s*\d*\s*:\s*(.*)", re.DOTALL)
_ACTION = re.compile(r"Action\s*\d*\s*:\s*(.*?)", re.DOTALL)
_ACTION_INPUT_ONLY = re.compile(r"\s*Action\s*\d*\s*Input\s*\d*\s*:\s*(.*)", re.DOTALL)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")

MISSING_ACTION = (
    "I did it wrong. Invalid Format: I missed the 'Action:' after 'Thought:'. I will do right next,"
    " and don't use a tool I have already used."
)
MISSING_ACTION_INPUT = (
    "I did it wrong. Invalid Format: I missed the 'Action Input:' after 'Action:'. I will do right next,"
    " and don't use a tool I have already used."
)
ARGUMENTS_NOT_OBJECT = "Tool input must be a valid dictionary in JSON or Python literal format"


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """A tool call read from an agent's output: the name as written and the arguments object."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    form: str = "json"
    """How it was written: ``function``, ``json``, ``react``, ``python`` or ``repaired``."""
    thought: str = ""


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    """The agent finished its turn with this answer."""

    output: str
    thought: str = ""


def _arguments_from_text(text: str) -> tuple[dict[str, Any], bool]:
    """Arguments from text; the flag tells whether json-repair was needed."""
    stripped = text.strip()
    if not stripped:
        return {}, False
    try:
        value = json.loads(stripped)
        if isinstance(value, dict):
            return value, False
    except ValueError:
        pass
    try:
        value = ast.literal_eval(stripped)
        if isinstance(value, dict):
            return value, False
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    repaired = repair_json(stripped, return_objects=True) if HAS_JSON_REPAIR else None
    if isinstance(repaired, dict) and (repaired or stripped.startswith("{")):
        return repaired, True
    raise ParseError(ARGUMENTS_NOT_OBJECT)


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """The arguments of a call as an object: a mapping as is, text through JSON / literal / repair."""
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str):
        return _arguments_from_text(arguments)[0]
    raise ParseError(f"{ARGUMENTS_NOT_OBJECT}; got a {type(arguments).__name__}")


def provider_call_id(data: Mapping[str, Any]) -> str | None:
    """The provider's id of a function-call object, as given: ``call_id`` (OpenAI Responses), else ``id``."""
    for key in ("call_id", "id"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _call_from_mapping(data: Mapping[str, Any], form: str) -> ParsedCall:
    call_id = provider_call_id(data)
    if isinstance(data.get("function"), Mapping):  # OpenAI tool_calls item
        data = data["function"]
        form = "function"
    name = data.get("name", data.get("tool_name", data.get("tool")))
    if not isinstance(name, str) or not name.strip():
        raise ParseError(
            'The tool call has no tool name. Write {"name": "<tool>", "arguments": {...}} or use'
            " Action: / Action Input:.",
            call_id=call_id,
        )
    if "input" in data and "arguments" not in data:  # Anthropic tool_use
        raw = data["input"]
        form = "function"
    else:
        raw = data.get("arguments", data.get("args", data.get("tool_input")))
    try:
        if isinstance(raw, str):
            arguments, repaired = _arguments_from_text(raw)
            form = "repaired" if repaired else form
        else:
            arguments = parse_arguments(raw)
    except ParseError as exc:
        raise ParseError(exc.message, tool=name.strip(), call_id=call_id) from None
    return ParsedCall(tool=name.strip(), arguments=arguments, call_id=call_id, form=form)


def _parse_react(text: str) -> ParsedCall | FinalAnswer:
    index = text.find("\nAction")
    if index == -1:
        index = text.find("\nFinal Answer")
    thought = text[:index].strip().replace("```", "").strip() if index != -1 else ""
    thought = "" if thought.startswith("Action") else thought
    if FINAL_ANSWER in text:
        if _ACTION_INPUT.search(text.split(FINAL_ANSWER)[0]):
            raise ParseError(
                "I did it wrong. Tried to both perform Action and give a Final Answer at the same time,"
                " I must do one or the other"
            )
        answer = text.split(FINAL_ANSWER)[-1].strip()
        if answer.endswith("```") and answer.count("```") % 2:
            answer = answer[:-3].rstrip()
        return FinalAnswer(output=answer, thought=thought)
    match = _ACTION_INPUT.search(text)
    if match is None:
        if not _ACTION.search(text):
            raise ParseError(MISSING_ACTION)
        if not _ACTION_INPUT_ONLY.search(text):
            raise ParseError(MISSING_ACTION_INPUT)
        raise ParseError(MISSING_ACTION)
    name = match.group(1).strip().strip("*").strip()
    raw = match.group(2).strip()
    raw = _FENCE.sub("", raw).strip()
    # Stop at an Observation the model hallucinated after its input.
    raw = (
        raw.split("\nObservation")[0].strip().strip('"')
        if not raw.startswith("{")
        else raw.split("\nObservation")[0].strip()
    )
    try:
        arguments, repaired = _arguments_from_text(raw.replace('"""', '"'))
    except ParseError as exc:
        raise ParseError(exc.message, tool=name) from None
    return ParsedCall(
        tool=name, arguments=arguments, form="repaired" if repaired else "react", thought=thought
    )


def parse_agent_output(output: str | Mapping[str, Any]) -> ParsedCall | FinalAnswer:
    """Read one agent output; raises ``ParseError`` with a message the agent can act on."""
    if isinstance(output, Mapping):
        return _call_from_mapping(output, "function")
    if not isinstance(output, str):
        raise ParseError(
            f"Expected the agent's output as text or a function-call object, got {type(output).__name__}"
        )
    text = output.strip()
    if not text:
        raise ParseError(MISSING_ACTION)
    unfenced = _FENCE.sub("", text).strip()
    if unfenced.startswith("{"):
        try:
            value = json.loads(unfenced)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return _call_from_mapping(value, "json")
        try:
            value = ast.literal_eval(unfenced)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = None
        if isinstance(value, dict):
            return _call_from_mapping(value, "python")
        if "Action" not in unfenced:
            repaired = repair_json(unfenced, return_objects=True) if HAS_JSON_REPAIR else None
            if isinstance(repaired, dict) and repaired:
                return _call_from_mapping(repaired, "repaired")
    return _parse_react(text)
