"""Input and output schemas from type hints, and the definitions that cannot have one."""

# no ``from __future__ import annotations``: tools below are built from annotation objects

import datetime
import inspect
from collections.abc import Iterator
from typing import Annotated, Any, Literal, Optional

import msgspec
import pytest
import toolmesh
from toolmesh.contracts import CachePolicy, TextContent, ToolAnnotations, ToolExample, ToolResult
from toolmesh.plugins.python import python_tool, spec_for


class Point(msgspec.Struct):
    """A point on the plane."""

    x: float
    y: float


POINT_SCHEMA = {
    "title": "Point",
    "description": "A point on the plane.",
    "type": "object",
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x", "y"],
}


class Plain:
    """Not something msgspec can describe."""


def _one_parameter(annotation: Any, default: Any = inspect.Parameter.empty) -> toolmesh.ToolFunction:
    def probe(value):  # type: ignore[no-untyped-def]
        """Probe."""

    if annotation is not inspect.Parameter.empty:
        probe.__annotations__ = {"value": annotation}
    if default is not inspect.Parameter.empty:
        probe.__defaults__ = (default,)
    return toolmesh.tool(probe)


def _returning(annotation: Any) -> toolmesh.ToolFunction:
    def probe():  # type: ignore[no-untyped-def]
        """Probe."""

    if annotation is not inspect.Parameter.empty:
        probe.__annotations__ = {"return": annotation}
    return toolmesh.tool(probe)


EMPTY = inspect.Parameter.empty


@pytest.mark.parametrize(
    ("annotation", "default", "expected", "required"),
    [
        pytest.param(int, EMPTY, {"type": "integer"}, True, id="int"),
        pytest.param(float, EMPTY, {"type": "number"}, True, id="float"),
        pytest.param(str, EMPTY, {"type": "string"}, True, id="str"),
        pytest.param(bool, EMPTY, {"type": "boolean"}, True, id="bool"),
        pytest.param(list[str], EMPTY, {"type": "array", "items": {"type": "string"}}, True, id="list-str"),
        pytest.param(
            dict[str, int],
            EMPTY,
            {"type": "object", "additionalProperties": {"type": "integer"}},
            True,
            id="dict",
        ),
        pytest.param(
            Optional[int],  # noqa: UP045 - the spelling under test
            None,
            {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            False,
            id="optional",
        ),
        pytest.param(
            int | None, EMPTY, {"anyOf": [{"type": "integer"}, {"type": "null"}]}, True, id="union-none"
        ),
        pytest.param(
            Literal["celsius", "kelvin"], EMPTY, {"enum": ["celsius", "kelvin"]}, True, id="literal"
        ),
        pytest.param(
            Annotated[int, msgspec.Meta(ge=1, le=10)],
            EMPTY,
            {"type": "integer", "minimum": 1, "maximum": 10},
            True,
            id="annotated-range",
        ),
        pytest.param(
            Annotated[str, msgspec.Meta(min_length=2, pattern="^[a-z]+$")],
            EMPTY,
            {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
            True,
            id="annotated-string",
        ),
        pytest.param(
            Annotated[list[float], msgspec.Meta(min_length=1)],
            EMPTY,
            {"type": "array", "items": {"type": "number"}, "minItems": 1},
            True,
            id="annotated-list",
        ),
        pytest.param(
            Annotated[int, msgspec.Meta(description="how many")],
            EMPTY,
            {"type": "integer", "description": "how many"},
            True,
            id="annotated-description",
        ),
        pytest.param(int, 3, {"type": "integer", "default": 3}, False, id="default"),
        pytest.param(str, "-", {"type": "string", "default": "-"}, False, id="default-str"),
        pytest.param(
            list[str], ["a"], {"type": "array", "items": {"type": "string"}}, False, id="mutable-default"
        ),
        pytest.param(EMPTY, EMPTY, {}, True, id="unannotated-is-any"),
        pytest.param(Point, EMPTY, {"$ref": "#/$defs/Point"}, True, id="struct"),
    ],
)
def test_parameter_schema(annotation: Any, default: Any, expected: dict[str, Any], required: bool) -> None:
    schema = spec_for(python_tool(_one_parameter(annotation, default))).input_schema
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["properties"] == {"value": expected}
    assert schema["required"] == (["value"] if required else [])
    assert "$ref" not in schema and "title" not in schema


def test_struct_parameter_definition_stays_on_the_top_level() -> None:
    schema = spec_for(python_tool(_one_parameter(Point))).input_schema
    assert schema["$defs"] == {"Point": POINT_SCHEMA}


def test_required_lists_parameters_without_defaults_in_order() -> None:
    @toolmesh.tool
    def mixed(b: int, a: str, c: float = 1.0, d: bool = False) -> None:
        """Mixed."""

    schema = spec_for(python_tool(mixed)).input_schema
    assert schema["required"] == ["b", "a"]
    assert list(schema["properties"]) == ["b", "a", "c", "d"]


def test_context_parameter_is_left_out_of_the_schema() -> None:
    @toolmesh.tool
    def uses_context(text: str, ctx: toolmesh.CallContext) -> str:
        """Uses its context."""
        return text

    python = python_tool(uses_context)
    assert python.signature.context_parameter == "ctx"
    assert python.signature.input_schema["properties"] == {"text": {"type": "string"}}
    assert python.signature.input_schema["required"] == ["text"]


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(int, {"type": "integer"}, id="int"),
        pytest.param(list[int], {"type": "array", "items": {"type": "integer"}}, id="list"),
        pytest.param(str | None, {"anyOf": [{"type": "string"}, {"type": "null"}]}, id="optional"),
        pytest.param(Point, POINT_SCHEMA, id="struct-inlined"),
        pytest.param(
            list[Point],
            {"type": "array", "items": {"$ref": "#/$defs/Point"}, "$defs": {"Point": POINT_SCHEMA}},
            id="list-of-structs",
        ),
        pytest.param(EMPTY, None, id="missing"),
        pytest.param(None, None, id="none"),
        pytest.param(Any, None, id="any"),
        pytest.param(ToolResult, None, id="tool-result"),
        pytest.param(TextContent, None, id="content-block"),
        pytest.param(list[TextContent], None, id="content-list"),
    ],
)
def test_output_schema(annotation: Any, expected: dict[str, Any] | None) -> None:
    assert spec_for(python_tool(_returning(annotation))).output_schema == expected


def test_spec_carries_the_decorator_metadata() -> None:
    examples = [ToolExample(input={"a": 1}, output=2)]

    @toolmesh.tool(
        name="math.double",
        title="Double",
        version="1.2.0",
        tags=["math", "fast"],
        timeout=5,
        cache=60,
        annotations=ToolAnnotations(read_only_hint=True),
        max_usage_count=3,
        result_as_answer=True,
        examples=examples,
        meta={"owner": "maths"},
    )
    def double(a: int) -> int:
        """Double a number."""
        return 2 * a

    spec = spec_for(python_tool(double))
    assert (spec.name, spec.title, spec.version, spec.tags) == (
        "math.double",
        "Double",
        "1.2.0",
        ("math", "fast"),
    )
    assert (spec.timeout, spec.cache, spec.max_usage_count, spec.result_as_answer) == (
        5,
        CachePolicy(ttl=60.0),
        3,
        True,
    )
    assert spec.annotations == ToolAnnotations(read_only_hint=True)
    assert (spec.examples, spec.meta, spec.source, spec.description) == (
        tuple(examples),
        {"owner": "maths"},
        "python",
        "Double a number.",
    )


def test_explicit_description_is_kept_whole() -> None:
    @toolmesh.tool(description="Given text.\n\nArgs:\n    a: kept as written")
    def given(a: int) -> int:
        """Docstring.

        Args:
            a: from the docstring
        """
        return a

    spec = spec_for(python_tool(given))
    assert spec.description == "Given text.\n\nArgs:\n    a: kept as written"
    assert spec.input_schema["properties"]["a"]["description"] == "from the docstring"


def test_docstring_parameters_become_property_descriptions() -> None:
    @toolmesh.tool
    def convert(
        amount: float, unit: Annotated[str, msgspec.Meta(description="explicit wins")] = "m"
    ) -> float:
        """Convert a length.

        Args:
            amount: how much, in the
                given unit
            unit: ignored, the annotation says it

        Returns:
            the length in metres
        """
        return amount

    spec = spec_for(python_tool(convert))
    properties = spec.input_schema["properties"]
    assert properties["amount"] == {"type": "number", "description": "how much, in the given unit"}
    assert properties["unit"] == {"type": "string", "description": "explicit wins", "default": "m"}
    assert spec.description == "Convert a length.\n\nReturns:\n    the length in metres"


def _generator() -> Iterator[int]:
    yield 1


def _plain_default(value: int = Plain()) -> None:  # type: ignore[assignment]
    """A default JSON cannot carry."""


def _var_args(*values: int) -> int:
    return sum(values)


def _var_kwargs(**options: str) -> None:
    """Options."""


def _unresolvable(value: "Missing") -> None:  # type: ignore[name-defined]  # noqa: F821
    """A hint naming nothing."""


def _plain_parameter(value: Plain) -> None:
    """Takes a plain class."""


def _plain_return() -> Plain:
    return Plain()


@pytest.mark.parametrize(
    ("function", "words"),
    [
        pytest.param(
            _plain_parameter, ["'_plain_parameter'", "parameter 'value'", "Plain"], id="plain-class-parameter"
        ),
        pytest.param(_plain_return, ["'_plain_return'", "return value", "Plain"], id="plain-class-return"),
        pytest.param(_var_args, ["'_var_args'", ": *values cannot"], id="var-args"),
        pytest.param(_var_kwargs, ["'_var_kwargs'", ": **options cannot"], id="var-kwargs"),
        pytest.param(_generator, ["'_generator'", "generator"], id="generator"),
        pytest.param(_unresolvable, ["'_unresolvable'", "Missing"], id="unresolvable-hint"),
        pytest.param(
            _plain_default, ["'_plain_default'", "parameter 'value'", "default"], id="default-not-json"
        ),
    ],
)
def test_bad_definition_is_refused_with_the_reason(function: Any, words: list[str]) -> None:
    with pytest.raises(toolmesh.ToolDefinitionError) as caught:
        python_tool(toolmesh.tool(function))
    for word in words:
        assert word in str(caught.value)


def test_positional_only_parameters_are_described_like_the_others() -> None:
    @toolmesh.tool
    def power(base: float, /, exponent: int = 2) -> float:
        """Raise base to a power."""
        return base**exponent

    python = python_tool(power)
    assert python.signature.positional == ("base",)
    assert python.signature.input_schema["required"] == ["base"]


def test_datetime_parameter_is_a_string() -> None:
    schema = spec_for(python_tool(_one_parameter(datetime.datetime))).input_schema
    assert schema["properties"]["value"]["type"] == "string"


def test_optional_context_parameter_is_a_context_parameter() -> None:
    @toolmesh.tool
    def maybe(text: str, ctx: toolmesh.CallContext | None = None) -> str:
        """Works with and without a context."""
        return text

    python = python_tool(maybe)
    assert python.signature.context_parameter == "ctx"
    assert list(python.signature.input_schema["properties"]) == ["text"]
