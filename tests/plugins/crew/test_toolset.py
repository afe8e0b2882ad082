"""Toolsets: availability, requirements, description overrides, decision hooks, round commits, exports."""

from __future__ import annotations

from typing import Any

import pytest
from toolmesh import Complete, Reject, RunNormally
from toolmesh.contracts import ToolAnnotations, ToolSpec
from toolmesh.plugins.crew import RoundCommitError, ToolConstraintError
from toolmesh.plugins.crew.rounds import REJECTION_PREFIX, CallResult, Round, ToolCall
from toolmesh.plugins.crew.toolset import Availability, Requirement, Toolset


def _spec(name: str, **properties: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=f"The {name} tool.",
        input_schema={
            "type": "object",
            "properties": {key: {"type": kind} for key, kind in properties.items()},
            "required": list(properties),
        },
    )


def _toolset() -> Toolset:
    data = Toolset("data", [_spec("get_user", user="string"), _spec("list_orders")])
    admin = Toolset("admin", [_spec("drop_table")])
    return (
        Toolset("app", [_spec("web_search", query="string"), _spec("read_file", path="string")])
        .add(_spec("delete_file"), off=True)
        .include(data)
        .include(admin, off=True)
    )


@pytest.mark.parametrize(
    ("availability", "names"),
    [
        (Availability.DEFAULT, ("web_search", "read_file", "get_user", "list_orders")),
        (
            Availability.ALL,
            ("web_search", "read_file", "delete_file", "get_user", "list_orders", "drop_table"),
        ),
        (Availability.only("delete_file", "web_search"), ("web_search", "delete_file")),
        (Availability.only("data"), ("get_user", "list_orders")),
        (
            Availability.default_plus("delete_file"),
            ("web_search", "read_file", "delete_file", "get_user", "list_orders"),
        ),
        (
            Availability.default_plus("admin"),
            ("web_search", "read_file", "get_user", "list_orders", "drop_table"),
        ),
        (
            Availability.default_plus("drop_table"),
            ("web_search", "read_file", "get_user", "list_orders", "drop_table"),
        ),
    ],
)
def test_availability(availability: Availability, names: tuple[str, ...]) -> None:
    assert _toolset().resolve(availability).names == names


@pytest.mark.parametrize(
    ("availability", "requirement", "error"),
    [
        (
            Availability.DEFAULT,
            Requirement.specific("delete_file"),
            "'delete_file' is required but not available",
        ),
        (Availability.default_plus("delete_file"), Requirement.specific("delete_file"), None),
        (Availability.only("nope"), Requirement.OPTIONAL, "no tool or nested toolset named 'nope'"),
        (Availability.DEFAULT, Requirement.AT_LEAST_ONE, None),
        (Availability.DEFAULT, Requirement.OPTIONAL, None),
    ],
)
def test_requirements(availability: Availability, requirement: Requirement, error: str | None) -> None:
    if error is None:
        assert _toolset().resolve(availability, requirement).requirement == requirement
    else:
        with pytest.raises(ToolConstraintError, match=error):
            _toolset().resolve(availability, requirement)


def test_at_least_one_needs_a_tool() -> None:
    with pytest.raises(ToolConstraintError) as caught:
        Toolset("empty", [_spec("x")], off=["x"]).resolve(requirement=Requirement.AT_LEAST_ONE)
    assert caught.value.code == "invalid_tool_constraint"


@pytest.mark.parametrize(
    ("requirement", "openai", "anthropic"),
    [
        (Requirement.OPTIONAL, "auto", {"type": "auto"}),
        (Requirement.AT_LEAST_ONE, "required", {"type": "any"}),
        (
            Requirement.specific("read_file"),
            {"type": "function", "function": {"name": "read_file"}},
            {"type": "tool", "name": "read_file"},
        ),
    ],
)
def test_tool_choice(requirement: Requirement, openai: Any, anthropic: Any) -> None:
    turn = _toolset().resolve(requirement=requirement)
    assert (turn.tool_choice("openai"), turn.tool_choice("anthropic"), turn.tool_choice("mcp")) == (
        openai,
        anthropic,
        None,
    )


def test_description_overrides_last_wins() -> None:
    tools = _toolset()
    tools.add_description_hook(lambda spec: spec.description + " Use metric units.", tool="web_search")
    tools.add_description_hook(lambda spec: "Second hook wins." if spec.name == "web_search" else None)
    tools.add_description_hook(lambda spec: None)
    turn = tools.resolve()
    assert turn.get("web_search").description == "Second hook wins."
    assert turn.get("read_file").description == "The read_file tool."
    tools.describe("web_search", "Search only public sources.").describe("read_file", "Read.")
    turn = tools.resolve()
    assert (turn.get("web_search").description, turn.get("read_file").description) == (
        "Search only public sources.",
        "Read.",
    )


def test_exports() -> None:
    spec = ToolSpec(
        name="t",
        title="T",
        description="d",
        output_schema={"type": "string"},
        annotations=ToolAnnotations(read_only_hint=True),
    )
    turn = Toolset("s", [spec]).describe("t", "D").resolve()
    schema = spec.input_schema
    assert turn.definitions("openai") == [
        {"type": "function", "function": {"name": "t", "description": "D", "parameters": schema}}
    ]
    assert turn.definitions("anthropic") == [{"name": "t", "description": "D", "input_schema": schema}]
    assert turn.definitions("mcp") == [
        {
            "name": "t",
            "description": "D",
            "inputSchema": schema,
            "title": "T",
            "outputSchema": {"type": "string"},
            "annotations": {"readOnlyHint": True},
        }
    ]
    with pytest.raises(ValueError, match="unknown definition format"):
        turn.definitions("xml")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_decision_hooks_thread_edits_complete_and_reject() -> None:
    tools = _toolset()
    tools.add_hook(
        lambda call, spec: RunNormally({"query": call.arguments["query"].strip()}), tool="web_search"
    )

    async def cached(call: ToolCall, spec: ToolSpec) -> Any:
        return Complete("cached result") if call.arguments.get("query") == "tokyo" else None

    tools.add_hook(cached, tool="web_search")
    tools.add_hook(
        lambda call, spec: Reject("secrets stay private") if "secret" in str(call.arguments) else None
    )
    turn = tools.resolve()
    round_ = Round(
        turn,
        [
            ToolCall("1", "web_search", {"query": "  tokyo "}),
            ToolCall("2", "web_search", {"query": "  osaka "}),
            ToolCall("3", "read_file", {"path": "secret.txt"}),
            ToolCall("4", "delete_file", {}),
            ToolCall("5", "read_file", {"path": 7}),
            ToolCall("6", "get_user", {"user": "alice"}),
        ],
    )
    plan = await round_.apply_hooks()
    assert [call.id for call in plan.pending] == ["2", "6"]
    assert plan.pending[0].arguments == {"query": "osaka"}
    assert plan.handled["1"].content == "cached result"
    assert plan.rejected["3"].content == REJECTION_PREFIX + "secrets stay private"
    assert (plan.issues["4"].code, plan.issues["5"].code) == ("unknown_tool", "invalid_arguments")
    assert plan.continue_suggestion is not None

    committed = plan.commit(
        [CallResult("6", "get_user", {"name": "Alice"}), CallResult("2", "web_search", "sunny")]
    )
    assert [result.call_id for result in committed] == ["1", "2", "3", "4", "5", "6"]
    assert [result.rejected for result in committed] == [False, False, True, True, True, False]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("results", "code"),
    [
        ([CallResult("a", "web_search", "x")], "commit_missing"),
        (
            [
                CallResult("a", "web_search", "x"),
                CallResult("b", "read_file", "y"),
                CallResult("z", "read_file", ""),
            ],
            "commit_extra",
        ),
        (
            [
                CallResult("a", "web_search", "x"),
                CallResult("a", "web_search", "x"),
                CallResult("b", "read_file", "y"),
            ],
            "commit_duplicate",
        ),
        ([CallResult("a", "read_file", "x"), CallResult("b", "read_file", "y")], "commit_mismatched"),
        (
            [
                CallResult("a", "web_search", "x"),
                CallResult("b", "read_file", "y"),
                CallResult("c", "web_search", ""),
            ],
            "commit_extra",
        ),
    ],
)
async def test_commit_validation(results: list[CallResult], code: str) -> None:
    tools = _toolset().add_hook(lambda call, spec: Complete("done") if call.id == "c" else None)
    plan = await Round(
        tools.resolve(),
        [
            ToolCall("a", "web_search", {"query": "q"}),
            ToolCall("b", "read_file", {"path": "p"}),
            ToolCall("c", "web_search", {"query": "handled"}),
        ],
    ).apply_hooks()
    with pytest.raises(RoundCommitError) as caught:
        plan.commit(results)
    assert caught.value.code == code


@pytest.mark.anyio
async def test_round_from_outputs_and_explicit_result_for_an_issue() -> None:
    turn = _toolset().resolve()
    round_ = Round.from_outputs(
        turn,
        [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "web_search", "arguments": '{"query": "x"}'},
            },
            "Action: read_file\nAction Input: not json",
            {"type": "tool_use", "id": "c3", "name": "nope", "input": {}},
        ],
    )
    plan = await round_.apply_hooks()
    assert [call.id for call in plan.pending] == ["c1"]
    assert (plan.issues["call_1"].code, plan.issues["c3"].code) == ("parse_error", "unknown_tool")
    committed = plan.commit([CallResult("c1", "web_search", "ok"), CallResult("c3", "nope", "explained")])
    assert [result.content for result in committed][::2] == ["ok", "explained"]


def test_duplicate_call_ids_are_refused() -> None:
    with pytest.raises(RoundCommitError) as caught:
        Round(_toolset().resolve(), [ToolCall("x", "web_search"), ToolCall("x", "read_file")])
    assert caught.value.code == "commit_duplicate"


@pytest.mark.anyio
async def test_nested_toolset_hooks_and_descriptions_stay_in_their_group() -> None:
    data = Toolset("data", [_spec("get_user", user="string")])
    data.add_hook(lambda call, spec: Reject("data is read-only today"))
    data.describe("get_user", "Inner description.")
    outer = Toolset("app", [_spec("web_search", query="string")]).include(data)
    turn = outer.resolve()
    assert turn.get("get_user").description == "Inner description."
    plan = await Round(
        turn, [ToolCall("1", "web_search", {"query": "q"}), ToolCall("2", "get_user", {"user": "x"})]
    ).apply_hooks()
    assert [call.id for call in plan.pending] == ["1"] and "2" in plan.rejected
    outer.describe("get_user", "Outer wins.")
    assert outer.resolve().get("get_user").description == "Outer wins."
