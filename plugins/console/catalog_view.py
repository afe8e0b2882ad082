"""The mesh's catalog as the console shows it: tools with the nodes serving them, searchable and filtered.

Specs reach the page only through :func:`public_view`, which drops whatever could
carry a secret (header, environment and credential values in ``meta``): the page
sees secrets' names (``required_secrets``), never their values.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec
from toolmesh.contracts import NodeEntry, ToolSpec

__all__ = ["CatalogSnapshot", "CatalogTool", "public_meta", "public_view"]

_SECRET_KEY = re.compile(
    r"secret|token|passw(or)?d|credential|api[_-]?key|authorization|cookie|environment|private[_-]?key"
    r"|(^|[_-])(auth|headers?|env)([_-]|$)",
    re.IGNORECASE,
)
_REDACTED = "(hidden)"


def public_meta(value: Any) -> Any:
    """``value`` with every member whose key names a secret, a header or an environment replaced."""
    if isinstance(value, dict):
        return {
            key: (_REDACTED if _SECRET_KEY.search(str(key)) else public_meta(item))
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [public_meta(item) for item in value]
    return value


def public_view(spec: ToolSpec) -> dict[str, Any]:
    """The spec as plain JSON for the page, ``meta`` cleaned by :func:`public_meta`."""
    view: dict[str, Any] = msgspec.to_builtins(spec)
    if spec.meta:
        view["meta"] = public_meta(spec.meta)
    return view


@dataclass(slots=True)
class CatalogTool:
    """One tool of the catalog and the nodes that serve it."""

    spec: ToolSpec
    nodes: list[str] = field(default_factory=list)
    haystack: str = ""

    @property
    def plugin(self) -> str:
        """The plugin that executes the tool (``spec.source``)."""
        return self.spec.source or "?"


@dataclass(slots=True)
class CatalogSnapshot:
    """The catalog at one moment: tools by name, nodes, and the counts the filters show."""

    tools: dict[str, CatalogTool] = field(default_factory=dict)
    nodes: list[NodeEntry] = field(default_factory=list)
    read_at: float = 0.0

    @classmethod
    def build(cls, nodes: list[NodeEntry], visible: set[str] | None = None) -> CatalogSnapshot:
        """Merge the nodes' tool lists; ``visible`` (when given) limits the tools to those names."""
        tools: dict[str, CatalogTool] = {}
        for entry in sorted(nodes, key=lambda entry: entry.node):
            for spec in entry.tools:
                if visible is not None and spec.name not in visible:
                    continue
                known = tools.get(spec.name)
                if known is None:
                    haystack = " ".join(
                        (spec.name, spec.title or "", spec.description, " ".join(spec.tags))
                    ).lower()
                    known = tools[spec.name] = CatalogTool(spec=spec, haystack=haystack)
                known.nodes.append(entry.node)
        ordered = dict(sorted(tools.items()))
        return cls(tools=ordered, nodes=sorted(nodes, key=lambda entry: entry.node), read_at=time.time())

    def select(self, query: str = "", plugin: str = "", node: str = "", tag: str = "") -> list[CatalogTool]:
        """The tools matching every filter; ``query`` matches words of name, title, description and tags."""
        words = query.lower().split()
        chosen = []
        for tool in self.tools.values():
            if plugin and tool.plugin != plugin:
                continue
            if node and node not in tool.nodes:
                continue
            if tag and tag not in tool.spec.tags:
                continue
            if words and not all(word in tool.haystack for word in words):
                continue
            chosen.append(tool)
        return chosen

    def facets(self) -> dict[str, list[tuple[str, int]]]:
        """Tool counts per plugin, node and tag, for the filters."""
        plugins: Counter[str] = Counter()
        nodes: Counter[str] = Counter()
        tags: Counter[str] = Counter()
        for tool in self.tools.values():
            plugins[tool.plugin] += 1
            nodes.update(tool.nodes)
            tags.update(tool.spec.tags)
        return {
            "plugin": sorted(plugins.items()),
            "node": sorted(nodes.items()),
            "tag": sorted(tags.items(), key=lambda item: (-item[1], item[0]))[:200],
        }
