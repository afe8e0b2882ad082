"""``HookSet``: decision and description hooks kept apart from any toolset, so sets can be merged and reused.

Lutum's hook owner in Python: hooks register for one tool or for all tools,
run in registration order, and one set merges into another::

    policy = HookSet().with_hook(normalize_city, tool="weather").with_hook(block_secrets)
    audit = HookSet().with_hook(log_call)
    plan = await round.apply_hooks(policy.with_extended(audit))    # policy's hooks, then audit's
    plan = await plan.apply_hooks(second_pass)                       # only the calls still pending

``with_*`` methods change the set and return it (for chaining);
``register_*`` and ``extend`` change it and return ``None``.  A toolset owns
one ``HookSet`` (``Toolset.hooks``); a plain function ``(call, spec) ->
Decision | None`` works wherever a hook set is expected and hooks every tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from toolmesh import Decision
from toolmesh.contracts import ToolSpec

__all__ = ["DecisionHook", "DescriptionHook", "HookSet", "ToolHooks", "as_tool_hooks"]

DescriptionHook = Callable[[ToolSpec], str | None]
"""Returns a description override for a tool, or ``None`` to keep it."""

DecisionHook = Callable[[Any, ToolSpec], Decision | None | Awaitable[Decision | None]]
"""Decides one call (a ``rounds.ToolCall``): ``RunNormally(args)``, ``Complete(value)`` or ``Reject(why)``."""


@runtime_checkable
class ToolHooks(Protocol):
    """Anything that can decide calls: a ``HookSet``, a ``Toolset`` (its hooks, nested ones first)."""

    def decision_hooks_for(self, name: str) -> list[DecisionHook]:
        """The hooks deciding calls of tool ``name``, in the order they run."""
        ...


class HookSet:
    """Decision and description hooks, each for one tool or for every tool, in registration order."""

    def __init__(self) -> None:
        self.decision_hooks: list[tuple[str | None, DecisionHook]] = []
        self.description_hooks: list[tuple[str | None, DescriptionHook]] = []

    def __len__(self) -> int:
        return len(self.decision_hooks) + len(self.description_hooks)

    def __repr__(self) -> str:
        decision, description = len(self.decision_hooks), len(self.description_hooks)
        return f"HookSet({decision} decision, {description} description hooks)"

    # -------------------------------------------------------------- registering

    def register_hook(self, hook: DecisionHook, *, tool: str | None = None) -> None:
        """Add a decision hook for ``tool`` (every tool when ``None``); it runs after those already here."""
        if not callable(hook):
            raise TypeError(f"a decision hook must be callable (call, spec) -> Decision | None, got {hook!r}")
        self.decision_hooks.append((tool, hook))

    def with_hook(self, hook: DecisionHook, *, tool: str | None = None) -> HookSet:
        """:meth:`register_hook`, returning this set."""
        self.register_hook(hook, tool=tool)
        return self

    def register_description_hook(self, hook: DescriptionHook, *, tool: str | None = None) -> None:
        """Add a description hook for ``tool`` (every tool when ``None``); the last one giving text wins."""
        if not callable(hook):
            raise TypeError(f"a description hook must be callable (spec) -> str | None, got {hook!r}")
        self.description_hooks.append((tool, hook))

    def with_description_hook(self, hook: DescriptionHook, *, tool: str | None = None) -> HookSet:
        """:meth:`register_description_hook`, returning this set."""
        self.register_description_hook(hook, tool=tool)
        return self

    def register_hooks(self, policy: object) -> None:
        """Register every hook method of ``policy`` (Lutum's ``#[impl_hooks]``), in name order.

        A method ``<tool>_hook(call, spec)`` decides calls of tool ``<tool>``; a method
        ``<tool>_description_hook(spec)`` overrides its description.  Tools whose names are not
        Python identifiers are registered with :meth:`register_hook` instead.
        """
        found = False
        for attribute in sorted(dir(policy)):
            if attribute.startswith("_") or not attribute.endswith("_hook"):
                continue
            method = getattr(policy, attribute)
            if not callable(method):
                continue
            if attribute.endswith("_description_hook"):
                self.register_description_hook(method, tool=attribute.removesuffix("_description_hook"))
            else:
                self.register_hook(method, tool=attribute.removesuffix("_hook"))
            found = True
        if not found:
            raise TypeError(
                f"{type(policy).__name__} has no hook methods; name them <tool>_hook(call, spec) or"
                " <tool>_description_hook(spec)"
            )

    def with_hooks(self, policy: object) -> HookSet:
        """:meth:`register_hooks`, returning this set."""
        self.register_hooks(policy)
        return self

    def extend(self, other: HookSet) -> None:
        """Merge ``other`` into this set: its hooks run after this set's own (``other`` is unchanged)."""
        if not isinstance(other, HookSet):
            raise TypeError(f"only a HookSet merges into a HookSet, got {type(other).__name__}")
        self.decision_hooks.extend(other.decision_hooks)
        self.description_hooks.extend(other.description_hooks)

    def with_extended(self, other: HookSet) -> HookSet:
        """:meth:`extend`, returning this set."""
        self.extend(other)
        return self

    def copy(self) -> HookSet:
        """A new set holding the same hooks (registering on one leaves the other as it is)."""
        return HookSet().with_extended(self)

    # -------------------------------------------------------------- reading

    def decision_hooks_for(self, name: str) -> list[DecisionHook]:
        """The decision hooks for tool ``name``, in registration order."""
        return [hook for tool, hook in self.decision_hooks if tool is None or tool == name]

    def description_override(self, spec: ToolSpec) -> str | None:
        """The description the hooks give ``spec``: the last hook returning text wins."""
        description = None
        for tool, hook in self.description_hooks:
            if tool is None or tool == spec.name:
                override = hook(spec)
                if override is not None:
                    description = override
        return description

    def description_overrides(self, specs: list[ToolSpec]) -> dict[str, str]:
        """Lutum's ``description_overrides()``: tool name → overriding description, where there is one."""
        return {spec.name: text for spec in specs if (text := self.description_override(spec)) is not None}


class _EveryTool:
    """One plain function as hooks: it decides every tool's calls."""

    def __init__(self, hook: DecisionHook) -> None:
        self.hook = hook

    def decision_hooks_for(self, name: str) -> list[DecisionHook]:
        return [self.hook]


def as_tool_hooks(hooks: ToolHooks | DecisionHook) -> ToolHooks:
    """``hooks`` as ``ToolHooks``: a hook set or toolset as is, a plain function as a hook for every tool."""
    if isinstance(hooks, ToolHooks):
        return hooks
    if callable(hooks):
        return _EveryTool(hooks)
    raise TypeError(
        f"expected a HookSet, a Toolset or a function (call, spec) -> Decision | None, got {hooks!r}"
    )
