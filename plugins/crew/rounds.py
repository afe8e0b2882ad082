"""A round of tool calls from one model turn: hooks, then a commit with exactly one result per call.

::

    round = Round.from_outputs(turn, message_tool_calls)     # every call keeps the provider's id
    plan = await round.apply_hooks()                          # or apply_hooks(hook_set)
    plan = await plan.apply_hooks(audit_hooks)                # a second pass over the pending calls
    results = [await run(call) for call in plan.pending]      # or: await plan.execute(mesh)
    transcript.extend(plan.commit(results))

Recoverable issues — an unparseable call, a tool that is not offered this
turn, arguments that break the schema — become rejection results first, so
decision hooks only ever see calls of offered tools with validated
arguments.  Hooks then run in registration order (``RunNormally`` threads
edited arguments on, and they are validated again; ``Complete`` handles the
call; ``Reject`` rejects it); a hook that raises rejects that call with the
error and the round goes on.  Each decision is logged on the
``toolmesh.crew.tool_hook`` logger (DEBUG) with the tool, call id, decision
and the effective arguments (secret ones redacted).  ``commit`` accepts
results for the pending calls only and checks them: missing, extra,
duplicate and mismatched results are ``RoundCommitError``\\s; the committed
list holds one result per call, in the order of the calls.  A round is
committed or discarded once.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from toolmesh import Complete, Mesh, Reject, RunNormally, redact_arguments, schema_issues
from toolmesh.contracts import Caller, ToolResult, ToolSpec, encode

from .errors import ParseError, RoundCommitError, ToolRoundError
from .hook_set import DecisionHook, ToolHooks, as_tool_hooks
from .parsing import FinalAnswer, parse_agent_output
from .toolset import Turn

__all__ = ["DECISION_LOGGER", "REJECTION_PREFIX", "CallResult", "Round", "RoundPlan", "ToolCall"]

_log = logging.getLogger("toolmesh.crew")

DECISION_LOGGER = "toolmesh.crew.tool_hook"
"""The logger every hook decision is written to (DEBUG), like Lutum's ``lutum::tool_hook`` target."""

_decisions = logging.getLogger(DECISION_LOGGER)

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


def _hook_name(hook: DecisionHook) -> str:
    return getattr(hook, "__qualname__", None) or type(hook).__qualname__


def _log_decision(call: ToolCall, spec: ToolSpec | None, decision: str, hook: DecisionHook | None) -> None:
    if not _decisions.isEnabledFor(logging.DEBUG):
        return
    arguments = redact_arguments(spec, call.arguments) if spec is not None else call.arguments
    try:
        shown = encode(arguments).decode()
    except (TypeError, ValueError):  # a hook may put values that are not JSON into the arguments
        shown = repr(arguments)
    hook_name = _hook_name(hook) if hook is not None else None
    _decisions.debug(
        "tool hook decision tool=%s call_id=%s decision=%s hook=%s input=%s",
        call.name, call.id, decision, hook_name, shown,
        extra={
            "tool": call.name, "call_id": call.id, "decision": decision, "hook": hook_name, "input": shown
        },
    )


def _schema_problem(spec: ToolSpec, arguments: Any) -> str | None:
    if not isinstance(arguments, dict):
        return f"the arguments must be an object, got {type(arguments).__name__}"
    issues = schema_issues(spec.input_schema, arguments)
    return "; ".join(f"{issue.path}: {issue.message}" for issue in issues) or None


@dataclass
class RoundPlan:
    """The calls of a round sorted by what the hooks decided (Lutum's ``ToolRoundPlan``)."""

    calls: list[ToolCall]
    pending: list[ToolCall] = field(default_factory=list)
    handled: dict[str, CallResult] = field(default_factory=dict)
    rejected: dict[str, CallResult] = field(default_factory=dict)
    issues: dict[str, CallResult] = field(default_factory=dict)
    """Recoverable problems (unparseable call, unknown tool, invalid arguments) committed as rejections."""
    round: Round | None = None
    """The round this plan came from; committing or discarding the plan closes it."""

    @property
    def continue_suggestion(self) -> str | None:
        """A hint for the model when some calls had recoverable issues."""
        if not self.issues:
            return None
        return "Some tool calls could not run; read the rejection results, fix the calls and try again."

    def pending_calls(self) -> list[ToolCall]:
        """The calls that still need running by the caller."""
        return list(self.pending)

    def handled_calls(self) -> list[CallResult]:
        """The results of calls a hook completed."""
        return list(self.handled.values())

    def rejected_calls(self) -> list[CallResult]:
        """The rejection results of calls a hook rejected (or that raised in a hook)."""
        return list(self.rejected.values())

    def recoverable_tool_call_issues(self) -> list[CallResult]:
        """The rejection results of unparseable calls, unknown tools and invalid arguments."""
        return list(self.issues.values())

    async def apply_hooks(self, hooks: ToolHooks | DecisionHook) -> RoundPlan:
        """Another hook pass over the pending calls only; returns the new plan (this one is left as it is)."""
        self._check_open()
        turn = self.round.turn if self.round is not None else None
        plan = RoundPlan(
            calls=list(self.calls),
            handled=dict(self.handled),
            rejected=dict(self.rejected),
            issues=dict(self.issues),
            round=self.round,
        )
        deciding = as_tool_hooks(hooks)
        for call in self.pending:
            spec = turn.get(call.name) if turn is not None else None
            if spec is None:  # a plan built by hand: nothing to validate against, so nothing to decide
                plan.pending.append(call)
                continue
            await _decide(plan, call, spec, deciding.decision_hooks_for(call.name))
        plan._thread_edits()
        return plan

    def discard(self) -> None:
        """Drop the round without committing anything (Lutum's ``discard``): the round is closed."""
        self._check_open()
        if self.round is not None:
            self.round._close("discarded")

    def commit(self, results: Iterable[CallResult]) -> list[CallResult]:
        """Validate ``results`` for the pending calls and return one result per call, in call order."""
        self._check_open()
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
        missing = [call.id for call in self.pending if call.id not in given]
        if missing:
            raise RoundCommitError(
                f"no result for call(s) {', '.join(missing)}; commit exactly one result per pending call",
                "commit_missing",
            )
        committed = {**self.handled, **self.rejected, **self.issues, **given}
        if self.round is not None:
            self.round._close("committed")
        return [committed[call.id] for call in self.calls]

    async def execute(
        self, mesh: Mesh, *, caller: Caller | None = None, local_tools: Mapping[str, Any] | None = None
    ) -> list[CallResult]:
        """Run every pending call (local tools in-process, others through ``mesh``) and commit."""
        self._check_open()
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

    def _check_open(self) -> None:
        if self.round is not None:
            self.round._check_open()

    def _thread_edits(self) -> None:
        # arguments edited by RunNormally replace the originals in the plan's list of calls
        edited = {call.id: call for call in self.pending}
        self.calls = [edited.get(call.id, call) for call in self.calls]


async def _decide(plan: RoundPlan, call: ToolCall, spec: ToolSpec, hooks: list[DecisionHook]) -> None:
    """Run ``hooks`` on one validated call and file it as pending, handled or rejected."""
    for hook in hooks:
        try:
            decision = hook(call, spec)
            if inspect.isawaitable(decision):
                decision = await decision
        except Exception as exc:  # noqa: BLE001 - isolation boundary around a hook: it rejects its call only
            _log.warning(
                "tool hook %s failed on call %s of %s", _hook_name(hook), call.id, call.name, exc_info=True
            )
            plan.rejected[call.id] = CallResult.rejection(
                call, f"hook {_hook_name(hook)} failed: {type(exc).__name__}: {exc}", "hook_failed"
            )
            _log_decision(call, spec, "reject", hook)
            return
        if decision is None:
            _log_decision(call, spec, "run_normally", hook)
        elif isinstance(decision, RunNormally):
            problem = _schema_problem(spec, decision.arguments)
            if problem is not None:
                plan.rejected[call.id] = CallResult.rejection(
                    call,
                    f"hook {_hook_name(hook)} edited the arguments of {call.name!r} into ones its schema"
                    f" refuses: {problem}",
                    "invalid_arguments",
                )
                _log_decision(call, spec, "reject", hook)
                return
            call = replace(call, arguments=dict(decision.arguments))
            _log_decision(call, spec, "run_normally", hook)
        elif isinstance(decision, Complete):
            plan.handled[call.id] = CallResult(call.id, call.name, decision.result)
            _log_decision(call, spec, "complete", hook)
            return
        elif isinstance(decision, Reject):
            plan.rejected[call.id] = CallResult.rejection(call, decision.reason, decision.code.value)
            _log_decision(call, spec, "reject", hook)
            return
        else:
            plan.rejected[call.id] = CallResult.rejection(
                call,
                f"hook {_hook_name(hook)} returned {type(decision).__name__}; a hook returns RunNormally,"
                " Complete, Reject or None",
                "hook_failed",
            )
            _log_decision(call, spec, "reject", hook)
            return
    plan.pending.append(call)


class Round:
    """The tool calls of one model turn against a resolved ``Turn``."""

    def __init__(self, turn: Turn, calls: Iterable[ToolCall]) -> None:
        self.turn = turn
        self.calls = list(calls)
        self._closed: str | None = None
        ids = [call.id for call in self.calls]
        duplicates = sorted({call_id for call_id in ids if ids.count(call_id) > 1})
        if duplicates:
            raise RoundCommitError(f"the model reused call id(s) {', '.join(duplicates)}", "commit_duplicate")

    @classmethod
    def from_outputs(cls, turn: Turn, outputs: Iterable[str | Mapping[str, Any]]) -> Round:
        """Parse each output (function-call objects, JSON, ReAct); final answers are left out.

        Every call keeps the provider's id as given, readable or not; a call without one gets
        ``call_<position>`` (made unique against the provider's ids).  An unparseable call has the
        name it gave, if any, and becomes a ``parse_error`` issue.
        """
        parsed_calls: list[tuple[int, str | None, str, dict[str, Any]]] = []
        for index, output in enumerate(outputs):
            try:
                parsed = parse_agent_output(output)
            except ParseError as exc:
                parsed_calls.append((index, exc.call_id, exc.tool or "", {"__parse_error__": exc.message}))
                continue
            if isinstance(parsed, FinalAnswer):
                continue
            parsed_calls.append((index, parsed.call_id, parsed.tool, parsed.arguments))
        taken = {call_id for _, call_id, _, _ in parsed_calls if call_id is not None}
        calls = []
        for index, call_id, name, arguments in parsed_calls:
            if call_id is None:
                call_id = f"call_{index}"
                suffix = 1
                while call_id in taken:
                    call_id, suffix = f"call_{index}_{suffix}", suffix + 1
                taken.add(call_id)
            calls.append(ToolCall(call_id, name, arguments))
        return cls(turn, calls)

    def expect_one(self) -> ToolCall:
        """The round's only call; raises ``ToolRoundError`` (``unexpected_call_count``) otherwise."""
        self._check_open()
        if len(self.calls) != 1:
            raise ToolRoundError(
                f"expected exactly one tool call, the model made {len(self.calls)}"
                f"{self._listed()}; ask for one call or handle the round with apply_hooks"
            )
        return self.calls[0]

    def expect_at_most_one(self) -> ToolCall | None:
        """The round's call, or ``None`` when it has none; raises ``ToolRoundError`` for several."""
        self._check_open()
        if len(self.calls) > 1:
            raise ToolRoundError(
                f"expected at most one tool call, the model made {len(self.calls)}{self._listed()};"
                " ask for one call or handle the round with apply_hooks"
            )
        return self.calls[0] if self.calls else None

    def discard(self) -> None:
        """Drop the uncommitted round (Lutum's ``discard``): nothing is committed, and the round is closed."""
        self._check_open()
        self._close("discarded")

    def _close(self, how: str) -> None:
        self._closed = how

    @property
    def closed(self) -> bool:
        """True once the round was committed or discarded."""
        return self._closed is not None

    async def apply_hooks(self, hooks: ToolHooks | DecisionHook | None = None) -> RoundPlan:
        """Sort the calls into issues, then run the hooks (the toolset's when ``hooks`` is ``None``)."""
        self._check_open()
        deciding = as_tool_hooks(hooks) if hooks is not None else self.turn.toolset
        plan = RoundPlan(calls=list(self.calls), round=self)
        for call in self.calls:
            if "__parse_error__" in call.arguments:
                plan.issues[call.id] = CallResult.rejection(
                    call, call.arguments["__parse_error__"], "parse_error"
                )
                continue
            spec = self.turn.get(call.name)
            if spec is None:
                plan.issues[call.id] = CallResult.rejection(
                    call,
                    f"tool {call.name!r} is not available; use one of: {', '.join(self.turn.names)}",
                    "unknown_tool",
                )
                continue
            problem = _schema_problem(spec, call.arguments)
            if problem is not None:
                plan.issues[call.id] = CallResult.rejection(
                    call, f"invalid arguments for {call.name!r}: {problem}", "invalid_arguments"
                )
                continue
            await _decide(plan, call, spec, deciding.decision_hooks_for(call.name))
        plan._thread_edits()
        return plan

    def _listed(self) -> str:
        listed = ", ".join(f"{call.id}: {call.name or '(no name)'}" for call in self.calls)
        return f" ({listed})" if listed else ""

    def _check_open(self) -> None:
        if self._closed is not None:
            raise ToolRoundError(
                f"this round was already {self._closed}; a round is committed or discarded once",
                "round_closed",
            )
