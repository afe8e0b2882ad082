"""A compiled Rune source file: look up items and call functions from Python."""

from __future__ import annotations

import io
import itertools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, TracebackType
from typing import Any

from . import nodes as n
from .bridge import from_python, to_python
from .codegen import CodeGen
from .errors import Frame, RuneError, RuneLimitError, RuneRuntimeError
from .limits import DEFAULT_BUDGET, MAX_DEPTH, MAX_MEMORY, STATE, at_depth, new_run
from .output import pop_sink, push_sink
from .parser import parse
from .values import Function, Future, Module

# Python frames allowed above ``max_depth`` Rune calls for helpers (method dispatch, iterator
# adaptors, output); a Rune call to a known function is exactly one Python frame.
_FRAME_SLACK = 40


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
    # File name of the compiled code and Python function name -> Rune function name, to map
    # tracebacks of the compiled code back to Rune positions and frames.
    codefile: str = field(default="", repr=False)
    frames: dict[str, str] = field(default_factory=dict, repr=False)
    codegen: CodeGen | None = field(default=None, repr=False)

    @property
    def docs(self) -> list[str]:
        """The file's ``//!`` inner doc comments."""
        return self.ast.docs

    def tests(self) -> list[str]:
        """Names of ``#[test]`` functions, in source order."""
        return [f.name for f in self.functions.values() if f.attribute("test")]

    def compile_all(self) -> None:
        """Generate and compile every function now; functions are otherwise compiled at their
        first call, so this is where a compile error in a body surfaces early."""
        if self.codegen is not None:
            self.codegen.compile_all()

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
        deadline: float | None = None,
        max_memory: int = MAX_MEMORY,
        stop: threading.Event | None = None,
        rune_args: bool = False,
    ) -> Any:
        """Call function ``name`` with Python values; returns its result converted by ``to_python``
        (or the Rune value with ``raw=True``). Output of ``print!`` goes to ``stdout``.
        With ``rune_args=True`` the arguments are Rune values already (``json_values.from_json``)
        and are passed as they are.

        Limits of the run: ``budget`` ticks (calls and loop iterations), ``deadline`` (a
        ``time.monotonic()`` instant), ``max_depth`` nested calls (at most what the process's
        recursion limit leaves), ``max_memory`` bytes built by big-value operations (estimated).
        Setting ``stop`` from another thread ends the run at its next look at the clock."""
        fn = self.lookup(name)
        info = self.functions.get(name)
        if info is not None and len(info.params) != len(args):
            raise RuneRuntimeError(
                f"`{name}` expects {len(info.params)} arguments, got {len(args)}", self.filename
            )
        values = list(args) if rune_args else [from_python(a) for a in args]
        sink = stdout if stdout is None or callable(stdout) else stdout.write
        run = new_run(budget, deadline, stop)
        state = STATE
        saved = state.run, state.deadline, state.allocated, state.max_memory
        state.run, state.deadline, state.allocated, state.max_memory = run, deadline, 0, max_memory
        if sink is not None:
            push_sink(sink)
        try:
            result = at_depth(max_depth, _FRAME_SLACK, _run, fn, run, values)
            return result if raw else to_python(result)
        except RecursionError:
            raise RuneLimitError(
                f"recursion limit of {max_depth} calls exceeded in `{name}`", self.filename
            ) from None
        except RuneError as err:
            self._locate(err, err.__traceback__)
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
            error = RuneRuntimeError(self._python_error(name, exc), self.filename)
            self._locate(error, exc.__traceback__)
            raise error from None
        finally:
            if sink is not None:
                pop_sink()
            state.run, state.deadline, state.allocated, state.max_memory = saved

    def _python_error(self, name: str, exc: Exception) -> str:
        """A Python exception from the runtime as a Rune message (arity errors of calls through
        function values are Python ``TypeError``s naming the generated function)."""
        m = _ARITY.match(str(exc))
        if m and m.group(1) in self.frames:
            expected, given = int(m.group(2)) - 1, int(m.group(3)) - 1  # minus the run argument
            return f"`{self.frames[m.group(1)]}` expects {expected} arguments, got {given}"
        return f"runtime error in `{name}`: {exc}"

    def _locate(self, err: RuneError, tb: TracebackType | None) -> None:
        """Give ``err`` the Rune position of the innermost compiled frame and a Rune trace."""
        frames = []
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_filename == self.codefile and code.co_name in self.frames:
                line, col = _position(code, tb.tb_lasti)
                frames.append(Frame(self.frames[code.co_name], self.filename, line, col))
            tb = tb.tb_next
        if not frames:
            return
        if not err.line:
            err.file, err.line, err.column = self.filename, frames[-1].line, frames[-1].column
        err.trace = frames[::-1]

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
    gen = CodeGen(filename, root)
    statements = gen.declare_items(ast.items, root)
    if statements and "main" not in root.items:
        body = n.Block(
            1,
            1,
            [s for s in statements if not _is_tail(s, statements)],
            statements[-1] if _is_tail(statements[-1], statements) else None,
        )
        root.items["main"] = gen.declare_fn(n.FnDecl(1, 1, "main", [], body), None)
    codefile = f"<rune {next(_unit_ids)}: {filename}>"
    gen.build(codefile)
    unit = Unit(filename, root, ast, codefile=codefile, frames=gen.frames, codegen=gen)
    _collect_functions(unit, ast.items, "")
    return unit


def _run(fn: Function, run: Any, args: list[Any]) -> Any:
    result = fn.fn(run, *args)
    return result.resolve() if type(result) is Future else result


_unit_ids = itertools.count(1)
_ARITY = re.compile(r"(\w+)\(\) takes (\d+) positional arguments? but (\d+) (?:were|was) given")


def _position(code: CodeType, lasti: int) -> tuple[int, int]:
    for line, _, col, _ in itertools.islice(code.co_positions(), lasti // 2, None):
        return line or 0, (col or 0) + 1
    return 0, 0


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
