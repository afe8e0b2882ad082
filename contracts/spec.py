"""``ToolSpec``: everything the mesh knows about one tool.

A spec travels in the catalog and is what ``toolmesh tools`` lists.  New
fields always get defaults so older nodes and clients keep decoding it.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = ["CachePolicy", "TaskSupport", "ToolAnnotations", "ToolExample", "ToolSpec"]

TaskSupport = Literal["forbidden", "optional", "required"]


class ToolAnnotations(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, rename="camel"):
    """MCP behaviour hints; on the wire in MCP's camelCase (``readOnlyHint`` …)."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


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
