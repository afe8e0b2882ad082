"""``Toolset``: the tools of one agent turn, with Lutum's availability, requirements and hooks.

::

    tools = Toolset("app", [search, read_file]).add(delete_file, off=True).include(data_tools)
    turn = tools.resolve(Availability.default_plus("delete_file"), Requirement.specific("search"))
    request["tools"] = turn.definitions("openai")
    request["tool_choice"] = turn.tool_choice("openai")

Availability picks the definitions sent to the model (``DEFAULT``: the
tools not marked off; ``ALL``; ``only(...)``; ``default_plus(...)``; a
nested toolset's name stands for all its tools).  A requirement asks the
model for any tool or one specific tool; requiring a tool that is not
available is a ``ToolConstraintError`` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import msgspec
from toolmesh.contracts import ToolSpec

from .definitions import DefinitionFormat, definitions
from .errors import ToolConstraintError
from .hook_set import DecisionHook, DescriptionHook, HookSet
from .local_tools import LocalTool

__all__ = ["Availability", "DecisionHook", "DescriptionHook", "Requirement", "Toolset", "Turn"]


@dataclass(frozen=True)
class Availability:
    """Which tools are offered: ``DEFAULT``, ``ALL``, ``only(...)`` or ``default_plus(...)``."""

    mode: Literal["default", "all", "only", "default_plus"] = "default"
    names: tuple[str, ...] = ()

    DEFAULT: ClassVar[Availability]
    ALL: ClassVar[Availability]

    @classmethod
    def only(cls, *names: str) -> Availability:
        """Exactly these tools (or nested toolsets), on or off by default."""
        return cls("only", names)

    @classmethod
    def default_plus(cls, *names: str) -> Availability:
        """The default tools plus these."""
        return cls("default_plus", names)


Availability.DEFAULT = Availability("default")
Availability.ALL = Availability("all")


@dataclass(frozen=True)
class Requirement:
    """What the model is asked to do: ``OPTIONAL``, ``AT_LEAST_ONE`` or ``specific(tool)``."""

    mode: Literal["optional", "at_least_one", "specific"] = "optional"
    tool: str | None = None

    OPTIONAL: ClassVar[Requirement]
    AT_LEAST_ONE: ClassVar[Requirement]

    @classmethod
    def specific(cls, tool: str) -> Requirement:
        """The model must call ``tool``."""
        return cls("specific", tool)


Requirement.OPTIONAL = Requirement("optional")
Requirement.AT_LEAST_ONE = Requirement("at_least_one")


@dataclass(frozen=True)
class Turn:
    """A resolved toolset: the tools offered this turn, in order, and the requirement."""

    toolset: Toolset
    specs: tuple[ToolSpec, ...]
    requirement: Requirement

    @property
    def names(self) -> tuple[str, ...]:
        """The offered tool names."""
        return tuple(spec.name for spec in self.specs)

    def get(self, name: str) -> ToolSpec | None:
        """The offered spec named ``name``."""
        return next((spec for spec in self.specs if spec.name == name), None)

    def definitions(self, format: DefinitionFormat = "openai") -> list[dict[str, Any]]:
        """The offered tools as ``format`` definitions (descriptions overridden)."""
        return definitions(self.specs, format)

    def tool_choice(self, format: DefinitionFormat = "openai") -> Any:
        """The requirement in ``format``'s terms (``None`` for MCP, which has none)."""
        mode, tool = self.requirement.mode, self.requirement.tool
        if format == "openai":
            if mode == "specific":
                return {"type": "function", "function": {"name": tool}}
            return "required" if mode == "at_least_one" else "auto"
        if format == "anthropic":
            if mode == "specific":
                return {"type": "tool", "name": tool}
            return {"type": "any" if mode == "at_least_one" else "auto"}
        return None


class Toolset:
    """Tools and nested toolsets for one agent turn, with description and decision hooks."""

    def __init__(
        self, name: str, tools: Iterable[ToolSpec | LocalTool] = (), *, off: Iterable[str] = ()
    ) -> None:
        self.name = name
        self._members: list[tuple[ToolSpec | Toolset, bool]] = []
        self.local_tools: dict[str, LocalTool] = {}
        self.hooks = HookSet()
        """This toolset's own decision and description hooks (a nested toolset keeps its own)."""
        self._descriptions: dict[str, str] = {}
        hidden = set(off)
        for tool in tools:
            spec = tool.spec if isinstance(tool, LocalTool) else tool
            self.add(tool, off=spec.name in hidden)

    # -------------------------------------------------------------- building

    def add(self, tool: ToolSpec | LocalTool, *, off: bool = False) -> Toolset:
        """Add a tool; ``off`` hides it from ``Availability.DEFAULT``."""
        if isinstance(tool, LocalTool):
            self.local_tools[tool.spec.name] = tool
            tool = tool.spec
        self._members.append((tool, not off))
        return self

    def include(self, toolset: Toolset, *, off: bool = False) -> Toolset:
        """Nest another toolset; ``off`` hides all of it from ``Availability.DEFAULT``."""
        self._members.append((toolset, not off))
        self.local_tools.update(toolset.local_tools)
        return self

    def describe(self, tool: str, description: str) -> Toolset:
        """Override one tool's description for every turn (applied after hooks; last call wins)."""
        self._descriptions[tool] = description
        return self

    def add_description_hook(self, hook: DescriptionHook, *, tool: str | None = None) -> Toolset:
        """Compute description overrides (for ``tool`` or all tools); the last registered hook wins."""
        self.hooks.register_description_hook(hook, tool=tool)
        return self

    def add_hook(self, hook: DecisionHook, *, tool: str | None = None) -> Toolset:
        """Decide calls (of ``tool`` or all tools) before they run; hooks run in registration order."""
        self.hooks.register_hook(hook, tool=tool)
        return self

    def add_hooks(self, hooks: HookSet) -> Toolset:
        """Merge a ``HookSet`` into this toolset's hooks (they run after those already registered)."""
        self.hooks.extend(hooks)
        return self

    @property
    def decision_hooks(self) -> list[tuple[str | None, DecisionHook]]:
        """This toolset's own decision hooks as ``(tool or None, hook)``, in registration order."""
        return self.hooks.decision_hooks

    # -------------------------------------------------------------- resolving

    def entries(self) -> list[tuple[ToolSpec, bool, tuple[str, ...]]]:
        """Every tool, flattened: (spec, on by default, names of the nested toolsets holding it)."""
        flat: list[tuple[ToolSpec, bool, tuple[str, ...]]] = []
        for member, on in self._members:
            if isinstance(member, Toolset):
                for spec, inner_on, groups in member.entries():
                    flat.append((spec, on and inner_on, (member.name, *groups)))
            else:
                flat.append((member, on, ()))
        return flat

    def holds(self, name: str) -> bool:
        """True when ``name`` is one of this toolset's tools (nested ones included)."""
        return any(spec.name == name for spec, _, _ in self.entries())

    def _nested_holding(self, name: str) -> list[Toolset]:
        return [member for member, _ in self._members if isinstance(member, Toolset) and member.holds(name)]

    def description_override(self, spec: ToolSpec) -> str | None:
        """The description this toolset gives ``spec`` (nested toolsets', hooks, ``describe``: last wins)."""
        description = None
        for toolset in self._nested_holding(spec.name):
            description = toolset.description_override(spec) or description
        override = self.hooks.description_override(spec)
        description = description if override is None else override
        return self._descriptions.get(spec.name, description)

    def _described(self, spec: ToolSpec) -> ToolSpec:
        description = self.description_override(spec)
        return spec if description is None else msgspec.structs.replace(spec, description=description)

    def decision_hooks_for(self, name: str) -> list[DecisionHook]:
        """The hooks deciding calls of ``name``: nested toolsets' first, each in registration order."""
        hooks: list[DecisionHook] = []
        for toolset in self._nested_holding(name):
            hooks.extend(toolset.decision_hooks_for(name))
        return hooks + self.hooks.decision_hooks_for(name)

    def resolve(
        self,
        availability: Availability = Availability.DEFAULT,
        requirement: Requirement = Requirement.OPTIONAL,
    ) -> Turn:
        """The tools offered this turn; raises ``ToolConstraintError`` if the requirement cannot be met."""
        entries = self.entries()
        known = {spec.name for spec, _, _ in entries} | {
            group for _, _, groups in entries for group in groups
        }
        unknown = [name for name in availability.names if name not in known]
        if unknown:
            raise ToolConstraintError(
                f"toolset {self.name!r} has no tool or nested toolset named {', '.join(map(repr, unknown))};"
                f" it has: {', '.join(sorted(known))}"
            )
        wanted = set(availability.names)

        def picked(spec: ToolSpec, on: bool, groups: tuple[str, ...]) -> bool:
            named = spec.name in wanted or bool(wanted.intersection(groups))
            if availability.mode == "all":
                return True
            if availability.mode == "only":
                return named
            if availability.mode == "default_plus":
                return on or named
            return on

        specs: list[ToolSpec] = []
        seen: set[str] = set()
        for spec, on, groups in entries:
            if spec.name not in seen and picked(spec, on, groups):
                seen.add(spec.name)
                specs.append(self._described(spec))
        if requirement.mode == "specific" and requirement.tool not in seen:
            raise ToolConstraintError(
                f"tool {requirement.tool!r} is required but not available this turn"
                f" (available: {', '.join(sorted(seen)) or 'none'});"
                " make it available or require another tool"
            )
        if requirement.mode == "at_least_one" and not specs:
            raise ToolConstraintError(
                "a tool call is required but no tool is available this turn; make at least one tool available"
            )
        return Turn(self, tuple(specs), requirement)
