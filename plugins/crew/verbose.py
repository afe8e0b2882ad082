"""Verbose output: each tool use printed the way crewAI's verbose agents print it."""

from __future__ import annotations

from typing import Any, TextIO

from toolmesh.contracts import ToolEvent, encode

__all__ = ["print_tool_event", "tool_event_lines"]


def _shown(value: Any) -> str:
    try:
        return encode(value).decode()
    except (TypeError, ValueError):
        return repr(value)


def tool_event_lines(event: ToolEvent, usage: tuple[int, int] | None = None) -> list[str]:
    """The lines printed for one lifecycle event; ``usage`` is (uses so far, limit) of a limited tool."""
    attributes = event.attributes or {}
    agent = attributes.get("agent_role")
    who = f" ({agent})" if agent else ""
    if event.kind == "tool_usage_started":
        return [f"Using Tool: {event.tool}{who}", f"Tool Input: {_shown(attributes.get('tool_args'))}"]
    if event.kind == "tool_usage_finished":
        source = " (from cache)" if attributes.get("from_cache") else ""
        lines = [f"Tool Output{source}: {attributes.get('output', '')}"]
        if usage is not None:
            lines.append(f"Tool '{event.tool}' usage: {usage[0]}/{usage[1]}")
        return lines
    return [f"Tool Error ({event.kind}) {event.tool}{who}: {attributes.get('error', '')}"]


def print_tool_event(event: ToolEvent, usage: tuple[int, int] | None, stream: TextIO) -> None:
    """Print :func:`tool_event_lines` to ``stream`` at once (crewAI prints as each step happens)."""
    print("\n".join(tool_event_lines(event, usage)), file=stream, flush=True)
