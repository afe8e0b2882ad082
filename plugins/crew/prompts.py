"""The texts an agent reads: crewAI's wording for format reminders and lifecycle errors."""

from __future__ import annotations

import json
from collections.abc import Iterable

from toolmesh.contracts import ToolSpec

__all__ = [
    "FORMAT_REMINDER",
    "REPEATED_USAGE",
    "TOOLS_REMINDER",
    "describe_tool",
    "describe_tools",
    "format_reminder",
    "tool_names",
    "usage_limit_message",
]

REPEATED_USAGE = (
    "I tried reusing the same input, I must stop using this action input."
    " I'll try something else instead.\n\n"
)
"""What an agent gets instead of a result when it repeats its previous call exactly."""

FORMAT_REMINDER = (
    "Decide if you need a tool or can provide the final answer. Use one at a time.\n"
    "To use a tool, use:\n"
    "Thought: [reasoning]\n"
    "Action: [name from {tool_names}]\n"
    "Action Input: [JSON object]\n\n"
    "To provide the final answer, use:\n"
    "Thought: [reasoning]\n"
    "Final Answer: [complete response]"
)
"""The expected format, appended to errors so the agent can correct itself."""

TOOLS_REMINDER = (
    "\nYou ONLY have access to the following tools, and should NEVER make up tools that are not listed here:"
    "\n\n{tools}\n\n"
    "IMPORTANT: Use the following format in your response:\n\n"
    "```\n"
    "Thought: you should always think about what to do\n"
    "Action: the action to take, only one name of [{tool_names}], just the name, exactly as it's written.\n"
    "Action Input: the input to the action, just a simple JSON object, enclosed in curly braces,"
    ' using " to wrap'
    " keys and values.\n"
    "Observation: the result of the action\n"
    "```"
)
"""Re-added to a result every ``remember_format_after_usages`` tool uses."""


def describe_tool(spec: ToolSpec) -> str:
    """One tool as an agent sees it: name, argument schema, description."""
    arguments = json.dumps(spec.input_schema.get("properties", {}), sort_keys=True)
    return f"Tool Name: {spec.name}\nTool Arguments: {arguments}\nTool Description: {spec.description}"


def describe_tools(specs: Iterable[ToolSpec]) -> str:
    """Every tool, one block each."""
    return "\n".join(describe_tool(spec) for spec in specs)


def tool_names(specs: Iterable[ToolSpec]) -> str:
    """The names, comma-separated, as the format reminder lists them."""
    return ", ".join(spec.name for spec in specs)


def format_reminder(specs: Iterable[ToolSpec]) -> str:
    """The format reminder filled with the available tool names."""
    return FORMAT_REMINDER.format(tool_names=tool_names(specs))


def usage_limit_message(tool: str, limit: int, agent: str | None = None) -> str:
    """crewAI's usage-limit text, naming the agent when the limit is per agent."""
    who = f" for agent '{agent}'" if agent else ""
    return f"Tool '{tool}' has reached its usage limit of {limit} times{who} and cannot be used anymore."
