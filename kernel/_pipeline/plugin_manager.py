"""Build the pluggy plugin manager: defaults, entry points, plugins given in code.

Loading is explicit and ordered — default plugins, then the
``toolmesh.plugins`` entry points (filtered by ``TOOLMESH_PLUGINS``), then the
plugins passed in code — and ends with ``check_pending()`` so a misspelt hook
name fails at start-up instead of being silently ignored.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import logging
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import CoroutineType
from typing import Any

import pluggy
from toolmesh import hookspecs
from toolmesh._errors import ConfigError

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginInfo",
    "await_maybe",
    "create_plugin_manager",
    "describe_plugins",
    "ordered_impls",
]

ENTRY_POINT_GROUP = "toolmesh.plugins"
"""Entry-point group that installed plugins (first-party ones too) register in."""

PLUGINS_ENV = "TOOLMESH_PLUGINS"
"""Comma-separated entry-point names to load; unset loads all, empty loads none."""

TRACE_ENV = "TOOLMESH_TRACE_HOOKS"
"""``1`` logs every hook call with its arguments and result to stderr."""

_log = logging.getLogger("toolmesh.hooks")


async def await_maybe(value: Any) -> Any:
    """Await ``value`` if it is awaitable, else return it: hooks may return either."""
    if value is None:
        return None
    if type(value) is CoroutineType or inspect.isawaitable(value):  # the common case checked first: hot path
        return await value
    return value


def _default_plugins() -> list[tuple[str, object]]:
    from toolmesh._pipeline import authorization, default_validation, memory_cache

    return [
        ("toolmesh.default_validation", default_validation),
        ("toolmesh.memory_cache", memory_cache.MemoryCachePlugin()),
        ("toolmesh.authorization", authorization.BuiltinPolicyPlugin()),
    ]


def _allowed_names() -> set[str] | None:
    raw = os.environ.get(PLUGINS_ENV)
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _enable_tracing(pm: pluggy.PluginManager) -> None:
    if not _log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
        _log.addHandler(handler)
        _log.setLevel(logging.DEBUG)

    def before(hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        _log.debug("call %s impls=%s kwargs=%r", hook_name, [impl.plugin_name for impl in hook_impls], kwargs)

    def after(
        outcome: pluggy.Result[Any], hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]
    ) -> None:
        exception = outcome.exception
        if exception is not None:
            _log.debug("done %s raised %r", hook_name, exception)
        else:
            _log.debug("done %s result=%r", hook_name, outcome.get_result())

    pm.add_hookcall_monitoring(before, after)


def create_plugin_manager(plugins: Iterable[object] = (), *, load_entrypoints: bool = True) -> pluggy.PluginManager:
    """Return a plugin manager with the defaults, the installed plugins and ``plugins`` registered."""
    pm = pluggy.PluginManager("toolmesh")
    pm.add_hookspecs(hookspecs)
    for name, plugin in _default_plugins():
        pm.register(plugin, name=name)
    if load_entrypoints:
        allowed = _allowed_names()
        if allowed is not None:
            available = {ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
            unknown = allowed - available
            if unknown:
                raise ConfigError(
                    f"{PLUGINS_ENV} names {', '.join(sorted(unknown))}, which no installed plugin provides;"
                    f" installed: {', '.join(sorted(available)) or 'none'}"
                )
            for name in available - allowed:
                pm.set_blocked(name)
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    for plugin in plugins:
        if not pm.is_registered(plugin):
            pm.register(plugin)
    pm.check_pending()
    if os.environ.get(TRACE_ENV, "") not in ("", "0"):
        _enable_tracing(pm)
    return pm


def ordered_impls(caller: pluggy.HookCaller) -> list[pluggy.HookImpl]:
    """A hook's implementations in the kernel's one order: ``tryfirst``, then registration order, then ``trylast``."""
    impls = caller.get_hookimpls()
    first = [impl for impl in impls if impl.tryfirst]
    # pluggy keeps trylast impls newest-first (it inserts them at the front); reverse to registration order
    last = [impl for impl in reversed(impls) if impl.trylast]
    middle = [impl for impl in impls if not impl.tryfirst and not impl.trylast]
    return first + middle + last


@dataclass(frozen=True)
class PluginInfo:
    """One registered plugin, as ``toolmesh plugins`` shows it."""

    name: str
    hooks: tuple[str, ...]
    distribution: str | None = None
    version: str | None = None


def describe_plugins(pm: pluggy.PluginManager) -> list[PluginInfo]:
    """Name, hooks and distribution of every registered plugin, in registration order."""
    distributions = {id(plugin): dist for plugin, dist in pm.list_plugin_distributions()}
    infos = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        dist = distributions.get(id(plugin))
        hooks = tuple(sorted(caller.name for caller in pm.get_hookcallers(plugin) or ()))
        infos.append(
            PluginInfo(
                name=name,
                hooks=hooks,
                distribution=dist.metadata["name"] if dist else None,
                version=dist.version if dist else None,
            )
        )
    return infos
