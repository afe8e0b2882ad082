"""``NodeEntry``: what one node puts in the shared catalog.

Each node keeps one entry (key = node id) in the catalog key-value bucket and
rewrites it every ``heartbeat`` seconds; readers drop entries older than
``ttl`` so a killed node's tools leave the catalog without anyone deleting them.

A node that holds the mesh's catalog secret signs its entry: the stored value
is the entry's JSON object with one ``"signature"`` member appended last, and
the signature covers the exact bytes of that object without the member (the
value with its final ``,"signature":"..."`` cut off, closing brace kept).
Readers that do not verify simply decode the value: the field is optional.
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
    signature: str = ""
    """``v1.<hex HMAC-SHA256>`` of this entry's JSON without this member (empty: unsigned); always
    written as the object's last member, see the module docstring."""
