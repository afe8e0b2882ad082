"""Replay a scripted agent against the mesh: each script line is one agent output.

A script is JSON lines.  Each line is a string (ReAct text or JSON) or an
object: ``{"output": <string or function-call object>, "agent": ..., "task": ...}``,
or a function-call object itself (``{"name": ..., "arguments": ...}``) with
optional ``agent`` and ``task`` keys.  Blank lines and lines starting with
``//`` are skipped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmesh.contracts import ErrorCode

from .errors import CrewError
from .tool_usage import Observation, ToolUsage

__all__ = ["ReplayStep", "ScriptError", "ScriptLine", "read_script", "replay"]


class ScriptError(CrewError, ValueError):
    """A script line is not JSON or not one of the accepted shapes; the message names the line."""

    code = "script_error"  # type: ignore[assignment]  # the crew's own code, as in CrewError
    crew_wire_code = ErrorCode.BAD_REQUEST


@dataclass(frozen=True)
class ScriptLine:
    """One agent output of a script, with who produced it."""

    number: int
    output: str | dict[str, Any]
    agent: str | None = None
    task: str | None = None


@dataclass(frozen=True)
class ReplayStep:
    """A script line and the observation the agent would receive."""

    line: ScriptLine
    observation: Observation

    def as_dict(self) -> dict[str, Any]:
        """One JSON line of ``toolmesh crew replay --json``."""
        return {
            "line": self.line.number,
            "agent": self.line.agent,
            "task": self.line.task,
            **self.observation.as_dict(),
        }


def parse_script(lines: Iterable[str]) -> list[ScriptLine]:
    """Read script lines; raises ``ScriptError`` naming the first bad line."""
    script = []
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("//"):
            continue
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ScriptError(
                f"line {number}: not JSON ({exc}); write each agent output as a JSON string or object"
            ) from None
        if isinstance(value, str):
            script.append(ScriptLine(number, value))
        elif isinstance(value, dict):
            agent, task = value.pop("agent", None), value.pop("task", None)
            output = value.pop("output") if "output" in value else value
            if not isinstance(output, (str, dict)):
                raise ScriptError(f"line {number}: 'output' must be a string or a function-call object")
            script.append(
                ScriptLine(
                    number, output, None if agent is None else str(agent), None if task is None else str(task)
                )
            )
        else:
            raise ScriptError(f"line {number}: expected a string or an object, got {type(value).__name__}")
    return script


def read_script(path: Path) -> list[ScriptLine]:
    """Read a script file; raises ``ScriptError`` (also for a missing file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_script(text.splitlines())


async def replay(usage: ToolUsage, script: Iterable[ScriptLine]) -> AsyncIterator[ReplayStep]:
    """Feed each line to ``usage`` in order and yield what the agent would observe."""
    for line in script:
        observation = await usage.use(line.output, agent=line.agent, task=line.task)
        yield ReplayStep(line, observation)
