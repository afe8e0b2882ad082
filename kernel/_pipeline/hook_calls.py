"""``HookCalls``: the one way the kernel calls hooks — a typed facade over the plugin manager.

Every hook the kernel runs goes through a method here, called with keyword
arguments only, so each call site is type-checked against ``toolmesh.hookspecs``.
Every method walks one cached, ordered tuple of implementations per hook
(``_impls``), binding arguments by name the same way, so there is one order,
one argument binding and one trace point.

Ordering rule (the kernel's promise, the same for every hook): implementations
marked ``tryfirst`` run first, then the others in registration order (default
plugins, entry points, plugins given in code, plugins registered later), then
those marked ``trylast``; within each group, registration order.  pluggy's own
relay (``pm.hook.<name>(...)``) calls the newest registration first; the
kernel does not use it for its hooks, so this one order holds everywhere.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable, Callable
from types import CoroutineType
from typing import TYPE_CHECKING, Any, NamedTuple

import pluggy
from toolmesh._errors import ConfigError, ToolmeshError, ToolUnavailable, error_class
from toolmesh._pipeline.decisions import Complete, Reject, RunNormally
from toolmesh._pipeline.plugin_manager import TRACE_ENV, await_maybe, ordered_impls
from toolmesh.contracts import ToolEvent, ToolRequest, ToolResult, ToolSpec

if TYPE_CHECKING:
    import typer
    from toolmesh._pipeline.context import CallContext
    from toolmesh._pipeline.validation import ValidationIssue

__all__ = ["HookCalls", "ProvidedTool"]

_log = logging.getLogger("toolmesh.kernel")
_trace_log = logging.getLogger("toolmesh.hooks")


class ProvidedTool(NamedTuple):
    """One tool as a plugin's ``toolmesh_discover_tools`` offered it."""

    spec: ToolSpec
    implementation: Any
    """What the plugin paired with ``spec`` (``(spec, implementation)``); ``None`` for a bare spec."""
    plugin: str | None
    """Name of the plugin that offered it (``None`` for specs given to ``Kernel.set_tools``)."""


class _Impl(NamedTuple):
    plugin: str
    function: Callable[..., Any]
    argnames: tuple[str, ...]


class HookCalls:
    """Typed calls of every toolmesh hook, in the kernel's one order (see the module docstring)."""

    def __init__(self, pm: pluggy.PluginManager, kernel: object) -> None:
        # ``kernel`` is the Kernel handed to the hooks that take one; typed ``object`` so that this
        # module does not import kernel.py (which imports it): the import graph stays acyclic.
        self._pm = pm
        self._kernel = kernel
        self._order: dict[str, tuple[_Impl, ...]] = {}
        self._trace = os.environ.get(TRACE_ENV, "") not in ("", "0")
        self.plugins_changed()

    def plugins_changed(self) -> None:
        """Forget the cached order (a plugin was registered) and refuse wrapper implementations."""
        self._order.clear()
        for plugin in self._pm.get_plugins():
            for caller in self._pm.get_hookcallers(plugin) or ():
                for impl in caller.get_hookimpls():
                    if impl.hookwrapper or impl.wrapper:
                        raise ConfigError(
                            f"plugin {impl.plugin_name!r} implements {caller.name} as a pluggy wrapper, which"
                            " toolmesh hooks do not support; implement it as a plain hook (use"
                            " toolmesh_before_call / toolmesh_after_call to act around a call)"
                        )

    def implemented(self, hook_name: str) -> bool:
        """True when at least one plugin implements ``hook_name``."""
        return bool(self._impls(hook_name))

    def _impls(self, hook_name: str) -> tuple[_Impl, ...]:
        """A hook's implementations in the kernel's order (cached until ``plugins_changed``)."""
        impls = self._order.get(hook_name)
        if impls is None:
            impls = self._order[hook_name] = tuple(
                _Impl(
                    impl.plugin_name,
                    _traced(hook_name, impl) if self._trace else impl.function,
                    tuple(impl.argnames),
                )
                for impl in ordered_impls(getattr(self._pm.hook, hook_name))
            )
        return impls

    # The loops over implementations live in this class only: ``_results`` (synchronous hooks),
    # ``_awaited`` (each awaited before the next is called), ``_first`` (firstresult), ``_notify``
    # (isolated), and the four hooks that thread a value on or stop early (discover_tools,
    # adjust_spec, authorize, before_call).  They are plain loops over ``_impls`` rather than one
    # generator shared by all: a generator per hook call cost ~2 µs per tool call (bench A/B).

    def _results(self, hook_name: str, kwargs: dict[str, Any]) -> list[Any]:
        """Every implementation's returned object (awaitables not awaited), ``None`` left out."""
        results = []
        for impl in self._impls(hook_name):
            value = impl.function(*[kwargs[name] for name in impl.argnames])
            if value is not None:
                results.append(value)
        return results

    def _first(self, hook_name: str, kwargs: dict[str, Any]) -> Any:
        """A ``firstresult`` hook: the first non-None *returned object* (not awaited, as pluggy does)."""
        for impl in self._impls(hook_name):
            value = impl.function(*[kwargs[name] for name in impl.argnames])
            if value is not None:
                return value
        return None

    async def _awaited(
        self, hook_name: str, kwargs: dict[str, Any], *, concatenate: bool = False
    ) -> list[Any]:
        """Every implementation's result, each awaited before the next is called; ``None`` left out.

        ``concatenate``: the results are lists, and one list of their items is returned.
        """
        results: list[Any] = []
        for impl in self._impls(hook_name):
            value = impl.function(*[kwargs[name] for name in impl.argnames])
            if value is None:
                continue
            if type(value) is CoroutineType or inspect.isawaitable(value):
                value = await value
                if value is None:
                    continue
            if concatenate:
                results.extend(value)
            else:
                results.append(value)
        return results

    async def _notify(self, hook_name: str, kwargs: dict[str, Any]) -> None:
        """Every implementation, each one isolated: one that raises is logged and the others still run."""
        for impl in self._impls(hook_name):
            try:
                await await_maybe(impl.function(*[kwargs[name] for name in impl.argnames]))
            except Exception:  # noqa: BLE001 - isolation boundary around plugin code: the call goes on
                _log.exception("plugin %r failed in %s", impl.plugin, hook_name)

    # ------------------------------------------------------------ discovery

    def claim_sources(self, *, sources: list[str]) -> set[str]:
        """The subset of ``sources`` some plugin understands (``toolmesh_claim_sources``)."""
        return {
            source
            for claimed in self._results("toolmesh_claim_sources", {"sources": sources})
            for source in claimed
        }

    async def discover_tools(self, *, sources: list[Any]) -> list[ProvidedTool]:
        """Every plugin's tools, in plugin order (``toolmesh_discover_tools``); duplicates are kept."""
        kwargs = {"kernel": self._kernel, "sources": sources}
        provided = []
        for impl in self._impls("toolmesh_discover_tools"):
            plugin = impl.plugin
            for item in await await_maybe(impl.function(*[kwargs[name] for name in impl.argnames])) or ():
                spec, implementation = item if isinstance(item, tuple) else (item, None)
                provided.append(ProvidedTool(spec, implementation, plugin))
        return provided

    async def tools_changed(self, *, tools: list[ToolSpec]) -> None:
        """Tell every plugin the local tool set changed (``toolmesh_tools_changed``)."""
        await self._awaited("toolmesh_tools_changed", {"kernel": self._kernel, "tools": tools})

    def adjust_spec(self, *, spec: ToolSpec) -> ToolSpec:
        """``spec`` after every ``toolmesh_tool_spec``, each implementation seeing the previous output."""
        kwargs: dict[str, Any] = {"spec": spec, "kernel": self._kernel}
        for impl in self._impls("toolmesh_tool_spec"):
            adjusted = impl.function(*[kwargs[name] for name in impl.argnames])
            if adjusted is not None:
                kwargs["spec"] = adjusted
        adjusted_spec: ToolSpec = kwargs["spec"]
        return adjusted_spec

    # ------------------------------------------------------------ lifecycle

    async def startup(self) -> None:
        """Run ``toolmesh_startup``."""
        await self._awaited("toolmesh_startup", {"kernel": self._kernel})

    async def shutdown(self) -> None:
        """Run ``toolmesh_shutdown``."""
        await self._awaited("toolmesh_shutdown", {"kernel": self._kernel})

    async def event(self, *, event: ToolEvent) -> None:
        """Hand ``event`` to every ``toolmesh_event`` implementation; one that fails is logged."""
        await self._notify("toolmesh_event", {"event": event, "kernel": self._kernel})

    def cli(self, *, app: typer.Typer) -> None:
        """Let plugins add their commands (``toolmesh_cli``)."""
        self._results("toolmesh_cli", {"app": app})

    # ------------------------------------------------------------ a call

    async def authorize(self, *, identity: str | None, spec: ToolSpec, action: str) -> str | None:
        """``None`` when every ``toolmesh_authorize`` allows or abstains, else the refusing plugin."""
        kwargs = {"identity": identity, "spec": spec, "action": action, "kernel": self._kernel}
        for impl in self._impls("toolmesh_authorize"):
            verdict = impl.function(*[kwargs[name] for name in impl.argnames])
            if _awaitable(verdict):
                verdict = await verdict
            if verdict is False:
                return impl.plugin
        return None

    async def before_call(
        self, *, spec: ToolSpec, request: ToolRequest, arguments: dict[str, Any], context: CallContext
    ) -> tuple[dict[str, Any], Complete | None]:
        """Thread ``arguments`` through ``toolmesh_before_call``; returns them and a ``Complete``, if any.

        Raises the ``ToolCallError`` of the first ``Reject``.
        """
        impls = self._impls("toolmesh_before_call")
        if not impls:
            return arguments, None
        kwargs: dict[str, Any] = {
            "spec": spec,
            "request": request,
            "arguments": arguments,
            "context": context,
        }
        for impl in impls:
            decision = impl.function(*[kwargs[name] for name in impl.argnames])
            if _awaitable(decision):
                decision = await decision
            if decision is None:
                continue
            if isinstance(decision, RunNormally):
                kwargs["arguments"] = decision.arguments
            elif isinstance(decision, Complete):
                return kwargs["arguments"], decision
            elif isinstance(decision, Reject):
                raise error_class(decision.code)(decision.reason, details=decision.details)
            else:
                raise ToolmeshError(
                    f"plugin {impl.plugin!r} returned {type(decision).__name__} from toolmesh_before_call;"
                    " return RunNormally, Complete, Reject or None"
                )
        return kwargs["arguments"], None

    def validate_arguments(
        self, *, spec: ToolSpec, arguments: dict[str, Any]
    ) -> Awaitable[list[ValidationIssue]]:
        """Every issue ``toolmesh_validate_arguments`` implementations find."""
        return self._awaited(
            "toolmesh_validate_arguments", {"spec": spec, "arguments": arguments}, concatenate=True
        )

    def validate_result(self, *, spec: ToolSpec, result: ToolResult) -> Awaitable[list[ValidationIssue]]:
        """Every issue ``toolmesh_validate_result`` implementations find."""
        return self._awaited("toolmesh_validate_result", {"spec": spec, "result": result}, concatenate=True)

    def execute_tool(
        self, *, spec: ToolSpec, arguments: dict[str, Any], context: CallContext
    ) -> Awaitable[Any]:
        """The owning plugin's value for this call (``toolmesh_execute_tool``, first non-None), to await.

        Raises ``ToolUnavailable`` when no plugin owns ``spec``.
        """
        kwargs = {"spec": spec, "arguments": arguments, "context": context}
        outcome = self._first("toolmesh_execute_tool", kwargs)
        if outcome is None:
            raise ToolUnavailable(
                f"no installed plugin executes tools from {spec.source!r} (tool {spec.name!r});"
                " install or enable that plugin (see 'toolmesh plugins')"
            )
        return await_maybe(outcome)

    def cache_key(self, *, spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> str | None:
        """The call's cache key (``toolmesh_cache_key``, first non-None)."""
        key: str | None = self._first(
            "toolmesh_cache_key", {"spec": spec, "arguments": arguments, "context": context}
        )
        return key

    async def cache_get(self, *, spec: ToolSpec, key: str) -> ToolResult | None:
        """The cached result for ``key`` (``toolmesh_cache_get``: first non-None returned object, awaited)."""
        hit: ToolResult | None = await await_maybe(
            self._first("toolmesh_cache_get", {"spec": spec, "key": key})
        )
        return hit

    def should_cache(self, *, spec: ToolSpec, arguments: dict[str, Any], result: ToolResult) -> bool:
        """False when some ``toolmesh_should_cache`` implementation vetoes (every one runs)."""
        kwargs = {"spec": spec, "arguments": arguments, "result": result}
        verdicts = self._results("toolmesh_should_cache", kwargs)  # every implementation runs
        return not any(verdict is False for verdict in verdicts)

    async def cache_put(self, *, spec: ToolSpec, key: str, result: ToolResult, ttl: float | None) -> None:
        """Store ``result`` with every ``toolmesh_cache_put`` implementation."""
        await self._awaited("toolmesh_cache_put", {"spec": spec, "key": key, "result": result, "ttl": ttl})

    async def after_call(
        self, *, spec: ToolSpec, request: ToolRequest, result: ToolResult, context: CallContext
    ) -> None:
        """Notify ``toolmesh_after_call`` implementations; one that fails is logged, never raised."""
        kwargs = {"spec": spec, "request": request, "result": result, "context": context}
        await self._notify("toolmesh_after_call", kwargs)


def _traced(hook_name: str, impl: pluggy.HookImpl) -> Callable[..., Any]:
    """``impl.function``, logging each call and its outcome (``TOOLMESH_TRACE_HOOKS`` only)."""
    function, plugin = impl.function, impl.plugin_name

    def traced(*args: Any) -> Any:
        _trace_log.debug("call %s impl=%s args=%r", hook_name, plugin, args)
        try:
            value = function(*args)
        except BaseException as exc:
            _trace_log.debug("done %s impl=%s raised %r", hook_name, plugin, exc)
            raise
        _trace_log.debug("done %s impl=%s result=%r", hook_name, plugin, value)
        return value

    return traced


def _awaitable(value: Any) -> bool:
    return value is not None and (type(value) is CoroutineType or inspect.isawaitable(value))
