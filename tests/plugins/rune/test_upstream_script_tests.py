"""Upstream Rune's script tests (corpus/script_tests, ``crates/rune/tests/*.rn``), one case per ``#[test]``.

A test passes as upstream's ``rune test`` decides: it runs without a panic or an error and returns
neither ``Err(_)`` nor ``None``; a ``#[test(should_panic)]`` one must fail at run time. Every test
listed in corpus/script_tests_expected_failures.json must fail (strict xfail) with the reason given
there; every other one must pass. corpus/extract_script_tests.py refreshes the copy.
"""

from __future__ import annotations

import functools
import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import RuneError, RuneRuntimeError, Unit, compile_source

from tests.plugins.rune.corpus_runs import upstream_verdict

CORPUS_DIR = Path(__file__).with_name("corpus")
SCRIPTS = CORPUS_DIR / "script_tests"
MANIFEST: dict[str, Any] = json.loads((CORPUS_DIR / "script_tests.json").read_text())
EXPECTED_FAILURES: dict[str, str] = json.loads(
    (CORPUS_DIR / "script_tests_expected_failures.json").read_text()
)
BUDGET = 20_000_000
"""Instructions per test: the heaviest upstream test needs well under a tenth of it."""


@functools.cache
def _unit(file: str) -> Unit:
    return compile_source((SCRIPTS / file).read_text(encoding="utf-8"), filename=f"script_tests/{file}")


def run_script_test(file: str, name: str, flags: list[str]) -> str | None:
    """Run one ``#[test]`` function; None when it passes as upstream's runner decides, else why not."""
    try:
        result = _unit(file).call(
            name, raw=True, stdout=io.StringIO(), budget=BUDGET, deadline=time.monotonic() + 20
        )
    except RuneRuntimeError as err:
        return None if "should_panic" in flags else f"error: {err}"
    except RuneError as err:
        return f"{type(err).__name__}: {err}"
    return upstream_verdict(result, flags)


def _cases() -> Iterator[Any]:
    for file, tests in MANIFEST["files"].items():
        for test in tests:
            case = f"{file}::{test['name']}"
            marks = []
            if case in EXPECTED_FAILURES:
                marks.append(pytest.mark.xfail(reason=EXPECTED_FAILURES[case], strict=True))
            yield pytest.param(file, test["name"], test["flags"], id=case, marks=marks)


def test_the_copy_is_complete() -> None:
    """Every upstream file is here, every ``#[test]`` is in the manifest, and the list of expected
    failures names real tests."""
    files = sorted(p.name for p in SCRIPTS.glob("*.rn"))
    assert files == sorted(MANIFEST["files"])
    cases = {f"{file}::{t['name']}" for file, tests in MANIFEST["files"].items() for t in tests}
    assert len(cases) == 182
    assert sorted(set(EXPECTED_FAILURES) - cases) == []
    for file in files:
        declared = re.findall(r"#\[test", (SCRIPTS / file).read_text(encoding="utf-8"))
        assert len(declared) == len(MANIFEST["files"][file]), file


def test_every_file_compiles_and_its_tests_are_the_manifests() -> None:
    for file, tests in MANIFEST["files"].items():
        assert _unit(file).tests() == [t["name"] for t in tests], file


@pytest.mark.parametrize(("file", "name", "flags"), list(_cases()))
def test_upstream_script_test(file: str, name: str, flags: list[str]) -> None:
    failure = run_script_test(file, name, flags)
    assert failure is None, f"script_tests/{file}::{name}: {failure}"
