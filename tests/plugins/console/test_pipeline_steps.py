"""The pipeline steps the call detail page derives from a call's events and outcome, one row per outcome."""

from __future__ import annotations

from typing import Any

import pytest
from toolmesh.contracts import ErrorCode
from toolmesh.plugins.console.pipeline_steps import PIPELINE_STEPS, derive_steps


def event(kind: str, code: ErrorCode | None = None, **attributes: Any) -> dict[str, Any]:
    """An event as the console's live feed keeps it."""
    return {"kind": kind, "error_code": code.value if code else None, "attributes": attributes}


def failure(code: ErrorCode, message: str) -> dict[str, Any]:
    return {"is_error": True, "error": {"code": code.value, "message": message}}


STARTED = event("started", caller="alice")
OK = {"is_error": False}

# (events, result, caches) → "step:status" rows, the ending one with its code
CASES: list[tuple[str, list[dict[str, Any]], dict[str, Any] | None, bool | None, list[str]]] = [
    (
        "finished",
        [STARTED, event("finished")],
        None,
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:passed", "validate_result:passed", "cache_store:passed", "events:passed"],
    ),
    (
        "finished, the tool does not cache",
        [STARTED, event("finished")],
        OK,
        False,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:skipped",
         "execute:passed", "validate_result:passed", "cache_store:skipped", "events:passed"],
    ),
    (
        "cache_hit",
        [STARTED, event("cache_hit"), event("finished", cached=True)],
        None,
        True,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:skipped", "validate_result:skipped", "cache_store:skipped", "events:passed"],
    ),
    (
        "unknown_tool",
        [event("failed", ErrorCode.UNKNOWN_TOOL)],
        None,
        None,
        ["resolve:ended:unknown_tool", "admit:not_reached", "decide:not_reached", "validate_arguments:not_reached",
         "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
         "cache_store:not_reached", "events:passed"],
    ),
    (
        "unavailable",
        [event("failed", ErrorCode.UNAVAILABLE)],
        None,
        None,
        ["resolve:ended:unavailable", "admit:not_reached", "decide:not_reached", "validate_arguments:not_reached",
         "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
         "cache_store:not_reached", "events:passed"],
    ),
    (
        "unavailable after the name resolved: no plugin executes the tool",
        [STARTED, event("failed", ErrorCode.UNAVAILABLE)],
        None,
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:ended:unavailable", "validate_result:not_reached", "cache_store:not_reached", "events:passed"],
    ),
    (
        "rejected",
        [STARTED, event("failed", ErrorCode.REJECTED)],
        None,
        None,
        ["resolve:passed", "admit-decide:ended:rejected", "validate_arguments:not_reached",
         "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
         "cache_store:not_reached", "events:passed"],
    ),
    (
        "rejected before it started: call chain too deep",
        [event("failed", ErrorCode.REJECTED)],
        None,
        None,
        ["resolve:ended:rejected", "admit:not_reached", "decide:not_reached", "validate_arguments:not_reached",
         "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
         "cache_store:not_reached", "events:passed"],
    ),
    (
        "too_large",
        [STARTED, event("failed", ErrorCode.TOO_LARGE)],
        None,
        None,
        ["resolve:passed", "admit-decide:ended:too_large", "validate_arguments:not_reached",
         "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
         "cache_store:not_reached", "events:passed"],
    ),
    (
        "usage_limit",
        [STARTED, event("failed", ErrorCode.USAGE_LIMIT)],
        None,
        None,
        ["resolve:passed", "admit:passed", "decide:ended:usage_limit", "validate_arguments:not_reached",
         "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
         "cache_store:not_reached", "events:passed"],
    ),
    (
        "invalid_arguments",
        [STARTED, event("failed", ErrorCode.INVALID_ARGUMENTS)],
        failure(ErrorCode.INVALID_ARGUMENTS, "invalid arguments for tool 'add': $.a: 'x' is not of type 'integer'"),
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:ended:invalid_arguments",
         "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
         "cache_store:not_reached", "events:passed"],
    ),
    (
        "invalid_arguments raised by the tool itself",
        [STARTED, event("failed", ErrorCode.INVALID_ARGUMENTS)],
        failure(ErrorCode.INVALID_ARGUMENTS, "b must not be zero; pass another divisor"),
        False,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:skipped",
         "execute:ended:invalid_arguments", "validate_result:not_reached", "cache_store:not_reached",
         "events:passed"],
    ),
    (
        "timeout",
        [STARTED, event("failed", ErrorCode.TIMEOUT)],
        None,
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:ended:timeout", "validate_result:not_reached", "cache_store:not_reached", "events:passed"],
    ),
    (
        "cancelled",
        [STARTED, event("progress", step=1), event("cancelled")],
        None,
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:ended:cancelled", "validate_result:not_reached", "cache_store:not_reached", "events:passed"],
    ),
    (
        "execution_failed",
        [STARTED, event("failed", ErrorCode.EXECUTION_FAILED)],
        None,
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:ended:execution_failed", "validate_result:not_reached", "cache_store:not_reached",
         "events:passed"],
    ),
    (
        "execution_failed: the result violates the output schema",
        [STARTED, event("failed", ErrorCode.EXECUTION_FAILED)],
        failure(ErrorCode.EXECUTION_FAILED, "tool 'f' returned a result that violates its output_schema: $: no"),
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:passed", "validate_result:ended:execution_failed", "cache_store:not_reached", "events:passed"],
    ),
    (
        "sandbox_violation",
        [STARTED, event("failed", ErrorCode.SANDBOX_VIOLATION)],
        None,
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:ended:sandbox_violation", "validate_result:not_reached", "cache_store:not_reached",
         "events:passed"],
    ),
    (
        "internal",
        [event("failed", ErrorCode.INTERNAL)],
        None,
        None,
        ["resolve:ended:internal", "admit:not_reached", "decide:not_reached", "validate_arguments:not_reached",
         "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
         "cache_store:not_reached", "events:passed"],
    ),
    (
        "bad_request: refused before the pipeline, no events",
        [],
        failure(ErrorCode.BAD_REQUEST, "the request is not JSON"),
        None,
        ["receive:ended:bad_request", "resolve:not_reached", "admit:not_reached", "decide:not_reached",
         "validate_arguments:not_reached", "cache_lookup:not_reached", "execute:not_reached",
         "validate_result:not_reached", "cache_store:not_reached", "events:unknown"],
    ),
    (
        "an error code no step is known for",
        [STARTED, {"kind": "failed", "error_code": "from_the_future", "attributes": {}}],
        None,
        None,
        ["unknown:ended:from_the_future", "events:passed"],
    ),
    (
        "still executing, reporting progress",
        [STARTED, event("progress", step=2)],
        None,
        None,
        ["resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed", "cache_lookup:passed",
         "execute:running", "validate_result:pending", "cache_store:pending", "events:pending"],
    ),
    (
        "started, nothing more seen yet",
        [STARTED],
        None,
        None,
        ["resolve:passed", *(f"{name}:pending" for name in PIPELINE_STEPS[1:])],
    ),
    ("nothing seen", [], None, None, []),
]


@pytest.mark.parametrize(("events", "result", "caches", "expected"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_steps_follow_from_the_events(
    events: list[dict[str, Any]], result: dict[str, Any] | None, caches: bool | None, expected: list[str]
) -> None:
    rows = derive_steps(events, result, caches=caches)
    shown = [":".join(filter(None, (row.key, row.status, row.code))) for row in rows]
    assert shown == expected


def test_the_ending_row_carries_the_message_when_the_result_is_known() -> None:
    message = "invalid arguments for tool 'add': $.a: 'x' is not of type 'integer'"
    rows = derive_steps(
        [STARTED, event("failed", ErrorCode.INVALID_ARGUMENTS)], failure(ErrorCode.INVALID_ARGUMENTS, message)
    )
    (ended,) = [row for row in rows if row.status == "ended"]
    assert (ended.label, ended.code, ended.message) == ("validate arguments", "invalid_arguments", message)
    assert [row.label for row in rows if row.status == "passed"][-1] == "events"


def test_a_console_call_with_no_events_is_derived_from_its_result() -> None:
    rows = derive_steps([], {"is_error": False, "cached": True})
    assert [row.status for row in rows] == [
        "passed", "passed", "passed", "passed", "passed", "skipped", "skipped", "skipped", "unknown"
    ]
