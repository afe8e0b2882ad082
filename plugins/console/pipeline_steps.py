"""A call's pipeline steps as its events and outcome tell them: passed, ended here, skipped, not reached.

A node publishes no event per step, only ``started`` (the name resolved), ``cache_hit``,
``progress`` and the end (``finished``/``failed`` with its error code, or ``cancelled``).
Since every error code comes from a known step, the steps a call went through follow
from those events; how long each step took is known only to a trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PIPELINE_STEPS", "STEP_TITLES", "DerivedStep", "derive_steps"]

PIPELINE_STEPS = (
    "resolve",
    "admit",
    "decide",
    "validate_arguments",
    "cache_lookup",
    "execute",
    "validate_result",
    "cache_store",
    "events",
)
"""The pipeline's steps in order (the names its trace spans use where it has them)."""

RECEIVE = "receive"
"""The node's checks of the message before the pipeline (shape, size, signature): shown only when they refused it."""

STEP_TITLES = {
    RECEIVE: "receive",
    "resolve": "resolve",
    "admit": "admit",
    "decide": "decide",
    "validate_arguments": "validate arguments",
    "cache_lookup": "cache lookup",
    "execute": "execute",
    "validate_result": "validate result",
    "cache_store": "cache store",
    "events": "events",
}

UNKNOWN_CODE = "no pipeline step is known for this error code"

_ENDS = ("finished", "failed", "cancelled")

# Where each error code comes from; two steps when the events cannot tell which of them refused the call.
_ENDING_STEPS: dict[str, tuple[str, ...]] = {
    "bad_request": (RECEIVE,),
    "unknown_tool": ("resolve",),
    "unavailable": ("resolve",),
    "internal": ("resolve",),
    "rejected": ("admit", "decide"),
    "too_large": ("admit", "decide"),
    "usage_limit": ("decide",),
    "invalid_arguments": ("validate_arguments",),
    "timeout": ("execute",),
    "cancelled": ("execute",),
    "execution_failed": ("execute",),
    "sandbox_violation": ("execute",),
}

# The pipeline's own argument check words its message so; a tool refusing its arguments itself does not.
_ARGUMENT_CHECK_MESSAGE = "invalid arguments for tool "
_CHAIN_REFUSAL_MESSAGE = "call chain too deep"


@dataclass(frozen=True, slots=True)
class DerivedStep:
    """One row: a step (or the steps the events cannot tell apart), its status and, where it ended, why.

    ``status`` is ``passed``, ``ended``, ``skipped``, ``not_reached``, ``running``,
    ``pending`` (the call is not over) or ``unknown`` (an error code no step is known for).
    """

    names: tuple[str, ...]
    status: str
    code: str | None = None
    message: str | None = None
    note: str | None = None

    @property
    def label(self) -> str:
        """The step's title, e.g. ``validate arguments`` or ``admit or decide``."""
        return " or ".join(STEP_TITLES.get(name, name) for name in self.names)

    @property
    def key(self) -> str:
        """The step's name for the page (``admit-decide`` for two steps)."""
        return "-".join(self.names)

    def as_dict(self) -> dict[str, Any]:
        """The row as the template reads it."""
        return {
            "names": list(self.names),
            "key": self.key,
            "label": self.label,
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "note": self.note,
        }


def _ending_steps(code: str, message: str | None, started: bool | None) -> tuple[str, ...]:
    steps = _ENDING_STEPS.get(code, ())
    if code == "execution_failed" and message and "output_schema" in message:
        return ("validate_result",)
    if code == "invalid_arguments" and message and not message.startswith(_ARGUMENT_CHECK_MESSAGE):
        return ("execute",)  # the tool itself refused its arguments (toolmesh.InvalidArguments)
    if code == "rejected" and (started is False or (message and message.startswith(_CHAIN_REFUSAL_MESSAGE))):
        return ("resolve",)  # a call chain too deep is refused before the call starts
    if code == "unavailable" and started:
        return ("execute",)  # the name resolved: no installed plugin executes the tool
    return steps


def derive_steps(
    events: Sequence[Mapping[str, Any]],
    result: Mapping[str, Any] | None = None,
    *,
    caches: bool | None = None,
) -> list[DerivedStep]:
    """The pipeline steps of one call, from its events (oldest first) and, when known, its result.

    ``events`` are mappings with ``kind``, ``error_code`` and ``attributes`` (as the live
    feed keeps them); ``result`` is a ``ToolResult`` as builtins (``is_error``, ``error``,
    ``cached``), which adds the error's message; ``caches`` says whether the tool has a
    cache policy on (``None``: not known). Empty when nothing is known of the call yet.
    """
    kinds = [str(event.get("kind")) for event in events]
    end = next((event for event in reversed(events) if event.get("kind") in _ENDS), None)
    started: bool | None = "started" in kinds if events else None
    error = (result or {}).get("error") or {}
    message = error.get("message") if isinstance(error, Mapping) else None
    code: str | None
    if end is not None:
        code = "cancelled" if end.get("kind") == "cancelled" else end.get("error_code")
        if end.get("kind") == "failed" and code is None:
            code = error.get("code") or "internal"
    elif result is not None:
        code = error.get("code") if result.get("is_error") else None
    else:
        return _unfinished(kinds)
    cached = (
        "cache_hit" in kinds
        or bool(end is not None and (end.get("attributes") or {}).get("cached"))
        or bool(result is not None and result.get("cached"))
    )
    # A node publishes all of a call's events or none: one seen means the end event is published too.
    events_step = DerivedStep(("events",), "passed") if events else DerivedStep(
        ("events",), "unknown", note="no events seen: they may be off on the node"
    )
    if code is None:
        return [*_finished(cached, caches), events_step]
    ending = _ending_steps(str(code), message, started)
    if not ending:
        unknown = DerivedStep(("unknown",), "ended", code=str(code), message=message, note=UNKNOWN_CODE)
        return [unknown, events_step]
    return [*_failed(ending, str(code), message, caches), events_step]


def _cache_row(name: str, caches: bool | None) -> DerivedStep:
    if caches is False:
        return DerivedStep((name,), "skipped", note="the tool does not cache")
    if name == "cache_lookup":
        return DerivedStep((name,), "passed", note="no cached result used" if caches else None)
    return DerivedStep((name,), "passed")


def _finished(cached: bool, caches: bool | None) -> list[DerivedStep]:
    rows = [DerivedStep((name,), "passed") for name in PIPELINE_STEPS[:4]]
    if cached:
        served = "served from the cache"
        return [
            *rows,
            DerivedStep(("cache_lookup",), "passed", note=served),
            *(DerivedStep((name,), "skipped", note=served) for name in ("execute", "validate_result", "cache_store")),
        ]
    return [
        *rows,
        _cache_row("cache_lookup", caches),
        DerivedStep(("execute",), "passed"),
        DerivedStep(("validate_result",), "passed"),
        _cache_row("cache_store", caches),
    ]


def _failed(ending: tuple[str, ...], code: str, message: str | None, caches: bool | None) -> list[DerivedStep]:
    rows: list[DerivedStep] = []
    if ending == (RECEIVE,):
        rows.append(DerivedStep(ending, "ended", code=code, message=message))
        rows.extend(DerivedStep((name,), "not_reached") for name in PIPELINE_STEPS[:-1])
        return rows
    first, last = PIPELINE_STEPS.index(ending[0]), PIPELINE_STEPS.index(ending[-1])
    for name in PIPELINE_STEPS[:first]:
        rows.append(_cache_row(name, caches) if name == "cache_lookup" else DerivedStep((name,), "passed"))
    rows.append(DerivedStep(ending, "ended", code=code, message=message))
    rows.extend(DerivedStep((name,), "not_reached") for name in PIPELINE_STEPS[last + 1 : -1])
    return rows


def _unfinished(kinds: list[str]) -> list[DerivedStep]:
    if "started" not in kinds:
        return []
    if "cache_hit" in kinds:
        return _finished(True, None) + [DerivedStep(("events",), "pending")]
    if "progress" in kinds:  # a tool reports progress while it executes
        rows = [DerivedStep((name,), "passed") for name in PIPELINE_STEPS[:5]]
        rows.append(DerivedStep(("execute",), "running"))
        return rows + [DerivedStep((name,), "pending") for name in PIPELINE_STEPS[6:]]
    return [DerivedStep(("resolve",), "passed")] + [
        DerivedStep((name,), "pending") for name in PIPELINE_STEPS[1:]
    ]
