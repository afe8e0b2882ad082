"""Code generation of the built-in macros: println!, print!, format!, panic!, assert!,
assert_eq!, assert_ne!, dbg!, unreachable!, todo!, unimplemented!.

Format strings made only of ``{}``, ``{:?}``, ``{N}`` and ``{name}`` compile to an f-string of
``display``/``debug`` calls; anything else is formatted at run time by ``format_string``."""

from __future__ import annotations

import ast
import re

from . import nodes as n
from .codegen_base import CodeGenBase

_NAMED = re.compile(r"(?<!\{)\{([^\W\d]\w*)(?::[^}]*)?\}")
_PIECE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[^{}]+|[{}]")


def _plan(fmt: str, count: int) -> list[str | tuple[int | str, bool]] | None:
    """Split a format string into text and (argument, debug) pieces, or None if it needs the
    run-time formatter (width, precision, radix, bad references)."""
    out: list[str | tuple[int | str, bool]] = []
    auto = 0
    for m in _PIECE.finditer(fmt):
        text = m.group(0)
        if text in ("{{", "}}"):
            out.append(text[0])
        elif m.group(1) is not None:
            key, _, spec = m.group(1).partition(":")
            if spec not in ("", "?"):
                return None
            if key == "":
                if auto >= count:
                    return None
                ref: int | str = auto
                auto += 1
            elif key.isdigit():
                if int(key) >= count:
                    return None
                ref = int(key)
            else:
                ref = key
            out.append((ref, spec == "?"))
        elif text in ("{", "}"):
            return None
        else:
            out.append(text)
    return out


_SPEC_OPTIONS = frozenset({"fill", "align", "width", "precision", "flags", "format_type"})


def _spec_option(a: n.Node) -> bool:
    return (
        isinstance(a, n.Assign)
        and a.op == "="
        and isinstance(a.target, n.Path)
        and len(a.target.names) == 1
        and a.target.names[0] in _SPEC_OPTIONS
    )


class MacroGen(CodeGenBase):
    """Mixin of ``CodeGen`` for macros."""

    def formatted(self, e: n.Macro, args: list[n.Node]) -> ast.expr:
        if not args:
            return self.K("")
        if any(_spec_option(a) for a in args[1:]):
            return self.spec_options(e, args)
        if not isinstance(args[0], n.Lit) or type(args[0].value) is not str:
            vals = self.exprs(args)
            listed = ast.List(vals[1:], ast.Load(), **self.pos)
            return self.call("_format", self.call("str", vals[0]), listed, self.K(None))
        fmt = args[0].value
        names = sorted(set(_NAMED.findall(fmt)))
        vals = self.exprs([*args[1:], *(n.Path(e.line, e.col, [name]) for name in names)])
        positional, named = vals[: len(args) - 1], dict(zip(names, vals[len(args) - 1 :]))
        plan = _plan(fmt, len(positional))
        if plan is None:
            listed = ast.List(positional, ast.Load(), **self.pos)
            table = (
                ast.Dict([self.K(k) for k in named], list(named.values()), **self.pos)
                if named
                else self.K(None)
            )
            return self.call("_format", self.K(fmt), listed, table)
        if len(positional) > 1 or named:
            positional = [self.simple(v) for v in positional]
            named = {k: self.simple(v) for k, v in named.items()}
        parts: list[ast.expr | str] = []
        for piece in plan:
            if isinstance(piece, str):
                parts.append(piece)
                continue
            ref, dbg = piece
            value = positional[ref] if isinstance(ref, int) else named[ref]
            parts.append(self.call("_debug" if dbg else "_display", value))
        return self.joined(parts)

    def spec_options(self, e: n.Macro, args: list[n.Node]) -> ast.expr:
        """``format!(value, fill = '0', width = 10)``: one value under the given spec options."""
        options = {}
        for a in args[1:]:
            if not _spec_option(a):
                raise self.error("`format!` with spec options takes one value and `name = value` options", a)
            assert isinstance(a, n.Assign) and isinstance(a.target, n.Path)
            options[a.target.names[0]] = a.value
        names = list(options)
        table = ast.Dict([self.K(k) for k in names], self.exprs([options[k] for k in names]), **self.pos)
        return self.call("_format_options", self.expr(args[0]), table)

    def x_Macro(self, e: n.Macro, want: bool) -> ast.expr:
        name = e.name
        if name in ("println", "print", "eprintln", "eprint"):
            text = self.formatted(e, e.args)
            if name.endswith("ln"):
                text = self.binop(text, ast.Add(), self.K("\n"))
            self.emit(ast.Expr(self.call("_write", text), **self.pos))
            return self.K(None)
        if name == "format":
            return self.formatted(e, e.args)
        if name == "panic":
            self.emit(self.raise_(self.call("_panic", self.formatted(e, e.args))))
            return self.K(None)
        if name == "assert":
            test = self.cond(e.args[0])
            failed: list[ast.stmt] = []
            saved = self.into(failed)
            msg = self.formatted(e, e.args[1:])
            self.emit(self.raise_(self.call("_assert_failed", msg)))
            self.out = saved
            self.if_(self.not_(test), failed)
            return self.K(None)
        if name in ("assert_eq", "assert_ne"):
            a, b = (self.simple(v) for v in self.exprs(e.args[:2]))
            want_eq = name == "assert_eq"
            failed = []
            saved = self.into(failed)
            msg = self.formatted(e, e.args[2:])
            self.emit(self.raise_(self.call("_assert_eq_failed", a, b, self.K(want_eq), msg)))
            self.out = saved
            self.if_(
                ast.Compare(self.call("_eq", a, b), [ast.IsNot()], [self.K(want_eq)], **self.pos), failed
            )
            return self.K(None)
        if name == "file":
            return self.K(self.filename)
        if name in ("line", "column"):
            return self.K(e.line if name == "line" else e.col)
        if name == "dbg":
            return self.call("_dbg", ast.List(self.exprs(e.args), ast.Load(), **self.pos))
        if name in ("unreachable", "todo", "unimplemented"):
            self.emit(self.raise_(self.call("_panic", self.K(f"{name.replace('_', ' ')} code reached"))))
            return self.K(None)
        raise self.error(f"unknown macro `{name}!`", e)
