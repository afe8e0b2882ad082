"""The crew plugin: crewAI's tool-usage lifecycle and Lutum-style toolsets on top of the mesh.

Installed through the ``toolmesh.plugins`` entry point::

    [project.entry-points."toolmesh.plugins"]
    crew = "toolmesh.plugins.crew"

An agent's raw output goes in, an observation comes out::

    async with Mesh() as mesh:
        usage = await ToolUsage.connect(mesh)
        observation = await usage.use('Action: add\\nAction Input: {"a": 1, "b": 2}', agent="researcher")

On nodes the plugin only marks tools whose environment variables are missing
unavailable; everything else runs beside the agent (see ``docs/crew.md``).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from toolmesh import lazy_exports

if TYPE_CHECKING:  # the names below load on first use (PEP 562): `toolmesh --help` imports this package
    from .agent_tools import (
        add_image_tool,
        agent_subject,
        ask_question_tool,
        delegate_work_tool,
        read_file_tool,
        serve_agent,
    )
    from .cache import CrewCache, ShouldCache, bucket_name, cache_key, spec_should_cache, split_cache_key
    from .definitions import definitions
    from .env import EnvVar, check_env, env_vars, with_env_vars
    from .errors import (
        CoworkerError,
        CrewError,
        ParseError,
        PathOutsideRoot,
        RoundCommitError,
        ToolConstraintError,
        ToolRoundError,
        ToolSelectionError,
        ToolUsageLimitExceeded,
    )
    from .events import EVENT_KINDS, AgentInfo, EventEmitter, TaskInfo
    from .hook_set import HookSet, ToolHooks
    from .hooks import toolmesh_cli, toolmesh_tool_spec
    from .local_tools import HIT_CACHE, LocalTool, hit_cache_tool
    from .observation import Observation
    from .parsing import FinalAnswer, ParsedCall, parse_agent_output, parse_arguments, provider_call_id
    from .replay import ReplayStep, ScriptError, ScriptLine, parse_script, read_script, replay
    from .rounds import DECISION_LOGGER, REJECTION_PREFIX, CallResult, Round, RoundPlan, ToolCall
    from .selection import FUZZY_THRESHOLD, ToolSelector, fuzzy_match, normalize_tool_name
    from .sync_usage import SyncToolUsage
    from .tool_usage import OPENAI_BIGGER_MODELS, ToolUsage
    from .toolset import Availability, Requirement, Toolset, Turn
    from .usage import UsageLedger

_MODULE_OF = {
    **dict.fromkeys(
        (
            "add_image_tool",
            "agent_subject",
            "ask_question_tool",
            "delegate_work_tool",
            "read_file_tool",
            "serve_agent",
        ),
        "agent_tools",
    ),
    **dict.fromkeys(
        (
            "CrewCache",
            "ShouldCache",
            "bucket_name",
            "cache_key",
            "spec_should_cache",
            "split_cache_key",
        ),
        "cache",
    ),
    "definitions": "definitions",
    **dict.fromkeys(("EnvVar", "check_env", "env_vars", "with_env_vars"), "env"),
    **dict.fromkeys(
        (
            "CoworkerError",
            "CrewError",
            "ParseError",
            "PathOutsideRoot",
            "RoundCommitError",
            "ToolConstraintError",
            "ToolRoundError",
            "ToolSelectionError",
            "ToolUsageLimitExceeded",
        ),
        "errors",
    ),
    **dict.fromkeys(("EVENT_KINDS", "AgentInfo", "EventEmitter", "TaskInfo"), "events"),
    **dict.fromkeys(("HookSet", "ToolHooks"), "hook_set"),
    **dict.fromkeys(("toolmesh_cli", "toolmesh_tool_spec"), "hooks"),
    **dict.fromkeys(("HIT_CACHE", "LocalTool", "hit_cache_tool"), "local_tools"),
    **dict.fromkeys(
        ("FinalAnswer", "ParsedCall", "parse_agent_output", "parse_arguments", "provider_call_id"), "parsing"
    ),
    **dict.fromkeys(
        (
            "ReplayStep",
            "ScriptError",
            "ScriptLine",
            "parse_script",
            "read_script",
            "replay",
        ),
        "replay",
    ),
    **dict.fromkeys(
        ("DECISION_LOGGER", "REJECTION_PREFIX", "CallResult", "Round", "RoundPlan", "ToolCall"), "rounds"
    ),
    **dict.fromkeys(("FUZZY_THRESHOLD", "ToolSelector", "fuzzy_match", "normalize_tool_name"), "selection"),
    "SyncToolUsage": "sync_usage",
    "Observation": "observation",
    **dict.fromkeys(("OPENAI_BIGGER_MODELS", "ToolUsage"), "tool_usage"),
    **dict.fromkeys(("Availability", "Requirement", "Toolset", "Turn"), "toolset"),
    "UsageLedger": "usage",
}


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, load_on_dir=True)  # pluggy reads dir()


_SHADOWED = frozenset(("definitions", "replay",))
"""Exported functions named like the submodule that defines them."""


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        # Importing a submodule binds it on its package: for these names that would hide the function
        # exported here (as eager imports in this file did not), so the function keeps the name.
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "DECISION_LOGGER",
    "EVENT_KINDS",
    "FUZZY_THRESHOLD",
    "HIT_CACHE",
    "OPENAI_BIGGER_MODELS",
    "REJECTION_PREFIX",
    "AgentInfo",
    "Availability",
    "CallResult",
    "CoworkerError",
    "CrewCache",
    "CrewError",
    "EnvVar",
    "EventEmitter",
    "FinalAnswer",
    "HookSet",
    "LocalTool",
    "Observation",
    "ParseError",
    "ParsedCall",
    "PathOutsideRoot",
    "ReplayStep",
    "Requirement",
    "Round",
    "RoundCommitError",
    "RoundPlan",
    "ScriptError",
    "ScriptLine",
    "ShouldCache",
    "SyncToolUsage",
    "TaskInfo",
    "ToolCall",
    "ToolConstraintError",
    "ToolHooks",
    "ToolRoundError",
    "ToolSelectionError",
    "ToolSelector",
    "ToolUsage",
    "ToolUsageLimitExceeded",
    "Toolset",
    "Turn",
    "UsageLedger",
    "add_image_tool",
    "agent_subject",
    "ask_question_tool",
    "bucket_name",
    "cache_key",
    "check_env",
    "definitions",
    "delegate_work_tool",
    "env_vars",
    "fuzzy_match",
    "hit_cache_tool",
    "normalize_tool_name",
    "parse_agent_output",
    "parse_arguments",
    "parse_script",
    "provider_call_id",
    "read_file_tool",
    "read_script",
    "replay",
    "serve_agent",
    "spec_should_cache",
    "split_cache_key",
    "toolmesh_cli",
    "toolmesh_tool_spec",
    "with_env_vars",
]
