"""Compile the built-in macros: println!, print!, format!, panic!, assert!, assert_eq!, ..."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import nodes as n
from .errors import RunePanic
from .output import write
from .runtime import debug, eq, format_string, truthy

if TYPE_CHECKING:
    from .compiler import Compiler

_NAMED = re.compile(r"(?<!\{)\{([^\W\d]\w*)(?::[^}]*)?\}")


def _formatter(c: Compiler, e: n.Macro, args: list[n.Node]) -> Callable[[list], str]:
    if not args:
        return lambda env: ""
    if not isinstance(args[0], n.Lit) or type(args[0].value) is not str:
        dynamic = c.expr(args[0])
        rest_args = [c.expr(a) for a in args[1:]]
        return lambda env: format_string(str(dynamic(env)), [a(env) for a in rest_args])
    fmt = args[0].value
    rest = [c.expr(a) for a in args[1:]]
    named = {}
    for name in set(_NAMED.findall(fmt)):
        named[name] = c.expr(n.Path(e.line, e.col, [name]))
    if not named:
        return lambda env: format_string(fmt, [a(env) for a in rest])
    return lambda env: format_string(fmt, [a(env) for a in rest], {k: v(env) for k, v in named.items()})


def compile_macro(c: Compiler, e: n.Macro) -> Callable[[list], Any]:
    name = e.name
    file, line, col = c.filename, e.line, e.col
    if name in ("println", "print", "format", "panic", "eprintln", "eprint"):
        fmt = _formatter(c, e, e.args)
        if name == "format":
            return fmt
        if name == "panic":

            def panic(env: list) -> None:
                raise RunePanic(fmt(env) or "explicit panic", file, line, col)

            return panic
        end = "\n" if name.endswith("ln") else ""

        def output(env: list) -> None:
            write(fmt(env) + end)

        return output
    if name == "assert":
        cond = c.expr(e.args[0])
        msg = _formatter(c, e, e.args[1:])

        def assert_(env: list) -> None:
            if not truthy(cond(env)):
                raise RunePanic("assertion failed: " + (msg(env) or "condition is false"), file, line, col)

        return assert_
    if name in ("assert_eq", "assert_ne"):
        left, right = c.expr(e.args[0]), c.expr(e.args[1])
        msg = _formatter(c, e, e.args[2:])
        want = name == "assert_eq"

        def assert_eq(env: list) -> None:
            a, b = left(env), right(env)
            if eq(a, b) is not want:
                op = "==" if want else "!="
                extra = msg(env)
                raise RunePanic(
                    f"assertion failed: `left {op} right`: left: {debug(a)}, right: {debug(b)}"
                    + (f": {extra}" if extra else ""),
                    file,
                    line,
                    col,
                )

        return assert_eq
    if name == "dbg":
        args = [c.expr(a) for a in e.args]

        def dbg(env: list) -> Any:
            values = [a(env) for a in args]
            for v in values:
                write(debug(v) + "\n")
            return values[0] if len(values) == 1 else None

        return dbg
    if name in ("unreachable", "todo", "unimplemented"):

        def unreachable(env: list) -> None:
            raise RunePanic(f"{name.replace('_', ' ')} code reached", file, line, col)

        return unreachable
    raise c.error(f"unknown macro `{name}!`", e)
