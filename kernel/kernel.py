"""``Kernel``: the plugin manager, the local tool registry and a typed facade over the hooks."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
import msgspec
import pluggy

from toolmesh.contracts import ToolEvent, ToolRequest, ToolResult, ToolSpec, is_valid_tool_name

from .config import Settings
from .context import CallbackChannel, CallContext, NestedCall, NestedSend
from .errors import ToolDefinitionError
from .pipeline import call_pipeline
from .plugin_manager import TRACE_ENV, await_maybe, create_plugin_manager, ordered_impls
from .suggestions import close_names
from .validation import compile_schema

__all__ = ["EventSink", "Kernel"]

EventSink = Callable[[ToolEvent], Awaitable[None] | None]
"""Receives every event the kernel emits (the node publishes them on NATS)."""

_log = logging.getLogger("toolmesh.kernel")


class Kernel:
    """Plugins plus the tools they provide on this process; runs the call pipeline.

    A ``Kernel`` works on its own (``await kernel.call(request)``); a ``Node``
    puts one on NATS.
    """

    def __init__(
        self,
        plugins: Iterable[object] = (),
        *,
        settings: Settings | None = None,
        load_entrypoints: bool = True,
        node: str | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.pm: pluggy.PluginManager = create_plugin_manager(plugins, load_entrypoints=load_entrypoints)
        self.hook = self.pm.hook
        self.node = node or self.settings.node_name
        self.plugin_state: dict[str, Any] = {}
        """Per-kernel state of plugins, keyed by plugin name (plugins are often shared modules)."""
        self.sources: list[Any] = []
        self._tools: dict[str, ToolSpec] = {}
        self._event_sinks: list[EventSink] = []
        self._pipeline_impls: dict[str, list[pluggy.HookImpl]] = {}
        self._call_order: dict[str, list[pluggy.HookImpl] | None] = {}
        # Hook-call tracing works through pluggy's own dispatch; only bypass it when off.
        self._direct_calls = os.environ.get(TRACE_ENV, "") in ("", "0")
        self._refreshing = anyio.Lock()

    # -------------------------------------------------------------- plugins

    def register_plugin(self, plugin: object, name: str | None = None) -> None:
        """Register one more plugin after construction."""
        self.pm.register(plugin, name=name)
        self.pm.check_pending()
        self._pipeline_impls.clear()
        self._call_order.clear()

    def pipeline_impls(self, hook_name: str) -> list[pluggy.HookImpl]:
        """Implementations of a pipeline hook in the order they run (cached)."""
        impls = self._pipeline_impls.get(hook_name)
        if impls is None:
            impls = self._pipeline_impls[hook_name] = ordered_impls(getattr(self.hook, hook_name))
        return impls

    def _direct(self, hook_name: str) -> list[pluggy.HookImpl] | None:
        # pluggy's call order (newest first, tryfirst/trylast honoured); None where
        # pluggy must dispatch itself (wrappers, or hook tracing on).
        if hook_name not in self._call_order:
            impls = getattr(self.hook, hook_name).get_hookimpls()
            plain = self._direct_calls and not any(impl.hookwrapper or impl.wrapper for impl in impls)
            self._call_order[hook_name] = list(reversed(impls)) if plain else None
        return self._call_order[hook_name]

    def call_all(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call every implementation of a hook, like ``pm.hook.<name>(**kwargs)`` but cheaper on the hot path."""
        impls = self._direct(hook_name)
        if impls is None:
            return getattr(self.hook, hook_name)(**kwargs)
        results = []
        for impl in impls:
            value = impl.function(*[kwargs[name] for name in impl.argnames])
            if value is not None:
                results.append(value)
        return results

    def call_first(self, hook_name: str, **kwargs: Any) -> Any:
        """The first non-None result of a ``firstresult`` hook, in pluggy's order."""
        impls = self._direct(hook_name)
        if impls is None:
            return getattr(self.hook, hook_name)(**kwargs)
        for impl in impls:
            value = impl.function(*[kwargs[name] for name in impl.argnames])
            if value is not None:
                return value
        return None

    def has_impls(self, hook_name: str) -> bool:
        """True when at least one plugin implements ``hook_name``."""
        return bool(self.pipeline_impls(hook_name))

    # -------------------------------------------------------------- tools

    @property
    def tools(self) -> list[ToolSpec]:
        """The tools registered on this kernel, sorted by name."""
        return [self._tools[name] for name in sorted(self._tools)]

    def get_tool(self, name: str) -> ToolSpec | None:
        """The spec of a local tool, or ``None``."""
        return self._tools.get(name)

    def suggest(self, name: str, candidates: Iterable[str] | None = None) -> tuple[str, ...]:
        """Up to three names close to ``name`` (from ``candidates`` or the local tools)."""
        return close_names(name, self._tools if candidates is None else candidates)

    def _prepare(self, spec: ToolSpec) -> ToolSpec:
        for impl in self.pipeline_impls("toolmesh_tool_spec"):
            adjusted = impl.function(*[{"spec": spec, "kernel": self}[arg] for arg in impl.argnames])
            if adjusted is not None:
                spec = adjusted
        if not is_valid_tool_name(spec.name):
            raise ToolDefinitionError(
                f"tool name {spec.name!r} (from plugin {spec.source!r}) is not valid:"
                " use 1-128 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
            )
        for label, schema in (("input_schema", spec.input_schema), ("output_schema", spec.output_schema)):
            if schema is not None:
                try:
                    compile_schema(schema)
                except ValueError as exc:
                    raise ToolDefinitionError(f"tool {spec.name!r} has an invalid {label}: {exc}") from exc
        return spec

    def set_tools(self, specs: Iterable[ToolSpec]) -> list[str]:
        """Replace the local tool set; returns problems (duplicates, invalid specs) as messages."""
        tools: dict[str, ToolSpec] = {}
        problems = []
        for spec in specs:
            try:
                spec = self._prepare(spec)
            except ToolDefinitionError as exc:
                problems.append(str(exc))
                continue
            if spec.name in tools:
                problems.append(
                    f"tool {spec.name!r} is provided twice (by {tools[spec.name].source!r} and {spec.source!r});"
                    " keeping the first, rename the other"
                )
                continue
            tools[spec.name] = spec
        self._tools = tools
        return problems

    async def discover_tools(self, sources: Iterable[Any] = ()) -> list[str]:
        """Ask every plugin for its tools from ``sources`` and register them; returns problems."""
        self.sources = list(sources)
        specs: list[ToolSpec] = []
        for provided in self.hook.toolmesh_discover_tools(kernel=self, sources=self.sources):
            specs.extend(await await_maybe(provided) or ())
        problems = self.set_tools(specs)
        for problem in problems:
            _log.warning("tool problem: %s", problem)
        return problems

    def unclaimed_sources(self, sources: Iterable[Any]) -> list[Any]:
        """The string sources no plugin claims (a path or module nobody serves)."""
        wanted = [source for source in sources if isinstance(source, str)]
        claimed: set[str] = set()
        for result in self.hook.toolmesh_claim_sources(sources=wanted):
            claimed.update(result or ())
        return [source for source in wanted if source not in claimed]

    async def refresh_tools(self) -> list[str]:
        """Re-run discovery (a plugin's tools changed) and notify plugins of the new set.

        Refreshes run one at a time: several plugins may ask at once, and an older
        discovery finishing last must not overwrite a newer one.
        """
        async with self._refreshing:
            problems = await self.discover_tools(self.sources)
            for outcome in self.hook.toolmesh_tools_changed(kernel=self, tools=self.tools):
                await await_maybe(outcome)
        return problems

    # -------------------------------------------------------------- lifecycle

    async def start(self, sources: Iterable[Any] = ()) -> list[str]:
        """Run the startup hooks, then discover tools; returns tool problems."""
        for outcome in self.hook.toolmesh_startup(kernel=self):
            await await_maybe(outcome)
        return await self.discover_tools(sources)

    async def stop(self) -> None:
        """Run the shutdown hooks."""
        for outcome in self.hook.toolmesh_shutdown(kernel=self):
            await await_maybe(outcome)

    async def __aenter__(self) -> Kernel:
        await self.start(self.sources)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -------------------------------------------------------------- calls

    async def call(
        self,
        request: ToolRequest,
        *,
        deadline: float | None = None,
        call_tool: NestedCall | None = None,
        send_nested: NestedSend | None = None,
        channel: CallbackChannel | None = None,
    ) -> ToolResult:
        """Run ``request`` through the pipeline; never raises for a failing call.

        The tool's nested calls (``context.call_tool``) go to ``send_nested`` (a node
        sends them over NATS), else to this kernel; either way they carry the call
        chain and the time left, and end with this call (``CallContext.nested_call``).
        ``call_tool`` replaces that with a plain ``(name, arguments)`` function, which
        still ends with this call but builds its own requests.
        """
        context = CallContext(request=request, kernel=self, node=self.node, deadline=deadline, channel=channel)
        if call_tool is not None:
            send_nested = _plain_send(call_tool)
        context.call_tool = context.nested_call(send_nested or self._local_send(context))
        return await call_pipeline(self, context)

    def _local_send(self, parent: CallContext) -> NestedSend:
        async def send(request: ToolRequest) -> ToolResult:
            request = msgspec.structs.replace(request, id=f"{parent.request.id}/{request.tool}")
            return await self.call(request, deadline=parent.deadline)

        return send

    # -------------------------------------------------------------- events

    def add_event_sink(self, sink: EventSink) -> None:
        """Send every emitted event to ``sink`` as well."""
        self._event_sinks.append(sink)

    async def emit(
        self,
        kind: str,
        tool: str,
        *,
        request_id: str | None = None,
        duration_ms: float | None = None,
        error_code: Any = None,
        attributes: dict[str, Any] | None = None,
    ) -> None:
        """Build a ``ToolEvent`` and hand it to the ``toolmesh_event`` hooks and the sinks."""
        observed = self.has_impls("toolmesh_event")
        if not self._event_sinks and not observed:
            return
        event = ToolEvent(
            kind=kind,
            tool=tool,
            request_id=request_id,
            node=self.node,
            timestamp=time.time(),
            duration_ms=duration_ms,
            error_code=error_code,
            attributes=attributes,
        )
        if observed:
            await self._notify("toolmesh_event", event=event, kernel=self)
        for sink in self._event_sinks:
            try:
                await await_maybe(sink(event))
            except Exception:  # noqa: BLE001 - a failing sink must not fail the call it reports on
                _log.exception("event sink %r failed on a %s event of %s", sink, kind, tool)

    async def _notify(self, hook_name: str, **kwargs: Any) -> None:
        """Run every implementation of a notification hook; one that fails is logged, never raised."""
        for impl in self.pipeline_impls(hook_name):
            try:
                await await_maybe(impl.function(*[kwargs[name] for name in impl.argnames]))
            except Exception:  # noqa: BLE001 - an observer's bug must not fail the call it observes
                _log.exception("plugin %r failed in %s", impl.plugin_name, hook_name)

    def replace_spec(self, name: str, **changes: Any) -> None:
        """Change fields of a registered tool (e.g. mark it unavailable with a reason)."""
        self._tools[name] = msgspec.structs.replace(self._tools[name], **changes)


def _plain_send(call_tool: NestedCall) -> NestedSend:
    async def send(request: ToolRequest) -> ToolResult:
        return await call_tool(request.tool, request.arguments)

    return send
