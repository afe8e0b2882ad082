"""Shared fixtures for Rune language tests."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import compile_source


def _run(source: str, fn: str = "main", *args: Any, **kwargs: Any) -> tuple[str, Any]:
    out = io.StringIO()
    result = compile_source(source, filename="test.rn").call(fn, *args, stdout=out, **kwargs)
    return out.getvalue(), result


@pytest.fixture
def rune() -> Callable[..., tuple[str, Any]]:
    """Compile a source and call a function: ``rune(src, fn="main", *args)`` -> (stdout, result)."""
    return _run
