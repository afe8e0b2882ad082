"""``NodeEntry``: what one node puts in the shared catalog.

Each node keeps one entry (key = node id) in the catalog key-value bucket and
rewrites it every ``heartbeat`` seconds; readers drop entries older than
``ttl`` so a killed node's tools leave the catalog without anyone deleting them.
"""

from __future__ import annotations

import msgspec

from .spec import ToolSpec

__all__ = ["NodeEntry"]


class NodeEntry(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """A node and the tools it serves right now."""

    node: str
    host: str = ""
    pid: int = 0
    version: str = ""
    started_at: float = 0.0
    heartbeat_at: float = 0.0
    heartbeat: float = 2.0
    ttl: float = 6.0
    tools: tuple[ToolSpec, ...] = ()
    draining: bool = False
