"""Shared fixtures for Rune language tests."""

from __future__ import annotations

import ast
import builtins
import io
from collections.abc import Callable
from typing import Any

import pytest
from toolmesh.plugins.rune.lang import codegen_items, compile_source


def _run(source: str, fn: str = "main", *args: Any, **kwargs: Any) -> tuple[str, Any]:
    out = io.StringIO()
    result = compile_source(source, filename="test.rn").call(fn, *args, stdout=out, **kwargs)
    return out.getvalue(), result


@pytest.fixture
def rune() -> Callable[..., tuple[str, Any]]:
    """Compile a source and call a function: ``rune(src, fn="main", *args)`` -> (stdout, result)."""
    return _run


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], str]:
    """``generated(src)``: the Python source of every function of ``src`` (all compiled)."""

    def source_of(src: str) -> str:
        sources: list[str] = []

        def capture(tree: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(tree, ast.Module):
                sources.append(ast.unparse(tree))
            return builtins.compile(tree, *args, **kwargs)

        monkeypatch.setattr(codegen_items, "compile", capture, raising=False)
        compile_source(src, "gen.rn").compile_all()
        return "\n".join(sources)

    return source_of
