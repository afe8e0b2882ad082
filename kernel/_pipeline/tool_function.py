"""``@toolmesh.tool``: mark a Python function as a mesh tool.

The decorator only records metadata; the ``python`` plugin turns a
``ToolFunction`` into a ``ToolSpec`` (schemas from the type hints) and runs it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, overload

import msgspec
from toolmesh._errors import ToolDefinitionError
from toolmesh.contracts import CachePolicy, TaskSupport, ToolAnnotations, ToolExample, is_valid_tool_name

__all__ = ["ToolFunction", "tool"]


@dataclass(frozen=True)
class ToolFunction:
    """A function plus the tool metadata given to ``@toolmesh.tool``; still callable as before."""

    function: Callable[..., Any]
    name: str
    description: str
    title: str | None = None
    version: str = "0.1.0"
    tags: tuple[str, ...] = ()
    timeout: float | None = None
    cache: CachePolicy | None = None
    annotations: ToolAnnotations | None = None
    max_usage_count: int | None = None
    result_as_answer: bool = False
    examples: tuple[ToolExample, ...] = ()
    meta: dict[str, Any] | None = field(default=None)
    durable: bool = False
    max_concurrency: int | None = None
    input_schema: dict[str, Any] | None = None
    """Published instead of the schema derived from the type hints (arguments still convert to them)."""
    output_schema: dict[str, Any] | None = None
    """Published instead of the schema derived from the return annotation."""
    task_support: TaskSupport = "forbidden"
    required_env: tuple[str, ...] = ()
    """Environment variables the tool needs: without them it is listed unavailable, naming them."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    @property
    def is_async(self) -> bool:
        """True for ``async def`` tools, which run on the event loop instead of a worker thread."""
        return inspect.iscoroutinefunction(self.function)


def _cache_policy(cache: bool | float | CachePolicy | None) -> CachePolicy | None:
    if cache is None or cache is False:
        return None
    if cache is True:
        return CachePolicy()
    if isinstance(cache, CachePolicy):
        return cache
    if isinstance(cache, (int, float)) and cache > 0:
        return CachePolicy(ttl=float(cache))
    raise ToolDefinitionError(f"cache={cache!r} is not valid: use True, a TTL in seconds (> 0), or a CachePolicy")


def _tool_annotations(
    tool: str, annotations: ToolAnnotations | Mapping[str, Any] | None
) -> ToolAnnotations | None:
    """A flat MCP map (``{"readOnlyHint": True, "confidence": 0.95}``) becomes hints plus the tool's own keys."""
    if isinstance(annotations, Mapping):
        try:
            annotations = ToolAnnotations.from_mcp(annotations)
        except msgspec.ValidationError as exc:
            raise ToolDefinitionError(
                f"annotations of tool {tool!r} are not valid ({exc}): MCP's hints (readOnlyHint ...) take booleans"
                " (title a string) and your own keys need string names"
            ) from None
    elif annotations is not None and not isinstance(annotations, ToolAnnotations):
        raise ToolDefinitionError(
            f"annotations={annotations!r} for tool {tool!r}: use a ToolAnnotations or a mapping of MCP annotations"
        )
    try:
        msgspec.json.encode(annotations)
    except (TypeError, msgspec.EncodeError) as exc:
        raise ToolDefinitionError(f"annotations of tool {tool!r} must be JSON values: {exc}") from None
    return annotations


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_options(
    tool: str,
    input_schema: dict[str, Any] | None,
    output_schema: dict[str, Any] | None,
    task_support: str,
    required_env: tuple[str, ...],
) -> None:
    if input_schema is not None and (not isinstance(input_schema, dict) or input_schema.get("type") != "object"):
        raise ToolDefinitionError(
            f"input_schema of tool {tool!r} must be a JSON Schema object with \"type\": \"object\""
            f" (arguments are named), got {input_schema!r}"
        )
    if output_schema is not None and not isinstance(output_schema, dict):
        raise ToolDefinitionError(f"output_schema of tool {tool!r} must be a JSON Schema (a dict), got {output_schema!r}")
    if task_support not in ("forbidden", "optional", "required"):
        raise ToolDefinitionError(
            f"task_support={task_support!r} for tool {tool!r}: use 'forbidden', 'optional' or 'required'"
        )
    wrong = [name for name in required_env if not isinstance(name, str) or not _ENV_NAME.fullmatch(name)]
    if wrong:
        raise ToolDefinitionError(
            f"required_env of tool {tool!r} names {wrong!r}: use environment variable names such as 'API_KEY'"
        )


@overload
def tool(function: Callable[..., Any], /) -> ToolFunction: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    version: str = "0.1.0",
    tags: Iterable[str] = (),
    timeout: float | None = None,
    cache: bool | float | CachePolicy | None = None,
    annotations: ToolAnnotations | Mapping[str, Any] | None = None,
    max_usage_count: int | None = None,
    result_as_answer: bool = False,
    examples: Iterable[ToolExample] = (),
    meta: dict[str, Any] | None = None,
    durable: bool = False,
    max_concurrency: int | None = None,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    task_support: TaskSupport = "forbidden",
    required_env: Iterable[str] = (),
) -> Callable[[Callable[..., Any]], ToolFunction]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    version: str = "0.1.0",
    tags: Iterable[str] = (),
    timeout: float | None = None,
    cache: bool | float | CachePolicy | None = None,
    annotations: ToolAnnotations | Mapping[str, Any] | None = None,
    max_usage_count: int | None = None,
    result_as_answer: bool = False,
    examples: Iterable[ToolExample] = (),
    meta: dict[str, Any] | None = None,
    durable: bool = False,
    max_concurrency: int | None = None,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    task_support: TaskSupport = "forbidden",
    required_env: Iterable[str] = (),
) -> ToolFunction | Callable[[Callable[..., Any]], ToolFunction]:
    """Declare a tool, bare (``@tool``) or with options (``@tool(name=..., cache=60)``).

    The name defaults to the function's name, the description to its docstring;
    ``timeout`` is in seconds; ``cache`` is ``True``, a TTL in seconds or a
    ``CachePolicy``.  ``durable=True`` sends every call through the durable queue
    (survives node failure, runs once per request id); ``max_concurrency`` caps the
    calls of this tool one node runs at once (more get ``unavailable`` with a retry hint).
    ``input_schema``/``output_schema`` publish schemas of your own where type hints say too little;
    ``annotations`` is a ``ToolAnnotations`` or a flat MCP map whose keys beyond MCP's hints are kept as
    the tool's own (``{"readOnlyHint": True, "confidence": 0.95}``); ``task_support`` is MCP's
    ``execution.taskSupport``; a tool whose ``required_env`` variables are not
    set on the node is listed unavailable, naming them.
    """

    def decorate(fn: Callable[..., Any]) -> ToolFunction:
        if isinstance(fn, ToolFunction):
            raise ToolDefinitionError(f"{fn.name!r} is decorated with @toolmesh.tool twice")
        if not callable(fn):
            raise ToolDefinitionError(f"@toolmesh.tool needs a function, got {type(fn).__name__}")
        own_name = getattr(fn, "__name__", "")
        tool_name = name or (own_name if isinstance(own_name, str) else "")
        if not is_valid_tool_name(tool_name):
            raise ToolDefinitionError(
                f"tool name {tool_name!r} is not valid: use 1-128 characters of A-Z, a-z, 0-9, '_', '-', '.'"
                " (pass name=... to @toolmesh.tool)"
            )
        if timeout is not None and timeout <= 0:
            raise ToolDefinitionError(f"timeout={timeout!r} for tool {tool_name!r} must be a positive number of seconds")
        if max_concurrency is not None and max_concurrency < 1:
            raise ToolDefinitionError(
                f"max_concurrency={max_concurrency!r} for tool {tool_name!r} must be at least 1 (or None for no limit)"
            )
        _check_options(tool_name, input_schema, output_schema, task_support, tuple(required_env))
        return ToolFunction(
            function=fn,
            name=tool_name,
            description=description if description is not None else (inspect.getdoc(fn) or ""),
            title=title,
            version=version,
            tags=tuple(tags),
            timeout=timeout,
            cache=_cache_policy(cache),
            annotations=_tool_annotations(tool_name, annotations),
            max_usage_count=max_usage_count,
            result_as_answer=result_as_answer,
            examples=tuple(examples),
            meta=meta,
            durable=durable,
            max_concurrency=max_concurrency,
            input_schema=input_schema,
            output_schema=output_schema,
            task_support=task_support,
            required_env=tuple(required_env),
        )

    if function is not None:
        return decorate(function)
    return decorate
