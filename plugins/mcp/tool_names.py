"""Mesh names for remote MCP tools: ``SERVER_TOOL``, sanitised to MCP rules and at most 128 characters."""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_NAME", "SOURCE", "mesh_tool_name"]

SOURCE = "mcp"
"""``ToolSpec.source`` of every remote MCP tool."""

MAX_NAME = 128
"""Longest tool name MCP allows."""

_INVALID = re.compile(r"[^A-Za-z0-9_.\-]")


def mesh_tool_name(server: str, tool: str) -> str:
    """``f"{server}_{tool}"`` with invalid characters replaced by ``_``; long names keep a hash suffix."""
    name = _INVALID.sub("_", f"{server}_{tool}") or "_"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"
