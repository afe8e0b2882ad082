"""A compiled Rune source file: look up items and call functions from Python."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import nodes as n
from .bridge import from_python, to_python
from .compiler import Compiler
from .control import BreakSignal, ContinueSignal, ReturnSignal
from .errors import RuneError, RuneLimitError, RuneRuntimeError
from .limits import DEFAULT_BUDGET, MAX_DEPTH, STATE
from .output import pop_sink, push_sink
from .parser import parse
from .values import Function, Future, Module


@dataclass
class FunctionInfo:
    """Metadata of a top-level function for loaders: attributes, doc comments, visibility."""

    name: str
    params: list[str]
    attributes: list[n.Attribute]
    docs: list[str]
    public: bool
    is_async: bool
    line: int

    def attribute(self, path: str) -> n.Attribute | None:
        return next((a for a in self.attributes if a.path == path), None)


@dataclass
class Unit:
    """The result of ``compile_source``; call functions with ``call`` / ``call_async``."""

    filename: str
    module: Module
    ast: n.File
    functions: dict[str, FunctionInfo] = field(default_factory=dict)

    @property
    def docs(self) -> list[str]:
        """The file's ``//!`` inner doc comments."""
        return self.ast.docs

    def tests(self) -> list[str]:
        """Names of ``#[test]`` functions, in source order."""
        return [f.name for f in self.functions.values() if f.attribute("test")]

    def lookup(self, name: str) -> Function:
        value: Any = self.module
        for part in name.split("::"):
            value = value.items.get(part) if isinstance(value, Module) else None
        if not isinstance(value, Function):
            raise RuneRuntimeError(f"missing function `{name}`", self.filename)
        return value

    def call(
        self,
        name: str,
        *args: Any,
        budget: int = DEFAULT_BUDGET,
        max_depth: int = MAX_DEPTH,
        stdout: Callable[[str], object] | io.TextIOBase | None = None,
        raw: bool = False,
    ) -> Any:
        """Call function ``name`` with Python values; returns its result converted by ``to_python``
        (or the Rune value with ``raw=True``). Output of ``print!`` goes to ``stdout``."""
        fn = self.lookup(name)
        rune_args = [from_python(a) for a in args]
        sink = stdout.write if hasattr(stdout, "write") else stdout
        saved = (STATE.budget, STATE.depth, STATE.max_depth)
        STATE.budget, STATE.depth, STATE.max_depth = budget, 0, max_depth
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, 40 * max_depth + 2000))
        if sink is not None:
            push_sink(sink)
        try:
            result = fn.call(*rune_args)
            if type(result) is Future:
                result = result.resolve()
            return result if raw else to_python(result)
        except RecursionError:
            raise RuneLimitError(f"recursion limit exceeded in `{name}`", self.filename) from None
        except (BreakSignal, ContinueSignal, ReturnSignal):
            raise RuneRuntimeError("control flow escaped its function", self.filename) from None
        except RuneError:
            raise
        except (
            TypeError,
            ValueError,
            IndexError,
            KeyError,
            ZeroDivisionError,
            OverflowError,
            AttributeError,
        ) as exc:
            raise RuneRuntimeError(f"runtime error in `{name}`: {exc}", self.filename) from None
        finally:
            if sink is not None:
                pop_sink()
            sys.setrecursionlimit(old_limit)
            STATE.budget, STATE.depth, STATE.max_depth = saved

    async def call_async(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Like ``call`` but runs in a worker thread so the script can ``.await`` host coroutines."""
        import functools

        import anyio.to_thread

        return await anyio.to_thread.run_sync(functools.partial(self.call, name, *args, **kwargs))


def compile_source(source: str, filename: str = "<script>", modules: dict[str, Any] | None = None) -> Unit:
    """Parse and compile a Rune source; top-level statements form an implicit ``main``.

    ``modules`` maps names to host modules (dicts of Python callables) visible to the script."""
    ast = parse(source, filename)
    root = Module("crate")
    root.items["crate"] = root
    for mod_name, items in (modules or {}).items():
        root.items[mod_name] = Module(mod_name, dict(items))
    compiler = Compiler(filename, root)
    statements = compiler.declare_items(ast.items, root)
    if statements and "main" not in root.items:
        body = n.Block(
            1,
            1,
            [s for s in statements if not _is_tail(s, statements)],
            statements[-1] if _is_tail(statements[-1], statements) else None,
        )
        root.items["main"] = compiler.function(n.FnDecl(1, 1, "main", [], body), None)
    unit = Unit(filename, root, ast)
    _collect_functions(unit, ast.items, "")
    return unit


def _collect_functions(unit: Unit, items: list[n.Node], prefix: str) -> None:
    """Record functions of the file and its inline modules under ``mod::name`` paths."""
    for item in items:
        if isinstance(item, n.FnDecl):
            name = prefix + item.name
            unit.functions[name] = FunctionInfo(
                name,
                [getattr(p, "name", "_") for p in item.params],
                item.attrs,
                item.docs,
                item.public,
                item.is_async,
                item.line,
            )
        elif isinstance(item, n.ModDecl) and item.name:
            _collect_functions(unit, item.items, f"{prefix}{item.name}::")


def _is_tail(s: n.Node, statements: list[n.Node]) -> bool:
    return s is statements[-1] and not isinstance(s, (n.ExprStmt, n.Let))
