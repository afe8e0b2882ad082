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
    ToolSelectionError,
    ToolUsageLimitExceeded,
)
from .events import EVENT_KINDS, AgentInfo, EventEmitter, TaskInfo
from .hooks import toolmesh_cli, toolmesh_tool_spec
from .local_tools import HIT_CACHE, LocalTool, hit_cache_tool
from .parsing import FinalAnswer, ParsedCall, parse_agent_output, parse_arguments
from .replay import ReplayStep, ScriptError, ScriptLine, parse_script, read_script, replay
from .rounds import REJECTION_PREFIX, CallResult, Round, RoundPlan, ToolCall
from .selection import FUZZY_THRESHOLD, ToolSelector, fuzzy_match, normalize_tool_name
from .tool_usage import OPENAI_BIGGER_MODELS, Observation, ToolUsage
from .toolset import Availability, Requirement, Toolset, Turn
from .usage import UsageLedger

__all__ = [
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
    "TaskInfo",
    "ToolCall",
    "ToolConstraintError",
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
