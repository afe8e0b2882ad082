"""A round of tool calls from one model turn: hooks, then a commit with exactly one result per call.

::

    round = Round.from_outputs(turn, message_tool_calls)
    plan = await round.apply_hooks()
    results = [await run(call) for call in plan.pending]      # or: await plan.execute(mesh)
    transcript.extend(plan.commit(results))

``apply_hooks`` runs the toolset's decision hooks in registration order
(``RunNormally`` threads edited arguments on, ``Complete`` handles the call,
``Reject`` rejects it) and turns recoverable issues — a tool that is not
offered this turn, arguments that break the schema — into rejection results.
``commit`` accepts results for the pending calls only and checks them:
missing, extra, duplicate and mismatched results are ``RoundCommitError``\\s;
the committed list holds one result per call, in the order of the calls.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from toolmesh import Complete, Mesh, Reject, RunNormally, schema_issues
from toolmesh.contracts import Caller, ToolResult

from .errors import ParseError, RoundCommitError
from .parsing import FinalAnswer, parse_agent_output
from .toolset import Turn

__all__ = ["REJECTION_PREFIX", "CallResult", "Round", "RoundPlan", "ToolCall"]

_log = logging.getLogger("toolmesh.crew")

REJECTION_PREFIX = "Tool call rejected: "
"""The start of every rejection result, so the model recognizes one."""


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for: its id (unique in the round), tool name and arguments."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallResult:
    """The result committed for one call; ``content`` is what the model reads."""

    call_id: str
    tool: str
    content: Any
    is_error: bool = False
    rejected: bool = False
    code: str | None = None

    @classmethod
    def rejection(cls, call: ToolCall, reason: str, code: str = "rejected") -> CallResult:
        """The standard rejection result for ``call``."""
        return cls(call.id, call.name, REJECTION_PREFIX + reason, is_error=True, rejected=True, code=code)

    @classmethod
    def from_tool_result(cls, call: ToolCall, result: ToolResult) -> CallResult:
        """Wrap a mesh ``ToolResult`` (error text on failure, else structured content or text)."""
        if result.is_error:
            code = result.error.code.value if result.error else None
            return cls(call.id, call.name, result.text, is_error=True, code=code)
        content = result.structured_content if result.structured_content is not None else result.text
        return cls(call.id, call.name, content)


@dataclass
class RoundPlan:
    """The calls of a round sorted by what the hooks decided."""

    calls: list[ToolCall]
    pending: list[ToolCall] = field(default_factory=list)
    handled: dict[str, CallResult] = field(default_factory=dict)
    rejected: dict[str, CallResult] = field(default_factory=dict)
    issues: dict[str, CallResult] = field(default_factory=dict)
    """Recoverable problems (unknown tool, invalid arguments) committed as rejections."""

    @property
    def continue_suggestion(self) -> str | None:
        """A hint for the model when some calls had recoverable issues."""
        if not self.issues:
            return None
        return "Some tool calls could not run; read the rejection results, fix the calls and try again."

    def commit(self, results: Iterable[CallResult]) -> list[CallResult]:
        """Validate ``results`` for the pending calls and return one result per call, in call order."""
        by_id = {call.id: call for call in self.calls}
        pending = {call.id for call in self.pending}
        given: dict[str, CallResult] = {}
        for result in results:
            call = by_id.get(result.call_id)
            if call is None:
                raise RoundCommitError(
                    f"result for call {result.call_id!r}, which is not in this round (calls:"
                    f" {', '.join(by_id) or 'none'}); commit only results of the round's calls",
                    "commit_extra",
                )
            if result.call_id in given:
                raise RoundCommitError(
                    f"two results for call {result.call_id!r}; commit exactly one per call",
                    "commit_duplicate",
                )
            if result.tool != call.name:
                raise RoundCommitError(
                    f"the result for call {result.call_id!r} names tool {result.tool!r}, but the call was to"
                    f" {call.name!r}",
                    "commit_mismatched",
                )
            if result.call_id not in pending and result.call_id not in self.issues:
                raise RoundCommitError(
                    f"call {result.call_id!r} was already handled or rejected by a hook;"
                    " do not commit a result"
                    " for it",
                    "commit_extra",
                )
            given[result.call_id] = result
        missing = [call_id for call_id in pending if call_id not in given]
        if missing:
            raise RoundCommitError(
                f"no result for call(s) {', '.join(missing)}; commit exactly one result per pending call",
                "commit_missing",
            )
        committed = {**self.handled, **self.rejected, **self.issues, **given}
        return [committed[call.id] for call in self.calls]

    async def execute(
        self, mesh: Mesh, *, caller: Caller | None = None, local_tools: Mapping[str, Any] | None = None
    ) -> list[CallResult]:
        """Run every pending call (local tools in-process, others through ``mesh``) and commit."""
        results = []
        for call in self.pending:
            local = (local_tools or {}).get(call.name)
            if local is not None:
                try:
                    results.append(CallResult(call.id, call.name, await local.run(call.arguments)))
                except Exception as exc:  # noqa: BLE001 - isolation boundary around a local tool
                    _log.warning("local tool %s failed: %r", call.name, exc, exc_info=True)
                    results.append(
                        CallResult(
                            call.id,
                            call.name,
                            f"{type(exc).__name__}: {exc}",
                            is_error=True,
                            code="execution_failed",
                        )
                    )
                continue
            result = await mesh.call(call.name, call.arguments, caller=caller)
            results.append(CallResult.from_tool_result(call, result))
        return self.commit(results)


class Round:
    """The tool calls of one model turn against a resolved ``Turn``."""

    def __init__(self, turn: Turn, calls: Iterable[ToolCall]) -> None:
        self.turn = turn
        self.calls = list(calls)
        ids = [call.id for call in self.calls]
        duplicates = sorted({call_id for call_id in ids if ids.count(call_id) > 1})
        if duplicates:
            raise RoundCommitError(f"the model reused call id(s) {', '.join(duplicates)}", "commit_duplicate")

    @classmethod
    def from_outputs(cls, turn: Turn, outputs: Iterable[str | Mapping[str, Any]]) -> Round:
        """Parse each output (function-call objects, JSON, ReAct); unparseable ones get ids and no name."""
        calls = []
        for index, output in enumerate(outputs):
            try:
                parsed = parse_agent_output(output)
            except ParseError as exc:
                calls.append(ToolCall(f"call_{index}", exc.tool or "", {"__parse_error__": exc.message}))
                continue
            if isinstance(parsed, FinalAnswer):
                continue
            calls.append(ToolCall(parsed.call_id or f"call_{index}", parsed.tool, parsed.arguments))
        return cls(turn, calls)

    async def apply_hooks(self) -> RoundPlan:
        """Run the decision hooks and sort the calls into pending, handled, rejected and issues."""
        plan = RoundPlan(calls=self.calls)
        for call in self.calls:
            spec = self.turn.get(call.name)
            if "__parse_error__" in call.arguments:
                plan.issues[call.id] = CallResult.rejection(
                    call, call.arguments["__parse_error__"], "parse_error"
                )
                continue
            if spec is None:
                plan.issues[call.id] = CallResult.rejection(
                    call,
                    f"tool {call.name!r} is not available; use one of: {', '.join(self.turn.names)}",
                    "unknown_tool",
                )
                continue
            for hook in self.turn.toolset.decision_hooks_for(call.name):
                decision = hook(call, spec)
                if inspect.isawaitable(decision):
                    decision = await decision
                if isinstance(decision, RunNormally):
                    call = replace(call, arguments=decision.arguments)
                elif isinstance(decision, Complete):
                    plan.handled[call.id] = CallResult(call.id, call.name, decision.result)
                    break
                elif isinstance(decision, Reject):
                    plan.rejected[call.id] = CallResult.rejection(call, decision.reason, decision.code.value)
                    break
            else:
                issues = schema_issues(spec.input_schema, call.arguments)
                if issues:
                    described = "; ".join(f"{issue.path}: {issue.message}" for issue in issues)
                    plan.issues[call.id] = CallResult.rejection(
                        call, f"invalid arguments for {call.name!r}: {described}", "invalid_arguments"
                    )
                else:
                    plan.pending.append(call)
        # edited arguments thread into the plan's calls
        edited = {call.id: call for call in plan.pending}
        plan.calls = [edited.get(call.id, call) for call in self.calls]
        return plan
