"""``ToolUsage``: crewAI's tool-usage lifecycle over a mesh.

parse → select → validate → guard → (cache | execute) → events → answer.
An agent's raw output goes in; an :class:`Observation` — the result, or an
error written for the agent to correct itself — comes out.  Nothing here
raises for a bad call.

::

    async with Mesh(settings=settings) as mesh:
        usage = await ToolUsage.connect(mesh)
        observation = await usage.use('Action: add\\nAction Input: {"a": 1, "b": 2}', agent="researcher")
        print(observation.text)
"""

from __future__ import annotations

import datetime
import functools
import logging
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from toolmesh import Mesh, cache_key, redact_arguments, redact_issues, result_from_value, schema_issues
from toolmesh.contracts import (
    RETRYABLE_CODES,
    Caller,
    ErrorCode,
    ToolError,
    ToolEvent,
    ToolResult,
    ToolSpec,
    encode,
)

from .agent_tools import ASK_QUESTION, DELEGATE_WORK
from .cache import CrewCache, ShouldCache, spec_should_cache
from .errors import CrewError, ParseError, ToolSelectionError, ToolUsageLimitExceeded
from .events import AgentInfo, EventEmitter, TaskInfo, base_attributes, security_context
from .local_tools import HIT_CACHE, LocalTool
from .observation import Observation
from .parsing import FinalAnswer, ParsedCall, parse_agent_output
from .prompts import (
    REPEATED_USAGE,
    TOOLS_REMINDER,
    describe_tool,
    describe_tools,
    format_reminder,
    tool_names,
)
from .selection import ToolSelector
from .usage import UsageLedger
from .verbose import print_tool_event

__all__ = ["OPENAI_BIGGER_MODELS", "Observation", "ToolUsage"]

_log = logging.getLogger("toolmesh.crew")

OPENAI_BIGGER_MODELS = frozenset({"gpt-4", "gpt-4o", "o1-preview", "o1-mini", "o1", "o3", "o3-mini"})
"""Models that get 2 parsing attempts and a format reminder every 4 uses (others: 3 and 3)."""

@functools.lru_cache(maxsize=1024)
def _agent_named(role: str) -> AgentInfo:
    return AgentInfo(role=role)


@functools.lru_cache(maxsize=1024)
def _task_named(task: str) -> TaskInfo:
    return TaskInfo(id=task)


def _agent(agent: AgentInfo | str | None) -> AgentInfo | None:
    return _agent_named(agent) if isinstance(agent, str) else agent


def _task(task: TaskInfo | str | None) -> TaskInfo | None:
    return _task_named(task) if isinstance(task, str) else task


def _result_text(result: ToolResult) -> str:
    text = result.text
    if text or result.structured_content is None:
        return text
    return encode(result.structured_content).decode()


class ToolUsage:
    """The lifecycle for the agents of one crew: tools, cache, usage counts, events."""

    def __init__(
        self,
        mesh: Mesh | None,
        tools: Iterable[ToolSpec] = (),
        *,
        local_tools: Iterable[LocalTool] = (),
        cache: CrewCache | bool | None = True,
        ledger: UsageLedger | None = None,
        emitter: EventEmitter | None = None,
        model: str | None = None,
        should_cache: Mapping[str, ShouldCache] | None = None,
        crew: str | None = None,
        timeout: float | None = None,
        verbose: bool = False,
        verbose_stream: TextIO | None = None,
    ) -> None:
        """``cache``: a ``CrewCache``, ``True`` (the default, as crewAI's ``Crew(cache=True)``) for a new
        in-process one, ``False``/``None`` for none.  ``verbose`` prints each tool use to
        ``verbose_stream`` (standard output unless given), as crewAI's verbose agents do."""
        self.mesh = mesh
        self.local_tools = {tool.spec.name: tool for tool in local_tools}
        self.cache: CrewCache | None = (
            CrewCache() if cache is True else None if cache is False or cache is None else cache
        )
        self.run_cache: CrewCache | None = CrewCache() if self.cache is not None else None
        """Results of tools without a ``CachePolicy``: kept for this crew run, in this process only."""
        self.ledger = ledger or UsageLedger()
        self.emitter = emitter or EventEmitter(
            mesh.nc if mesh is not None else None, mesh.subjects if mesh is not None else None
        )
        self.model = model
        self.max_parsing_attempts = 2 if model in OPENAI_BIGGER_MODELS else 3
        self.remember_format_after_usages = 4 if model in OPENAI_BIGGER_MODELS else 3
        self.should_cache: dict[str, ShouldCache] = dict(should_cache or {})
        self.crew = crew
        self.timeout = timeout
        self._parse_failures: Counter[str] = Counter()
        self._used_tools: Counter[tuple[str, str]] = Counter()
        self.tools_errors: Counter[str] = Counter()
        self.delegations: Counter[str] = Counter()
        self._only = False
        self.verbose = verbose
        self.verbose_stream = verbose_stream
        self.emitter.listeners.append(self._print_event)
        self.set_tools(tools)

    @classmethod
    async def connect(
        cls,
        mesh: Mesh,
        *,
        only: Iterable[str] | None = None,
        shared_cache: bool = True,
        **options: Any,
    ) -> ToolUsage:
        """A ``ToolUsage`` over the mesh's catalog (or the tools in ``only``), with the shared crew cache."""
        specs = await mesh.list_tools()
        if only is not None:
            wanted = set(only)
            specs = [spec for spec in specs if spec.name in wanted]
        if shared_cache and options.get("cache", True) is True and mesh.nc is not None:
            options["cache"] = await CrewCache.shared(mesh.nc, mesh.subjects.prefix)
        usage = cls(mesh, specs, **options)
        usage._only = only is not None
        return usage

    def set_tools(self, tools: Iterable[ToolSpec]) -> None:
        """Replace the mesh tools offered to agents (local tools stay)."""
        specs = [tool.spec for tool in self.local_tools.values()]
        specs += [spec for spec in tools if spec.name not in self.local_tools]
        self.tools = specs
        self._spec_policies = {spec.name: policy for spec in specs if (policy := self._spec_policy(spec))}
        self.selector = ToolSelector(specs)
        self.tools_description = describe_tools(specs)
        self.tool_names = tool_names(specs)

    @staticmethod
    def _spec_policy(spec: ToolSpec) -> ShouldCache | None:
        try:
            return spec_should_cache(spec)
        except ValueError:
            return lambda arguments, result: False  # an unreadable policy caches nothing

    def cache_for(self, spec: ToolSpec) -> CrewCache | None:
        """Where results of ``spec`` are cached: ``cache`` for tools with a ``CachePolicy`` (shared
        by the mesh's clients for its TTL), ``run_cache`` for the others, ``None`` when off."""
        # crewAI caches every tool unless its cache_function says no, for the crew run: a tool that
        # declared no CachePolicy gets that, and only that, so its results do not outlive the run or
        # reach other crews; CachePolicy(enabled=False) opts a tool out.
        if self.cache is None or spec.name == HIT_CACHE:
            return None
        if spec.cache is None:
            return self.run_cache
        return self.cache if spec.cache.enabled else None

    def cache_policy(self, tool: str) -> ShouldCache | None:
        """The should-cache policy of ``tool``: given in code, else declared in its spec."""
        return self.should_cache.get(tool) or self._spec_policies.get(tool)

    async def refresh(self) -> None:
        """Re-read the mesh's catalog (tools that appeared or left since ``connect``)."""
        if self.mesh is not None:
            only = {spec.name for spec in self.tools} if self._only else None
            specs = await self.mesh.list_tools()
            self.set_tools([spec for spec in specs if only is None or spec.name in only])

    def reset_usage(self, tool: str | None = None) -> None:
        """Forget the usage counts of ``tool`` (crewAI's ``reset_usage_count``), or of all tools if ``None``.

        Resetting one tool leaves the other tools' counts and every agent's last call as they are;
        resetting all also forgets the last calls (a new crew run).
        """
        known = tool is None or tool in self.ledger.total or any(spec.name == tool for spec in self.tools)
        if not known:
            raise ToolSelectionError(
                f"no tool named {tool!r} to reset; these are the tools:\n{self.tools_description}"
            )
        self.ledger.reset(tool)

    async def close(self) -> None:
        """Stop the shared cache's mirror."""
        if self.cache is not None:
            await self.cache.close()

    # -------------------------------------------------------------- the lifecycle

    async def use(
        self,
        output: str | Mapping[str, Any],
        *,
        agent: AgentInfo | str | None = None,
        task: TaskInfo | str | None = None,
    ) -> Observation:
        """Run one agent output through the lifecycle and return what the agent observes."""
        agent_info, task_info = _agent(agent), _task(task)
        events: list[ToolEvent] = []
        try:
            parsed = parse_agent_output(output)
        except ParseError as exc:
            return await self._parse_failure(exc, agent_info, task_info, output, events)
        who = agent_info.role if agent_info else ""
        self._parse_failures[who] = 0
        if isinstance(parsed, FinalAnswer):
            return Observation(text=parsed.output, is_answer=True, final_answer=True)
        try:
            spec = self.selector.select(parsed.tool)
        except ToolSelectionError as exc:
            self.tools_errors[who] += 1
            attributes = base_attributes(
                agent_info, task_info, parsed.tool, {}, tool_class="ToolSelector", run_attempts=1
            )
            attributes["error"] = exc.message
            events.append(
                await self.emitter.emit(
                    "tool_selection_error", parsed.tool, attributes, error_code=ErrorCode.UNKNOWN_TOOL
                )
            )
            return Observation(
                text=exc.message, code=exc.code, tool=parsed.tool, arguments=parsed.arguments, events=events
            )
        return await self._use_tool(spec, parsed, agent_info, task_info, events)

    async def _parse_failure(
        self,
        exc: ParseError,
        agent: AgentInfo | None,
        task: TaskInfo | None,
        output: Any,
        events: list[ToolEvent],
    ) -> Observation:
        who = agent.role if agent else ""
        self._parse_failures[who] += 1
        attempts = self._parse_failures[who]
        self.tools_errors[who] += 1
        if exc.tool is not None:
            attributes = base_attributes(
                agent, task, exc.tool, str(output), tool_class="ToolUsage", run_attempts=attempts
            )
            attributes["error"] = exc.message
            events.append(
                await self.emitter.emit(
                    "tool_validate_input_error", exc.tool, attributes, error_code=ErrorCode.INVALID_ARGUMENTS
                )
            )
        reminder = format_reminder(self.tools)
        if attempts >= self.max_parsing_attempts:
            self._parse_failures[who] = 0
            text = f"I encountered an error: {exc.message}\nMoving on then. {reminder}"
        else:
            text = f"{exc.message}\n{reminder}"
        return Observation(text=text, code=exc.code, tool=exc.tool, events=events)

    def _arguments_for(self, spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
        # crewAI passes only the arguments the schema declares when it forbids others.
        properties = spec.input_schema.get("properties")
        if properties and spec.input_schema.get("additionalProperties") is False:
            return {key: value for key, value in arguments.items() if key in properties}
        return arguments

    async def _use_tool(
        self,
        spec: ToolSpec,
        parsed: ParsedCall,
        agent: AgentInfo | None,
        task: TaskInfo | None,
        events: list[ToolEvent],
    ) -> Observation:
        who = agent.role if agent else ""
        arguments = self._arguments_for(spec, parsed.arguments)
        observation = Observation(text="", tool=spec.name, arguments=arguments, events=events)
        if not spec.available:
            observation.code = ErrorCode.UNAVAILABLE.value
            observation.text = (
                f"Tool '{spec.name}' is unavailable: {spec.unavailable_reason or 'no reason given'}."
                f" Use another tool.\n{format_reminder(self.tools)}"
            )
            return observation
        issues = schema_issues(spec.input_schema, arguments)
        if issues:
            # error texts quote values; secret ones must not leak
            issues = redact_issues(spec, arguments, issues)
            described = "; ".join(f"{issue.path}: {issue.message}" for issue in issues)
            attributes = base_attributes(
                agent,
                task,
                spec.name,
                redact_arguments(spec, arguments),
                tool_class=spec.source or "ToolSpec",
                run_attempts=1,
            )
            attributes["error"] = described
            events.append(
                await self.emitter.emit(
                    "tool_validate_input_error", spec.name, attributes, error_code=ErrorCode.INVALID_ARGUMENTS
                )
            )
            self.tools_errors[who] += 1
            observation.code = ErrorCode.INVALID_ARGUMENTS.value
            observation.text = (
                "I encountered an error while trying to use the tool. This was the error:"
                " Arguments validation"
                f" failed: {described}.\n Tool {spec.name} accepts these inputs: {describe_tool(spec)}"
            )
            return observation
        if self.ledger.is_repeat(spec, who, arguments):
            observation.code = "repeated_call"
            observation.text = self._format(REPEATED_USAGE, who, task)
            return observation
        return await self._execute(spec, arguments, agent, task, observation)

    async def _execute(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        agent: AgentInfo | None,
        task: TaskInfo | None,
        observation: Observation,
    ) -> Observation:
        who = agent.role if agent else ""
        events = observation.events
        delegations = self.delegations[task.id if task else ""]
        started_at = time.time()
        attributes = base_attributes(
            agent,
            task,
            spec.name,
            redact_arguments(spec, arguments),  # events travel on NATS: secret arguments stay out
            tool_class=spec.source or "ToolSpec",
            run_attempts=1,
            delegations=delegations,
        )
        events.append(await self.emitter.emit("tool_usage_started", spec.name, dict(attributes)))

        key = None
        cached: ToolResult | None = None
        cache = self.cache_for(spec)
        if cache is not None:
            key = cache_key(spec.name, arguments)
            cached = cache.get(key)
        try:
            self.ledger.claim(spec, who)
        except ToolUsageLimitExceeded as exc:
            observation.code = exc.code
            observation.text = self._format(exc.message, who, task)
            return await self._finished(observation, attributes, started_at, from_cache=False)
        if cached is not None:
            self.ledger.release(spec, who)
            observation.result = cached
            observation.from_cache = True
            observation.text = self._format(_result_text(cached), who, task)
            return await self._finished(observation, attributes, started_at, from_cache=True)

        attempts = 0
        while True:
            attempts += 1
            result = await self._run(spec, arguments, agent, task)
            if not result.is_error:
                break
            error = result.error
            error_attributes = dict(
                attributes, run_attempts=attempts, error=error.message if error else result.text
            )
            events.append(
                await self.emitter.emit(
                    "tool_usage_error",
                    spec.name,
                    error_attributes,
                    request_id=result.id,
                    error_code=error.code if error else None,
                )
            )
            retry = error is not None and error.code in RETRYABLE_CODES
            if not retry or attempts >= self.max_parsing_attempts:
                self.ledger.release(spec, who)
                self.tools_errors[who] += 1
                observation.result = result
                observation.code = error.code.value if error else ErrorCode.EXECUTION_FAILED.value
                if error is not None and error.details and "crew_code" in error.details:
                    observation.code = str(error.details["crew_code"])
                message = error.message if error else result.text
                observation.text = (
                    f"\nI encountered an error while trying to use the tool. This was the error: {message}.\n"
                    f" Tool {spec.name} accepts these inputs: {describe_tool(spec)}.\n"
                    f"Moving on then. {format_reminder(self.tools)}"
                )
                return observation

        self.ledger.remember(spec, who, arguments)
        if spec.name in (DELEGATE_WORK, ASK_QUESTION):
            self.delegations[task.id if task else ""] += 1
        observation.result = result
        if key is not None and cache is not None:
            policy = self.cache_policy(spec.name)
            if policy is None or policy(arguments, result):
                await cache.put(key, result, spec.cache.ttl if spec.cache is not None else None)
        observation.is_answer = spec.result_as_answer
        text = _result_text(result)
        observation.text = text if spec.result_as_answer else self._format(text, who, task)
        attributes["run_attempts"] = attempts
        return await self._finished(observation, attributes, started_at, from_cache=False)

    async def _run(
        self, spec: ToolSpec, arguments: dict[str, Any], agent: AgentInfo | None, task: TaskInfo | None
    ) -> ToolResult:
        local = self.local_tools.get(spec.name)
        if local is not None:
            try:
                value = await local.run(arguments)
                return result_from_value("", spec.name, value)
            except CrewError as exc:
                return ToolResult.failure("", spec.name, exc.to_tool_error())
            except Exception as exc:  # noqa: BLE001 - isolation boundary around a local tool: a failed call
                _log.warning("local tool %s failed: %r", spec.name, exc, exc_info=True)
                return ToolResult.failure(
                    "", spec.name, _tool_error(ErrorCode.EXECUTION_FAILED, f"{type(exc).__name__}: {exc}")
                )
        if self.mesh is None:
            return ToolResult.failure(
                "",
                spec.name,
                _tool_error(ErrorCode.UNAVAILABLE, "this ToolUsage has no mesh to call tools on"),
            )
        caller = Caller(agent=agent.role if agent else None, task=task.id if task else None, crew=self.crew)
        # A should_cache policy runs here, not on the node: keep the node's own cache out of such calls.
        cache = False if self.cache_policy(spec.name) is not None else None
        return await self.mesh.call(
            spec.name,
            arguments,
            caller=caller,
            timeout=self.timeout,
            cache=cache,
            meta=security_context(agent, task),
        )

    async def _finished(
        self, observation: Observation, attributes: dict[str, Any], started_at: float, *, from_cache: bool
    ) -> Observation:
        finished_at = time.time()
        attributes = dict(
            attributes,
            started_at=datetime.datetime.fromtimestamp(started_at, datetime.UTC).isoformat(),
            finished_at=datetime.datetime.fromtimestamp(finished_at, datetime.UTC).isoformat(),
            from_cache=from_cache,
            output=observation.text,
        )
        if observation.is_answer:
            attributes["result_as_answer"] = True
        tool = observation.tool or ""
        observation.events.append(
            await self.emitter.emit(
                "tool_usage_finished",
                tool,
                attributes,
                request_id=observation.result.id if observation.result else None,
                duration_ms=(finished_at - started_at) * 1000.0,
            )
        )
        return observation

    def _print_event(self, event: ToolEvent) -> None:
        if self.verbose:
            spec = self.selector.find(event.tool)
            limit = spec.max_usage_count if spec is not None else None
            usage = (self.ledger.usage(event.tool), limit) if limit is not None else None
            print_tool_event(event, usage, self.verbose_stream or sys.stdout)

    def _format(self, text: str, who: str, task: TaskInfo | None) -> str:
        slot = (who, task.id if task else "")
        self._used_tools[slot] += 1
        if self._used_tools[slot] % self.remember_format_after_usages == 0:
            text = f"{text}\n\n" + TOOLS_REMINDER.format(
                tools=self.tools_description, tool_names=self.tool_names
            )
        return text


def _tool_error(code: ErrorCode, message: str) -> ToolError:
    return ToolError(code=code, message=message, retryable=code in RETRYABLE_CODES)
