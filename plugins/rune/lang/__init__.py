"""A pure-Python implementation of the Rune language.

Pipeline: ``lexer`` -> ``parser`` (AST in ``nodes``) -> ``codegen`` (a Python ``ast.Module``,
compiled once into code objects) -> runtime.

    unit = compile_source(source, filename="tool.rn")
    unit.call("add", 1, 2)                # -> 3, Python values in and out
    await unit.call_async("fetch", "q")   # may `.await` host coroutines
    unit.functions["add"].attributes      # attributes and /// docs for loaders

``to_python`` / ``from_python`` convert values (``to_json`` refuses ``inf``/``NaN``); errors derive from ``RuneError``.
"""

from .bridge import from_python, to_json, to_python
from .errors import (
    Frame,
    RuneBudgetExceeded,
    RuneCompileError,
    RuneError,
    RuneLimitError,
    RunePanic,
    RuneRuntimeError,
    RuneSyntaxError,
)
from .unit import FunctionInfo, Unit, compile_source

__all__ = [
    "Frame",
    "FunctionInfo",
    "RuneBudgetExceeded",
    "RuneCompileError",
    "RuneError",
    "RuneLimitError",
    "RunePanic",
    "RuneRuntimeError",
    "RuneSyntaxError",
    "Unit",
    "compile_source",
    "from_python",
    "to_json",
    "to_python",
]
