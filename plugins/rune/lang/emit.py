"""Python AST construction for the code generator: every node carries the Rune position of the
construct it was generated for, so tracebacks of the compiled code map back to Rune source."""

from __future__ import annotations

import ast
from typing import Any, TypedDict, TypeVar

LOAD = ast.Load()
STORE = ast.Store()
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
_SMALL = 2**30 - 1  # the largest one-digit int of CPython's long objects


_Node = TypeVar("_Node", bound=ast.AST)


class Position(TypedDict):
    """The location attributes of a Python ``ast`` node: the Rune position it was generated for."""

    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int


def placed(node: _Node, pos: Position) -> _Node:
    """``node`` at the position ``pos``; filling the node's ``__dict__`` is faster than passing
    the four position attributes as keyword arguments to its constructor."""
    node.__dict__.update(pos)
    return node


def is_simple(v: ast.expr) -> bool:
    """Side-effect free and cheap to evaluate twice: a local name or a constant."""
    return type(v) is ast.Name or type(v) is ast.Constant


class Emitter:
    """Statement list, temporaries and node builders; ``pos`` is the current Rune position."""

    def __init__(self) -> None:
        self.pos: Position = {"lineno": 1, "col_offset": 0, "end_lineno": 1, "end_col_offset": 1}
        self.out: list[ast.stmt] = []
        self.uid = 0

    def at(self, line: int, col: int) -> Position:
        """Switch the current position; returns the previous one for restoring."""
        old = self.pos
        c = col - 1 if col > 1 else 0
        self.pos = {"lineno": line or 1, "col_offset": c, "end_lineno": line or 1, "end_col_offset": c + 1}
        return old

    def fresh(self, base: str) -> str:
        self.uid += 1
        if not (base.isascii() and base.isidentifier()):
            base = "v"
        return f"{base}_{self.uid}"

    # --- expressions ------------------------------------------------------------------------

    def N(self, name: str) -> ast.Name:
        return placed(ast.Name(name, LOAD), self.pos)

    def K(self, value: Any) -> ast.Constant:
        return placed(ast.Constant(value), self.pos)

    def call(self, func: str | ast.expr, *args: ast.expr) -> ast.Call:
        f = self.N(func) if isinstance(func, str) else func
        return placed(ast.Call(f, list(args), []), self.pos)

    def attr(self, value: ast.expr, name: str) -> ast.Attribute:
        return placed(ast.Attribute(value, name, LOAD), self.pos)

    def sub(self, value: ast.expr, index: ast.expr) -> ast.Subscript:
        return placed(ast.Subscript(value, index, LOAD), self.pos)

    def binop(self, a: ast.expr, op: ast.operator, b: ast.expr) -> ast.BinOp:
        return placed(ast.BinOp(a, op, b), self.pos)

    def compare(self, a: ast.expr, ops: list[ast.cmpop], rest: list[ast.expr]) -> ast.Compare:
        return placed(ast.Compare(a, ops, rest), self.pos)

    def is_not_none(self, a: ast.expr) -> ast.Compare:
        return self.compare(a, [ast.IsNot()], [self.K(None)])

    def is_(self, a: ast.expr, b: ast.expr) -> ast.expr:
        if type(a) is ast.Constant and type(b) is ast.Constant:
            # Folded: Python warns about `is` with a literal.
            return placed(ast.Constant(type(a.value) is type(b.value) and a.value == b.value), self.pos)
        return placed(ast.Compare(a, [ast.Is()], [b]), self.pos)

    def type_is(self, v: ast.expr, tname: str) -> ast.expr:
        return self.is_(self.type_of(v), self.N(tname))

    def type_of(self, v: ast.expr) -> ast.expr:
        """``type(v)``; the code generator reads a cached type for some locals instead."""
        return self.call("type", v)

    def and_(self, *values: ast.expr | None) -> ast.expr:
        """The conjunction of ``values``, leaving out the None ones (tests found unnecessary)."""
        vals = [v for v in values if v is not None]
        if len(vals) == 1:
            return vals[0]
        return placed(ast.BoolOp(ast.And(), vals), self.pos)

    def or_(self, *values: ast.expr) -> ast.expr:
        return placed(ast.BoolOp(ast.Or(), list(values)), self.pos)

    def not_(self, v: ast.expr) -> ast.expr:
        return placed(ast.UnaryOp(ast.Not(), v), self.pos)

    def ifexp(self, test: ast.expr, a: ast.expr, b: ast.expr) -> ast.IfExp:
        return placed(ast.IfExp(test, a, b), self.pos)

    def walrus(self, name: str, value: ast.expr) -> ast.NamedExpr:
        return placed(ast.NamedExpr(placed(ast.Name(name, STORE), self.pos), value), self.pos)

    def bind(self, name: str, value: ast.expr) -> ast.expr:
        """A condition that binds ``name`` and is always true: ``(name := value) is name``."""
        return self.is_(self.walrus(name, value), self.N(name))

    def out_of_range(self, v: ast.expr) -> ast.expr:
        """``v`` (a Name) is outside i64. CPython only specializes comparisons of one-digit
        ints, so small values are let through first by two such comparisons: twice as fast
        as comparing with the i64 limits alone."""
        large = self.or_(
            self.compare(v, [ast.Gt()], [self.K(_SMALL)]), self.compare(v, [ast.Lt()], [self.K(-_SMALL)])
        )
        limits = self.compare(self.K(I64_MIN), [ast.LtE(), ast.LtE()], [v, self.K(I64_MAX)])
        return self.and_(large, self.not_(limits))

    def tuple_(self, items: list[ast.expr]) -> ast.Tuple:
        return placed(ast.Tuple(items, LOAD), self.pos)

    # --- statements -------------------------------------------------------------------------

    def emit(self, stmt: ast.stmt) -> None:
        self.out.append(stmt)

    def assignment(self, target: str | ast.expr, value: ast.expr) -> ast.Assign:
        """The statement ``target = value`` (a local's name or a target expression)."""
        t = placed(ast.Name(target, STORE), self.pos) if isinstance(target, str) else target
        return placed(ast.Assign([t], value), self.pos)

    def assign(self, target: str | ast.expr, value: ast.expr) -> None:
        self.out.append(self.assignment(target, value))

    def expr_stmt(self, value: ast.expr) -> None:
        if not is_simple(value):
            self.out.append(placed(ast.Expr(value), self.pos))

    def if_(self, test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt] | None = None) -> None:
        self.out.append(placed(ast.If(test, body or [placed(ast.Pass(), self.pos)], orelse or []), self.pos))

    def raise_(self, exc: ast.expr) -> ast.Raise:
        return placed(ast.Raise(exc, None), self.pos)

    def ret(self, value: ast.expr | None) -> None:
        self.out.append(placed(ast.Return(value), self.pos))

    def tmp(self, value: ast.expr) -> ast.Name:
        """Evaluate ``value`` into a fresh temporary now; returns the temporary's name."""
        name = self.fresh("t")
        self.assign(name, value)
        return self.N(name)

    def named(self, value: ast.expr) -> ast.expr:
        """``value`` as a local name (constants too: Python warns about ``"a"["b"]``)."""
        return value if type(value) is ast.Name else self.tmp(value)

    def simple(self, value: ast.expr) -> ast.expr:
        return value if is_simple(value) else self.tmp(value)

    def budget(self) -> None:
        """Take one tick of the run's budget (an ``itertools.repeat`` iterator) at function
        entry: ``if not next(_s, False): _oob()``."""
        tick = self.call("next", self.N("_s"), self.K(False))
        self.out.append(
            placed(ast.If(self.not_(tick), [placed(ast.Expr(self.call("_oob")), self.pos)], []), self.pos)
        )

    def into(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """Redirect emission to ``stmts``; returns the previous list (restore with ``self.out =``)."""
        old = self.out
        self.out = stmts
        return old

    def fndef(self, name: str, params: list[str], body: list[ast.stmt]) -> ast.FunctionDef:
        args = ast.arguments(
            posonlyargs=[],
            args=[ast.arg(p, **self.pos) for p in params],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )
        return ast.FunctionDef(name, args, body or [ast.Pass(**self.pos)], [], None, **self.pos)
