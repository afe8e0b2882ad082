"""Upstream Rune's std doc examples (corpus/std_doc_examples.json) run through the compiler.

Each example runs as a script (top-level statements are an implicit ``main``) and passes as
upstream's doc test runner decides: no error, and a result that is neither ``Err(_)`` nor ``None``;
``should_panic`` examples must fail at run time, ``no_run`` ones only compile, ``ignore`` ones are
skipped. Every example listed in corpus/expected_failures.json must fail (strict xfail) and every
other one must pass. A table of passes per module is written at the end of the run.
"""

from __future__ import annotations

import io
import json
import operator
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneCompileError, RuneError, RuneRuntimeError, compile_source

from tests.plugins.rune.corpus_runs import per_module, upstream_verdict, write_section

CORPUS_DIR = Path(__file__).with_name("corpus")
EXAMPLES: list[dict[str, Any]] = json.loads((CORPUS_DIR / "std_doc_examples.json").read_text())["examples"]
EXPECTED_FAILURES: dict[str, str] = json.loads((CORPUS_DIR / "expected_failures.json").read_text())
_OUTCOMES: dict[str, bool] = {}


def run_example(example: dict[str, Any]) -> str | None:
    """Run one example; None when it passes as upstream's runner would decide, else why it failed."""
    flags = example["flags"]
    try:
        unit = compile_source(example["source"], filename=example["id"])
        if "no_run" in flags:
            unit.compile_all()
            return None
        result = unit.call("main", raw=True, stdout=io.StringIO(), budget=2_000_000,
                           deadline=time.monotonic() + 10)
    except RuneCompileError as err:
        return f"compile error: {err.message}"
    except RuneRuntimeError as err:
        return None if "should_panic" in flags else f"error: {err.message}"
    except RuneError as err:
        return f"{type(err).__name__}: {err.message}"
    except Exception as err:  # noqa: BLE001 - an internal crash is a failure to report, not to raise
        return f"internal {type(err).__name__}: {err}"
    return upstream_verdict(result, flags)


def _params() -> Iterator[Any]:
    for example in EXAMPLES:
        marks = []
        if "ignore" in example["flags"]:
            marks.append(pytest.mark.skip(reason="upstream marks the example `ignore`"))
        elif example["id"] in EXPECTED_FAILURES:
            marks.append(pytest.mark.xfail(reason=EXPECTED_FAILURES[example["id"]], strict=True))
        yield pytest.param(example, id=example["id"], marks=marks)


@pytest.fixture(scope="module", autouse=True)
def _report_per_module(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if not _OUTCOMES:
        return
    passed, total = per_module(EXAMPLES, operator.itemgetter("id"), _OUTCOMES)
    lines = [f"{'module':<32} {'pass':>5} {'total':>6} {'%':>6}"]
    for module in sorted(total):
        lines.append(f"{module:<32} {passed[module]:>5} {total[module]:>6} "
                     f"{100 * passed[module] / total[module]:>5.0f}%")
    all_passed, all_total = sum(passed.values()), sum(total.values())
    lines.append(f"{'all':<32} {all_passed:>5} {all_total:>6} {100 * all_passed / all_total:>5.0f}%")
    write_section(request, "Rune std doc examples passing, per module", lines)


def test_expected_failures_name_real_examples() -> None:
    ids = {example["id"] for example in EXAMPLES}
    assert len(ids) == len(EXAMPLES)
    assert sorted(set(EXPECTED_FAILURES) - ids) == []


@pytest.mark.parametrize("example", list(_params()))
def test_std_doc_example(example: dict[str, Any]) -> None:
    failure = run_example(example)
    _OUTCOMES[example["id"]] = failure is None
    assert failure is None, f"{example['file']}:{example['line']}: {failure}\n{example['source']}"
