"""Fusion of iterator pipelines: ``src.iter().map(|x| ..).filter(|x| ..).sum()`` as one loop.

A chain of ``map`` / ``filter`` adaptors whose arguments are closure literals, ending in
``sum`` or ``count``, costs three Python calls per element through the adaptors (plus a budget
tick and the argument checks of each closure). When the closures are simple enough to inline,
the chain is generated as one ``for`` loop over the source iterator, with the closure bodies
inlined (their parameter bound to the current element) and one budget tick per element::

    it = _invoke(_s, src, 'iter')
    if type(it) is _RuneIterator:           # what `iter()` returns for every std iterable
        for v, _ in zip(it.it, _s): ...     # map: next value; filter: `continue` unless true
    else:
        ... the same chain through `_invoke`, closures and all

Inlined closures may not bind names (no ``let``, patterns or loops: the enclosing function's
static facts are keyed by name), assign, return, break, yield or await, and take one plain
parameter; anything else takes the general path. Captured values are read from the enclosing
locals, which cannot change while the chain runs: the closures would have copied the same
values when created."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from . import nodes as n

if TYPE_CHECKING:
    from .codegen import CodeGen

    _Base = CodeGen
else:
    _Base = object

FUSED_CONSUMERS = frozenset({"sum", "count"})
_ADAPTORS = frozenset({"map", "filter"})
# Expression nodes an inlined closure body may contain: none of them binds a name or leaves
# the closure.
_INLINABLE = (
    n.Lit,
    n.Path,
    n.Binary,
    n.Unary,
    n.Field,
    n.Index,
    n.Call,
    n.MethodCall,
    n.Cast,
    n.Is,
    n.TupleLit,
    n.VecLit,
    n.ObjectLit,
    n.Template,
    n.If,
    n.Block,
    n.ExprStmt,
    n.Range,
    n.Macro,
)


class FusionGen(_Base):
    """Mixin of ``CodeGen`` for fused iterator pipelines."""

    def fused_chain(self, e: n.MethodCall) -> ast.expr | None:
        """The value of ``e`` (a ``sum()`` / ``count()`` call) as a fused loop, or None."""
        if e.name not in FUSED_CONSUMERS or e.args:
            return None
        stages: list[tuple[str, n.Closure]] = []
        node = e.receiver
        while isinstance(node, n.MethodCall) and node.name in _ADAPTORS and len(node.args) == 1:
            closure = node.args[0]
            if not _inlinable(closure):
                return None
            stages.append((node.name, closure))  # type: ignore[arg-type]
            node = node.receiver
        if not stages or not (isinstance(node, n.MethodCall) and node.name == "iter" and not node.args):
            return None
        stages.reverse()
        src = self.simple(self.expr(node.receiver))
        it = self.tmp(self.call("_invoke", self.N("_s"), src, self.K("iter")))
        result = self.fresh("r")
        saved = self.out
        fused: list[ast.stmt] = []
        self.into(fused)
        self.fused_loop(it, stages, e.name, result)
        general: list[ast.stmt] = []
        self.into(general)
        value: ast.expr = it
        for name, closure in stages:
            value = self.simple(self.method(value, name, [self.expr(closure)]))
        self.assign(result, self.method(value, e.name, []))
        self.out = saved
        self.if_(self.type_is(it, "_RuneIterator"), fused, general)
        return self.N(result)

    def fused_loop(
        self, it: ast.expr, stages: list[tuple[str, n.Closure]], consumer: str, result: str
    ) -> None:
        acc = self.fresh("acc")
        if consumer == "sum":
            self.assign(acc, ast.List([], ast.Load(), **self.pos))
            append = self.tmp(self.attr(self.N(acc), "append"))
        else:
            self.assign(acc, self.K(0))
        item = self.fresh("v")
        body: list[ast.stmt] = []
        saved = self.into(body)
        self.push()
        current: ast.expr = self.N(item)
        for name, closure in stages:
            param = closure.params[0].name  # type: ignore[attr-defined]
            py = self.fresh(param)
            self.assign(py, current)
            self.ctx.blocks[-1][param] = py  # no static type: values come from the iterator
            if name == "map":
                current = self.simple(self.expr(closure.body))
            else:
                self.if_(self.not_(self.cond(closure.body)), [ast.Continue(**self.pos)])
        self.pop()
        if consumer == "sum":
            self.emit(ast.Expr(self.call(append, current), **self.pos))
        else:
            self.assign(acc, ast.BinOp(self.N(acc), ast.Add(), self.K(1), **self.pos))
        self.out = saved
        # zip() takes one budget tick per element, as a `for` loop does.
        target = ast.Tuple(
            [ast.Name(item, ast.Store(), **self.pos), ast.Name("_", ast.Store(), **self.pos)],
            ast.Store(),
            **self.pos,
        )
        source = self.call("zip", self.attr(it, "it"), self.N("_s"))
        loop_end = [ast.Expr(self.call("_loop_end", self.N("_s")), **self.pos)]
        self.emit(ast.For(target, source, body, loop_end, **self.pos))
        self.assign(result, self.call("_iter_sum", self.N(acc)) if consumer == "sum" else self.N(acc))


def _inlinable(c: Any) -> bool:
    return (
        isinstance(c, n.Closure)
        and not c.is_async
        and len(c.params) == 1
        and isinstance(c.params[0], n.PBind)
        and _binds_nothing(c.body)
    )


def _binds_nothing(node: Any) -> bool:
    if isinstance(node, (list, tuple)):
        return all(_binds_nothing(x) for x in node)
    if not isinstance(node, n.Node):
        return True
    if not isinstance(node, _INLINABLE) or (isinstance(node, n.Block) and node.is_async):
        return False
    return all(_binds_nothing(v) for v in vars(node).values())
