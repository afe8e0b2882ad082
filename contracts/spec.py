"""``ToolSpec``: everything the mesh knows about one tool.

A spec travels in the catalog and is what ``toolmesh tools`` lists.  New
fields always get defaults so older nodes and clients keep decoding it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

__all__ = ["CachePolicy", "TaskSupport", "ToolAnnotations", "ToolExample", "ToolSpec"]

TaskSupport = Literal["forbidden", "optional", "required"]


class ToolAnnotations(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, rename="camel"):
    """MCP behaviour hints; on the wire in MCP's camelCase (``readOnlyHint`` …).

    A tool's own annotation keys (``confidence``, ``category`` …) travel in
    ``extra``; MCP lists hints and own keys in one flat map (``as_mcp`` and
    ``from_mcp`` convert).
    """

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
    """The tool's own annotation keys, as given; a key naming a standard hint is ignored."""

    def __hash__(self) -> int:
        # ``extra`` is a dict; equal annotations have equal hints, so the hints alone keep them hashable.
        return hash((self.title, self.read_only_hint, self.destructive_hint, self.idempotent_hint, self.open_world_hint))

    def as_mcp(self) -> dict[str, Any]:
        """One flat map as MCP lists it: the standard hints in camelCase, the tool's own keys beside them."""
        hints = msgspec.to_builtins(self)
        own = hints.pop("extra", {})
        return {**hints, **{key: value for key, value in own.items() if key not in _HINT_KEYS}}

    @classmethod
    def from_mcp(cls, mapping: Mapping[str, Any]) -> ToolAnnotations:
        """Split a flat MCP annotations map into the standard hints and ``extra``.

        A hint set to ``null`` counts as unset; a hint of the wrong type raises
        ``msgspec.ValidationError``.
        """
        hints = {key: value for key, value in mapping.items() if key in _HINT_KEYS and value is not None}
        own = {key: value for key, value in mapping.items() if key not in _HINT_KEYS}
        return msgspec.convert({**hints, "extra": own}, cls)


_HINT_KEYS = frozenset(ToolAnnotations.__struct_encode_fields__) - {"extra"}
"""The standard hints' wire names (``readOnlyHint`` …)."""


class CachePolicy(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """Opt-in result caching for one tool.

    ``ttl`` is in seconds; ``None`` keeps entries until the cache evicts them.
    """

    enabled: bool = True
    ttl: float | None = 300.0


class ToolExample(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """A sample call, shown to people and agents."""

    input: dict[str, Any]
    output: Any = None
    description: str | None = None


class ToolSpec(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """The public description of a tool.

    ``name`` follows MCP rules (1–128 characters of ``A-Za-z0-9_.-``);
    ``source`` names the plugin that executes it.
    """

    name: str
    description: str = ""
    title: str | None = None
    version: str = "0.1.0"
    tags: tuple[str, ...] = ()
    input_schema: dict[str, Any] = msgspec.field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    meta: dict[str, Any] | None = None
    source: str = ""
    task_support: TaskSupport = "forbidden"
    cache: CachePolicy | None = None
    timeout: float | None = None
    max_usage_count: int | None = None
    result_as_answer: bool = False
    required_env: tuple[str, ...] = ()
    required_secrets: tuple[str, ...] = ()
    examples: tuple[ToolExample, ...] = ()
    available: bool = True
    unavailable_reason: str | None = None
    durable: bool = False
    """Every call of this tool takes the durable path (JetStream work queue, stored result)."""
    max_concurrency: int | None = None
    """Calls of this tool one node runs at once; more get ``unavailable`` with a retry hint."""
