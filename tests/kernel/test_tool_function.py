"""The @toolmesh.tool decorator records metadata and leaves the function usable."""

from __future__ import annotations

from typing import Any

import pytest
import toolmesh
from toolmesh import ToolDefinitionError, ToolFunction
from toolmesh.contracts import CachePolicy, ToolAnnotations, ToolExample


def test_bare_decorator() -> None:
    """@tool without arguments takes the name from the function and the description from its docstring."""

    @toolmesh.tool
    def add(a: int, b: int) -> int:
        """Add two integers.

        Returns their sum.
        """
        return a + b

    assert isinstance(add, ToolFunction)
    assert add.name == "add"
    assert add.description == "Add two integers.\n\nReturns their sum."
    assert (add.timeout, add.cache, add.tags, add.version) == (None, None, (), "0.1.0")


def test_decorator_with_arguments() -> None:
    """@tool(...) records every option given."""
    annotations = ToolAnnotations(read_only_hint=True)
    example = ToolExample(input={"q": "x"}, output=["x"])

    @toolmesh.tool(
        name="web.search",
        description="Search the web.",
        title="Search",
        version="2.0.0",
        tags=["web", "search"],
        timeout=5,
        cache=60,
        annotations=annotations,
        max_usage_count=3,
        result_as_answer=True,
        examples=[example],
        meta={"owner": "team"},
    )
    def search(q: str) -> list[str]:
        """Ignored docstring."""
        return [q]

    assert (search.name, search.description, search.title, search.version) == (
        "web.search",
        "Search the web.",
        "Search",
        "2.0.0",
    )
    assert search.tags == ("web", "search")
    assert search.timeout == 5
    assert search.cache == CachePolicy(ttl=60.0)
    assert search.annotations == annotations
    assert (search.max_usage_count, search.result_as_answer) == (3, True)
    assert search.examples == (example,)
    assert search.meta == {"owner": "team"}


def test_empty_parentheses() -> None:
    """@tool() behaves like @tool."""

    @toolmesh.tool()
    def ping() -> str:
        return "pong"

    assert (ping.name, ping.description) == ("ping", "")


def test_explicit_empty_description_wins_over_docstring() -> None:
    """description='' is kept rather than replaced by the docstring."""

    @toolmesh.tool(description="")
    def quiet() -> None:
        """Docstring."""

    assert quiet.description == ""


def test_decorated_function_stays_callable() -> None:
    """Calling the decorated object calls the function with the same arguments."""

    @toolmesh.tool
    def add(a: int, b: int = 10) -> int:
        return a + b

    assert add(1, 2) == 3
    assert add(1) == 11
    assert add(a=2, b=2) == 4
    assert add.function(5, 5) == 10


@pytest.mark.anyio
async def test_async_tool() -> None:
    """An async def tool is marked async and still awaitable when called."""

    @toolmesh.tool
    async def fetch(x: int) -> int:
        return x * 2

    @toolmesh.tool
    def sync(x: int) -> int:
        return x

    assert fetch.is_async and not sync.is_async
    assert await fetch(4) == 8


@pytest.mark.parametrize(
    ("cache", "policy"),
    [
        (None, None),
        (False, None),
        (True, CachePolicy()),
        (30, CachePolicy(ttl=30.0)),
        (0.5, CachePolicy(ttl=0.5)),
        (CachePolicy(ttl=None), CachePolicy(ttl=None)),
    ],
)
def test_cache_option(cache: Any, policy: CachePolicy | None) -> None:
    """cache= accepts True, a TTL in seconds or a CachePolicy; None/False mean no caching."""
    decorated = toolmesh.tool(name="cached", cache=cache)(lambda: 1)
    assert decorated.cache == policy


@pytest.mark.parametrize("cache", [0, -5, "yes", [60]])
def test_invalid_cache_raises(cache: Any) -> None:
    """A cache option that is not True, a positive TTL or a CachePolicy is refused."""
    with pytest.raises(ToolDefinitionError, match="cache="):
        toolmesh.tool(name="t", cache=cache)(lambda: 1)


@pytest.mark.parametrize("timeout", [0, -1, -0.5])
def test_invalid_timeout_raises(timeout: float) -> None:
    """A timeout must be a positive number of seconds."""
    with pytest.raises(ToolDefinitionError, match="timeout"):
        toolmesh.tool(name="t", timeout=timeout)(lambda: 1)


@pytest.mark.parametrize("name", ["has space", "a" * 129, "slash/name", "star*", "ü"])
def test_invalid_name_raises(name: str) -> None:
    """An explicit name outside the MCP rules is refused, naming it."""
    with pytest.raises(ToolDefinitionError, match="is not valid"):
        toolmesh.tool(name=name)(lambda: 1)


def test_lambda_needs_a_name() -> None:
    """A lambda's '<lambda>' is no valid tool name, so the error says to pass name=."""
    with pytest.raises(ToolDefinitionError, match="name="):
        toolmesh.tool(lambda: 1)


def test_double_decoration_raises() -> None:
    """Decorating a ToolFunction again is a mistake and says so."""

    @toolmesh.tool
    def once() -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="twice"):
        toolmesh.tool(once)


def test_non_callable_raises() -> None:
    """Only callables can be tools."""
    with pytest.raises(ToolDefinitionError, match="needs a function"):
        toolmesh.tool(name="x")(42)  # type: ignore[arg-type]
