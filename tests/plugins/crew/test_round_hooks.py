"""Rounds the Lutum way: provider ids kept, expect_one / discard, hook sets merged, a second hook pass,
decisions logged, hooks that see only validated arguments and that cannot abort a round by raising."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from toolmesh import Complete, Reject, RunNormally
from toolmesh.contracts import ToolSpec
from toolmesh.plugins.crew import HookSet, Round, ToolCall, ToolRoundError, Toolset
from toolmesh.plugins.crew.rounds import DECISION_LOGGER, REJECTION_PREFIX, CallResult

pytestmark = pytest.mark.anyio


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


def _tools() -> Toolset:
    return Toolset(
        "app",
        [
            _spec("web_search", query="string"),
            _spec("read_file", path="string"),
            _spec("login", api_key="string"),
        ],
    )


def _openai(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# ---------------------------------------------------------------- provider ids


async def test_every_provider_id_survives_a_round_with_unparseable_calls() -> None:
    outputs: list[Any] = [_openai(f"c{n}", "web_search", f'{{"query": "q{n}"}}') for n in range(1, 9)]
    outputs.append(_openai("c9", "read_file", "[1, 2]"))  # arguments that are not an object
    outputs.append({"id": "c10", "type": "function", "function": {"arguments": "{}"}})  # no tool name
    outputs.append({"type": "function_call", "id": "fc_1", "call_id": "call_x", "name": "read_file",
                    "arguments": '{"path": "a"}'})  # OpenAI Responses: results pair by call_id
    round_ = Round.from_outputs(_tools().resolve(), outputs)
    ids = [f"c{n}" for n in range(1, 11)] + ["call_x"]
    assert [call.id for call in round_.calls] == ids
    plan = await round_.apply_hooks()
    assert (plan.issues["c9"].code, plan.issues["c10"].code) == ("parse_error", "parse_error")
    committed = plan.commit([CallResult(call.id, call.name, "ok") for call in plan.pending])
    assert [result.call_id for result in committed] == ids


async def test_generated_ids_never_take_a_provider_id() -> None:
    round_ = Round.from_outputs(
        _tools().resolve(),
        ['Action: web_search\nAction Input: {"query": "a"}', _openai("call_0", "read_file", '{"path": "p"}')],
    )
    assert [call.id for call in round_.calls] == ["call_0_1", "call_0"]


# ---------------------------------------------------------------- expect_one, expect_at_most_one, discard


async def test_expect_one_and_at_most_one() -> None:
    turn = _tools().resolve()
    one = Round(turn, [ToolCall("a", "web_search", {"query": "q"})])
    two = Round(
        turn, [ToolCall("a", "web_search", {"query": "q"}), ToolCall("b", "read_file", {"path": "p"})]
    )
    none = Round(turn, [])
    assert one.expect_one().id == "a" and one.expect_at_most_one() is not None
    assert none.expect_at_most_one() is None
    for expectation in (two.expect_one, two.expect_at_most_one, none.expect_one):
        with pytest.raises(ToolRoundError) as caught:
            expectation()
        assert caught.value.code == "unexpected_call_count"
    with pytest.raises(ToolRoundError, match="the model made 2 \\(a: web_search, b: read_file\\)"):
        two.expect_one()


async def test_discard_and_commit_close_the_round() -> None:
    turn = _tools().resolve()
    discarded = Round(turn, [ToolCall("a", "web_search", {"query": "q"})])
    plan = await discarded.apply_hooks()
    discarded.discard()
    assert discarded.closed
    for action in (
        lambda: plan.commit([CallResult("a", "web_search", "x")]),
        discarded.expect_one,
        discarded.discard,
    ):
        with pytest.raises(ToolRoundError) as caught:
            action()
        assert caught.value.code == "round_closed"
    with pytest.raises(ToolRoundError):
        await discarded.apply_hooks()

    committed = Round(turn, [ToolCall("a", "web_search", {"query": "q"})])
    plan = await committed.apply_hooks()
    assert len(plan.commit([CallResult("a", "web_search", "x")])) == 1
    with pytest.raises(ToolRoundError) as caught:
        plan.commit([CallResult("a", "web_search", "x")])  # a second commit would repeat the transcript
    assert caught.value.code == "round_closed"

    dropped = Round(turn, [ToolCall("a", "web_search", {"query": "q"})])
    (await dropped.apply_hooks()).discard()
    assert dropped.closed


# ---------------------------------------------------------------- hook sets and passes


async def test_merged_hook_sets_run_in_order_and_a_second_pass_sees_only_pending_calls() -> None:
    seen: list[tuple[str, str]] = []

    def trace(label: str) -> Any:
        def hook(call: ToolCall, spec: ToolSpec) -> None:
            seen.append((label, call.id))

        return hook

    policy = HookSet().with_hook(trace("policy")).with_hook(
        lambda call, spec: Complete("from cache") if call.arguments.get("query") == "cached" else None,
        tool="web_search",
    )
    audit = HookSet().with_hook(trace("audit"))
    merged = policy.copy().with_extended(audit)
    assert (len(policy), len(audit), len(merged)) == (2, 1, 3)  # merging leaves both sources as they were

    turn = _tools().resolve()
    round_ = Round(
        turn,
        [
            ToolCall("1", "web_search", {"query": "cached"}),
            ToolCall("2", "web_search", {"query": "fresh"}),
            ToolCall("3", "read_file", {"path": "p"}),
        ],
    )
    plan = await round_.apply_hooks(merged)
    assert seen == [("policy", "1"), ("policy", "2"), ("audit", "2"), ("policy", "3"), ("audit", "3")]
    assert [call.id for call in plan.pending_calls()] == ["2", "3"]

    seen.clear()
    second = await plan.apply_hooks(
        HookSet()
        .with_hook(trace("second"))
        .with_hook(lambda call, spec: Reject("no files today"), tool="read_file")
    )
    assert seen == [("second", "2"), ("second", "3")]  # the handled call is not decided again
    assert [call.id for call in second.pending] == ["2"]
    assert [result.call_id for result in second.handled_calls()] == ["1"]
    assert second.rejected["3"].content == REJECTION_PREFIX + "no files today"
    assert plan.pending == [round_.calls[1], round_.calls[2]]  # the first plan is unchanged
    committed = second.commit([CallResult("2", "web_search", "sunny")])
    assert [result.content for result in committed] == [
        "from cache",
        "sunny",
        REJECTION_PREFIX + "no files today",
    ]


async def test_a_toolset_takes_a_hook_set_and_a_plain_function_hooks_every_tool() -> None:
    tools = _tools().add_hooks(HookSet().with_hook(lambda call, spec: Reject("read-only"), tool="read_file"))
    turn = tools.resolve()
    calls = [ToolCall("1", "web_search", {"query": "q"}), ToolCall("2", "read_file", {"path": "p"})]
    plan = await Round(turn, calls).apply_hooks()
    assert [call.id for call in plan.pending] == ["1"] and "2" in plan.rejected
    plan = await Round(turn, calls).apply_hooks(lambda call, spec: Complete(call.name))
    assert {result.content for result in plan.handled_calls()} == {"web_search", "read_file"}


async def test_a_policy_object_registers_its_hook_methods() -> None:
    class Policy:
        def web_search_hook(self, call: ToolCall, spec: ToolSpec) -> Any:
            return RunNormally({"query": call.arguments["query"].strip()})

        def read_file_hook(self, call: ToolCall, spec: ToolSpec) -> Any:
            return Reject("read-only") if call.arguments["path"].startswith("/") else None

        def web_search_description_hook(self, spec: ToolSpec) -> str:
            return spec.description + " Public sources only."

    hooks = HookSet().with_hooks(Policy())
    tools = _tools().add_hooks(hooks)
    turn = tools.resolve()
    assert turn.get("web_search").description == "The web_search tool. Public sources only."
    assert hooks.description_overrides([_spec("web_search"), _spec("read_file")]) == {
        "web_search": "The web_search tool. Public sources only."
    }
    plan = await Round(
        turn, [ToolCall("1", "web_search", {"query": " q "}), ToolCall("2", "read_file", {"path": "/x"})]
    ).apply_hooks()
    assert [call.arguments for call in plan.pending] == [{"query": "q"}] and "2" in plan.rejected
    with pytest.raises(TypeError, match="has no hook methods"):
        HookSet().register_hooks(object())


# ---------------------------------------------------------------- validated arguments, raising hooks


async def test_hooks_see_only_validated_arguments() -> None:
    tools = _tools().add_hook(
        lambda call, spec: RunNormally({"query": call.arguments["query"].strip()}), tool="web_search"
    )
    round_ = Round(
        tools.resolve(),
        [ToolCall("bad", "web_search", {"query": 7}), ToolCall("good", "web_search", {"query": "  nats "})],
    )
    plan = await round_.apply_hooks()  # the hook would raise on the integer: it never sees it
    assert plan.issues["bad"].code == "invalid_arguments"
    assert [(call.id, call.arguments) for call in plan.pending] == [("good", {"query": "nats"})]


async def test_a_raising_hook_rejects_its_call_and_the_round_goes_on() -> None:
    def strict(call: ToolCall, spec: ToolSpec) -> None:
        if call.arguments["path"].startswith("/"):
            raise PermissionError(f"absolute path {call.arguments['path']!r}")

    async def breaks_arguments(call: ToolCall, spec: ToolSpec) -> Any:
        return RunNormally({"query": 42}) if call.arguments["query"] == "edit" else None

    tools = _tools().add_hook(strict, tool="read_file").add_hook(breaks_arguments, tool="web_search")
    round_ = Round(
        tools.resolve(),
        [
            ToolCall("1", "read_file", {"path": "/etc/passwd"}),
            ToolCall("2", "read_file", {"path": "notes.txt"}),
            ToolCall("3", "web_search", {"query": "edit"}),
        ],
    )
    plan = await round_.apply_hooks()
    rejected = plan.rejected["1"]
    assert (rejected.code, rejected.rejected) == ("hook_failed", True)
    assert "PermissionError: absolute path '/etc/passwd'" in rejected.content
    assert plan.rejected["3"].code == "invalid_arguments" and "$.query" in plan.rejected["3"].content
    assert [call.id for call in plan.pending] == ["2"]
    committed = plan.commit([CallResult("2", "read_file", "text")])
    assert [result.call_id for result in committed] == ["1", "2", "3"]


async def test_each_decision_is_logged_with_tool_id_decision_and_redacted_input(caplog) -> None:
    tools = _tools().add_hook(lambda call, spec: RunNormally({"query": call.arguments["query"].upper()}),
                              tool="web_search")
    tools.add_hook(lambda call, spec: Reject("no logins"), tool="login")
    round_ = Round(
        tools.resolve(),
        [ToolCall("s1", "web_search", {"query": "nats"}), ToolCall("l1", "login", {"api_key": "hunter2"})],
    )
    with caplog.at_level(logging.DEBUG, logger=DECISION_LOGGER):
        await round_.apply_hooks()
    records = [record for record in caplog.records if record.name == DECISION_LOGGER]
    assert [(r.tool, r.call_id, r.decision) for r in records] == [  # type: ignore[attr-defined]
        ("web_search", "s1", "run_normally"),
        ("login", "l1", "reject"),
    ]
    assert records[0].input == '{"query":"NATS"}'  # type: ignore[attr-defined]  # the effective, edited input
    assert "hunter2" not in caplog.text
    assert '"api_key":"***"' in records[1].input  # type: ignore[attr-defined]
