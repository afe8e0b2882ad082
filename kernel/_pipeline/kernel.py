"""``Kernel``: the plugin manager, the local tools (same-named tools resolved here) and the call entry."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Self

import anyio
import msgspec
import pluggy
from toolmesh._config import Settings
from toolmesh._errors import ToolDefinitionError
from toolmesh._pipeline.context import CallbackChannel, CallContext, NestedCall, NestedSend
from toolmesh._pipeline.hook_calls import HookCalls, ProvidedTool
from toolmesh._pipeline.pipeline import call_pipeline
from toolmesh._pipeline.plugin_manager import await_maybe, create_plugin_manager
from toolmesh._pipeline.suggestions import close_names
from toolmesh._pipeline.validation import compile_schema
from toolmesh.contracts import ToolEvent, ToolRequest, ToolResult, ToolSpec, is_valid_tool_name

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
        self.node = node or self.settings.node_name
        self.plugin_state: dict[str, Any] = {}
        """Per-kernel state of plugins, keyed by plugin name (plugins are often shared modules)."""
        self.sources: list[Any] = []
        self.hooks = HookCalls(self.pm, self)
        """The one way to call hooks: typed methods, one order (see ``toolmesh._pipeline.hook_calls``)."""
        self._tools: dict[str, ToolSpec] = {}
        self._implementations: dict[str, Any] = {}
        self._event_sinks: list[EventSink] = []
        self._refreshing = anyio.Lock()

    # -------------------------------------------------------------- plugins

    def register_plugin(self, plugin: object, name: str | None = None) -> None:
        """Register one more plugin after construction."""
        self.pm.register(plugin, name=name)
        self.pm.check_pending()
        self.hooks.plugins_changed()

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

    def implementation_of(self, name: str) -> Any:
        """What the plugin providing the local tool ``name`` paired with its spec (``None``: a bare spec)."""
        return self._implementations.get(name)

    def _prepare(self, spec: ToolSpec) -> ToolSpec:
        spec = self.hooks.adjust_spec(spec=spec)
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

    def set_tools(self, specs: Iterable[ToolSpec | ProvidedTool]) -> list[str]:
        """Replace the local tool set; returns problems (duplicates, invalid specs) as messages.

        The duplicate rule, decided here and nowhere else: of several tools with one
        name (after ``toolmesh_tool_spec``), the first offered wins — plugins in hook
        order (see ``toolmesh.hookspecs``), each plugin's tools in the order it returned
        them.  Every other one is reported with both providers named; the winner's
        spec and implementation are what ``toolmesh_execute_tool`` receives.
        """
        chosen: dict[str, ProvidedTool] = {}
        problems = []
        for offered in specs:
            if isinstance(offered, ToolSpec):
                offered = ProvidedTool(offered, None, None)
            try:
                offered = offered._replace(spec=self._prepare(offered.spec))
            except ToolDefinitionError as exc:
                problems.append(str(exc))
                continue
            name = offered.spec.name
            kept = chosen.get(name)
            if kept is not None:
                problems.append(
                    f"tool {name!r} is provided twice (by {_provider(kept)} and by {_provider(offered)});"
                    f" keeping the one from {_provider(kept)}, rename the other"
                )
                continue
            chosen[name] = offered
        self._tools = {name: offered.spec for name, offered in chosen.items()}
        self._implementations = {
            name: offered.implementation
            for name, offered in chosen.items()
            if offered.implementation is not None
        }
        return problems

    async def discover_tools(self, sources: Iterable[Any] = ()) -> list[str]:
        """Ask every plugin for its tools from ``sources`` and register them; returns problems."""
        self.sources = list(sources)
        problems = self.set_tools(await self.hooks.discover_tools(sources=self.sources))
        for problem in problems:
            _log.warning("tool problem: %s", problem)
        return problems

    def unclaimed_sources(self, sources: Iterable[Any]) -> list[Any]:
        """The string sources no plugin claims (a path or module nobody serves)."""
        wanted = [source for source in sources if isinstance(source, str)]
        claimed = self.hooks.claim_sources(sources=wanted)
        return [source for source in wanted if source not in claimed]

    async def refresh_tools(self) -> list[str]:
        """Re-run discovery (a plugin's tools changed) and notify plugins of the new set.

        Refreshes run one at a time: several plugins may ask at once, and an older
        discovery finishing last must not overwrite a newer one.
        """
        async with self._refreshing:
            problems = await self.discover_tools(self.sources)
            await self.hooks.tools_changed(tools=self.tools)
        return problems

    # -------------------------------------------------------------- lifecycle

    async def start(self, sources: Iterable[Any] = ()) -> list[str]:
        """Run the startup hooks, then discover tools; returns tool problems."""
        await self.hooks.startup()
        return await self.discover_tools(sources)

    async def stop(self) -> None:
        """Run the shutdown hooks."""
        await self.hooks.shutdown()

    async def __aenter__(self) -> Self:
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
        observed = self.hooks.implemented("toolmesh_event")
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
            await self.hooks.event(event=event)
        for sink in self._event_sinks:
            try:
                await await_maybe(sink(event))
            except Exception:  # noqa: BLE001 - isolation boundary around a plugin's sink: the call goes on
                _log.exception("event sink %r failed on a %s event of %s", sink, kind, tool)

    def replace_spec(self, name: str, **changes: Any) -> None:
        """Change fields of a registered tool (e.g. mark it unavailable with a reason)."""
        self._tools[name] = msgspec.structs.replace(self._tools[name], **changes)


def _provider(offered: ProvidedTool) -> str:
    plugin = f"plugin {offered.plugin!r}, " if offered.plugin is not None else ""
    return f"{plugin}source {offered.spec.source!r}"


def _plain_send(call_tool: NestedCall) -> NestedSend:
    async def send(request: ToolRequest) -> ToolResult:
        return await call_tool(request.tool, request.arguments)

    return send
