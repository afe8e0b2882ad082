"""What the runners of upstream's corpora (std doc examples, script tests, std items) share: how
upstream's test runners judge a finished run, and the per-module table a run writes at its end."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import pytest
from toolmesh.plugins.rune.lang.values import Option, Result


def upstream_verdict(result: Any, flags: Collection[str]) -> str | None:
    """None when a run that ended without an error passes as upstream's runners decide, else why
    not: a ``should_panic`` one ran through, or the result is ``Err(_)`` or ``None``."""
    if "should_panic" in flags:
        return "expected a panic (should_panic), ran without one"
    if isinstance(result, Result) and not result.is_ok:
        return f"returned Err({result.value!r})"
    if isinstance(result, Option) and not result.is_some:
        return "returned None"
    return None


def per_module(
    entries: Iterable[dict[str, Any]], entry_id: Callable[[dict[str, Any]], str], outcomes: Mapping[str, bool]
) -> tuple[Counter[str], Counter[str]]:
    """Per ``module`` of the entries that ran (those in ``outcomes``): how many passed, and how many ran."""
    passed: Counter[str] = Counter()
    ran: Counter[str] = Counter()
    for entry in entries:
        outcome = outcomes.get(entry_id(entry))
        if outcome is not None:
            ran[entry["module"]] += 1
            passed[entry["module"]] += outcome
    return passed, ran


def write_section(request: pytest.FixtureRequest, title: str, lines: Iterable[str]) -> None:
    """Write ``lines`` under ``title`` in the run's own output (a no-op without a terminal)."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:
        return
    # a fixture's teardown output is captured; the table belongs in the run's own output
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        reporter.write("\n")
        reporter.section(title, sep="-")
        for line in lines:
            reporter.write_line(line)
