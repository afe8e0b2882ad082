"""crewAI tools for the adapter tests; importing this module needs the real crewai package."""

from __future__ import annotations

import os
from typing import Any

# crewai reports usage to its own servers unless told not to; the tests talk to loopback only.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
# litellm (a dependency of older crewai releases) downloads its model price list at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import warnings

from pydantic import BaseModel, Field

with warnings.catch_warnings():
    # crewai and its dependencies warn while they are imported (lazy submodules, deprecated importlib
    # calls): their own noise, nothing these tests check
    warnings.simplefilter("ignore", ImportWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    import crewai.tools

BaseTool, EnvVar = crewai.tools.BaseTool, crewai.tools.EnvVar


class ShoutInput(BaseModel):
    text: str = Field(..., description="What to shout")


class ShoutTool(BaseTool):
    name: str = "Shout Text"
    description: str = "Shout the text back."
    args_schema: type[BaseModel] = ShoutInput
    max_usage_count: int | None = 5

    def _run(self, text: str) -> str:
        return text.upper() + "!"


class NeedsKey(ShoutTool):
    name: str = "Needs Key"
    env_vars: list[EnvVar] = [  # noqa: RUF012 - a pydantic field of crewAI's BaseTool, copied per instance
        EnvVar(name="CREW_ADAPTER_KEY", description="the key", required=True)
    ]

with warnings.catch_warnings():
    warnings.simplefilter("ignore", ImportWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    from crewai.llms.base_llm import BaseLLM

SCRIPT: list[str] = []
"""What ``ScriptedLLM`` answers next, one entry per call, in order."""
PROMPTS: list[str] = []
"""Every prompt ``ScriptedLLM`` was given, as one text (tool observations show up there)."""


class ScriptedLLM(BaseLLM):
    """A language model answering from ``SCRIPT``: crewAI's own agent loop parses and runs the tool calls."""

    def call(self, messages: Any, *_: Any, **__: Any) -> str:
        text = messages if isinstance(messages, str) else "\n".join(str(m["content"]) for m in messages)
        PROMPTS.append(text)
        return SCRIPT.pop(0)

    def supports_function_calling(self) -> bool:
        return False  # the text protocol (Action / Action Input), parsed by crewAI itself

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 8192
