"""Tools that run in the agent's own process (agent tools, the cache reader) beside the mesh's tools."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from toolmesh.contracts import ToolSpec

from .cache import CrewCache, split_cache_key
from .errors import ParseError
from .parsing import parse_arguments

__all__ = ["HIT_CACHE", "LocalTool", "hit_cache_tool"]

HIT_CACHE = "hit_cache"
"""Name of the cache-reading tool (crewAI's "Hit Cache", normalized)."""

LocalFunction = Callable[[dict[str, Any]], Any | Awaitable[Any]]


@dataclass(frozen=True)
class LocalTool:
    """A tool executed in-process: its spec (``source="crew"``) and a function of the arguments object."""

    spec: ToolSpec
    function: LocalFunction

    @functools.cached_property
    def is_async(self) -> bool:
        """True when calling the function returns a coroutine (``async def``, also as ``__call__``)."""
        function = self.function
        # a callable object with ``async def __call__`` is a coroutine function only through its type
        return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(type(function).__call__)

    async def run(self, arguments: dict[str, Any]) -> Any:
        """Run the function: an async one on the event loop, a sync one in a worker thread."""
        if self.is_async:
            return await self.function(arguments)
        # a sync tool may block (files, mimetypes' tables); abandon_on_cancel: a cancelled caller moves on
        value = await anyio.to_thread.run_sync(self.function, arguments, abandon_on_cancel=True)
        if inspect.isawaitable(value):  # a sync wrapper around a coroutine function
            value = await value
        return value


def hit_cache_tool(cache: CrewCache) -> LocalTool:
    """crewAI's CacheTools: read a result straight from the crew cache by its ``tool:…|input:…`` key."""

    # async: it only reads the in-memory cache, which the event loop owns (a thread could race its mirror)
    async def hit_cache(arguments: dict[str, Any]) -> Any:
        name, raw = split_cache_key(str(arguments.get("key", "")))
        try:  # any JSON spelling of the arguments finds the entry (keys are canonical JSON)
            entry = cache.read(name, parse_arguments(raw))
        except ParseError:
            entry = cache.get(f"tool:{name}|input:{raw}")
        if entry is None:
            return f"No cached result for {name!r} with input {raw}; call the tool itself."
        return entry.structured_content if entry.structured_content is not None else entry.text

    spec = ToolSpec(
        name=HIT_CACHE,
        description="Reads directly from the cache. Input: key = 'tool:{name}|input:{json arguments}'.",
        source="crew",
        input_schema={
            "type": "object",
            "properties": {"key": {"type": "string", "description": "tool:{name}|input:{json arguments}"}},
            "required": ["key"],
        },
    )
    return LocalTool(spec=spec, function=hit_cache)
