"""Fusion of iterator pipelines: ``src.iter().map(|x| ..).filter(|x| ..).sum()`` as one loop.

A chain of ``map`` / ``filter`` adaptors whose arguments are closure literals, ending in
``sum`` or ``count``, costs three Python calls per element through the adaptors (plus a budget
tick and the argument checks of each closure). When the closures are simple enough to inline,
the chain is generated as one ``for`` loop over the source iterator, with the closure bodies
inlined (their parameter bound to the current element) and one budget tick per element::

    it = _invoke(_s, src, 'iter')
    if type(it) is _RuneIterator:           # what `iter()` returns for every std iterable
        for v in compress(it.it, _s): ...   # map: next value; filter: `continue` unless true
    else:
        ... the same chain through `_invoke`, closures and all

Over an integer range ``(a..b).iter()`` the loop runs over ``_range(a, b)`` itself (ends not
statically int are tested once, before it), so the elements are ints within the bounds of the
ends (``ControlGen.range_item_bounds``, as for ``for`` loops): the inlined arithmetic then drops its ``type(x) is int`` tests and
``OpsGen.interval`` may drop range checks. A ``sum`` of values statically int is accumulated in
the loop with the checked ``+`` (Rune's sum adds pairwise, raising on overflow) instead of a
list summed afterwards.

Inlined closures may not bind names (no ``let``, patterns or loops: the enclosing function's
static facts are keyed by name), assign, return, break, yield or await, and take one plain
parameter; anything else takes the general path. Captured values are read from the enclosing
locals, which cannot change while the chain runs: the closures would have copied the same
values when created."""

from __future__ import annotations

import ast
from typing import Any, TypeGuard

from . import nodes as n
from .codegen_base import CodeGenBase
from .emit import I64_MAX, I64_MIN

FUSED_CONSUMERS = frozenset({"sum", "count"})
_SUM_CHUNK = 4096  # values of a non-int sum gathered before they are folded
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


class FusionGen(CodeGenBase):
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
            stages.append((node.name, closure))
            node = node.receiver
        if not stages or not (isinstance(node, n.MethodCall) and node.name == "iter" and not node.args):
            return None
        stages.reverse()
        result = self.fresh("r")
        source = node.receiver
        if isinstance(source, n.Range) and source.start is not None and source.end is not None:
            self.fused_range(source, stages, e.name, result)
            return self.N(result)
        src = self.simple(self.expr(source))
        it = self.tmp(self.call("_invoke", self.N("_s"), src, self.K("iter")))
        saved = self.out
        fused: list[ast.stmt] = []
        self.into(fused)
        self.fused_loop(self.attr(it, "it"), None, None, stages, e.name, result)
        general: list[ast.stmt] = []
        self.into(general)
        self.unfused(it, stages, e.name, result)
        self.out = saved
        self.if_(self.type_is(it, "_RuneIterator"), fused, general)
        return self.N(result)

    def fused_range(
        self, r: n.Range, stages: list[tuple[str, n.Closure]], consumer: str, result: str
    ) -> None:
        """A pipeline over ``a..b``: the loop runs over ``_range(a, b)`` directly, and its
        elements are ints within the bounds of the ends. Ends not
        statically int are tested once; anything else takes the general path, which raises
        the error of iterating such a range."""
        assert r.start is not None and r.end is not None  # ``fused_chain`` sends bounded ranges only
        start, end = (self.simple(v) for v in self.exprs([r.start, r.end]))
        saved = self.out
        fused: list[ast.stmt] = []
        self.into(fused)
        source = self.call("_range", start, end, self.K(r.inclusive))
        self.fused_loop(
            source, int, self.range_item_bounds(start, end, r.inclusive), stages, consumer, result
        )
        self.out = saved
        ends = ((start, r.start), (end, r.end))
        checks = [self.type_is(v, "int") for v, node in ends if self.numeric_type(node) is not int]
        if not checks:
            self.out.extend(fused)
            return
        general: list[ast.stmt] = []
        self.into(general)
        it = self.tmp(
            self.call(
                "_invoke",
                self.N("_s"),
                self.call("_RangeValue", start, end, self.K(r.inclusive)),
                self.K("iter"),
            )
        )
        self.unfused(it, stages, consumer, result)
        self.out = saved
        self.if_(self.and_(*checks), fused, general)

    def unfused(self, it: ast.expr, stages: list[tuple[str, n.Closure]], consumer: str, result: str) -> None:
        """The chain through ``_invoke``, closures and all."""
        value: ast.expr = it
        for name, closure in stages:
            value = self.simple(self.method(value, name, [self.expr(closure)]))
        self.assign(result, self.method(value, consumer, []))

    def fused_loop(
        self,
        source: ast.expr,
        kind: type | None,
        bounds: tuple[int, int] | None,
        stages: list[tuple[str, n.Closure]],
        consumer: str,
        result: str,
    ) -> type | None:
        """The loop over the Python iterator ``source`` whose elements have static type
        ``kind`` and lie within ``bounds`` (when known); returns the static type of the values
        reaching the consumer."""
        item = self.fresh("v")
        if kind is not None:
            self.ctx.types[item] = kind
        if bounds is not None:
            self.ctx.bounds[item] = bounds
        body: list[ast.stmt] = []
        saved = self.into(body)
        current: ast.expr = self.N(item)
        for name, closure in stages:
            self.push()  # each closure sees only its own parameter, not the previous ones
            param = closure.params[0].name  # type: ignore[attr-defined]  # a PBind: see ``_inlinable``
            if type(current) is ast.Name:
                py = current.id  # closures cannot assign: the parameter may alias the value
            else:
                py = self.fresh(param)
                self.assign(py, current)
                known = self.bounds_of(current)
                if known is not None:
                    self.ctx.bounds[py] = known
            if kind is not None and py not in self.ctx.types:
                self.ctx.types[py] = kind
            self.ctx.blocks[-1][param] = py
            if name == "map":
                kind = self.numeric_type(closure.body)
                current = self.simple(self.expr(closure.body))
            else:
                self.if_(self.not_(self.cond(closure.body)), [ast.Continue(**self.pos)])
            self.pop()
        self.out = saved
        acc = self.fresh("acc")
        if consumer == "count":
            self.assign(acc, self.K(0))
            self.into(body)
            self.assign(acc, ast.BinOp(self.N(acc), ast.Add(), self.K(1), **self.pos))
        elif kind is int:
            # An int accumulator: the same result and overflow as Rune's pairwise `+`.
            self.assign(acc, self.K(0))
            total = _sum_bounds(bounds, self.bounds_of(current))
            if total is not None:
                self.ctx.bounds[acc] = total
            self.into(body)
            self.arith("+", self.N(acc), current, int, int, acc)
        else:
            self.assign(acc, ast.List([], ast.Load(), **self.pos))
            append = self.tmp(self.attr(self.N(acc), "append"))
            self.into(body)
            self.emit(ast.Expr(self.call(append, current), **self.pos))
            # Fold the values gathered so far (left to right, as Rune adds) now and then, so the
            # list stays small however long the source is.
            full = self.compare(self.call("len", self.N(acc)), [ast.Gt()], [self.K(_SUM_CHUNK)])
            folded = ast.List([self.call("_iter_sum", self.N(acc))], ast.Load(), **self.pos)
            # `acc[:] = ...`: the list itself stays, `append` is bound to it
            whole = ast.Subscript(self.N(acc), ast.Slice(**self.pos), ast.Store(), **self.pos)
            self.if_(full, [ast.Assign([whole], folded, **self.pos)])
        self.out = saved
        # compress() takes one budget tick per element, as a `for` loop does (see ``x_For``).
        target = ast.Name(item, ast.Store(), **self.pos)
        self.emit(ast.For(target, self.call("compress", source, self.N("_s")), body, [], **self.pos))
        summed = consumer == "sum" and kind is not int
        self.assign(result, self.call("_iter_sum", self.N(acc)) if summed else self.N(acc))
        return kind


def _sum_bounds(source: tuple[int, int] | None, item: tuple[int, int] | None) -> tuple[int, int] | None:
    """Bounds of every partial sum of at most as many items as the int range ``source`` has,
    each within ``item``; None unless they fit in i64 (then no addition can overflow)."""
    if source is None or item is None:
        return None
    length = source[1] - source[0] + 1
    lo, hi = min(0, length * item[0]), max(0, length * item[1])
    return (lo, hi) if I64_MIN <= lo and hi <= I64_MAX else None


def _inlinable(c: Any) -> TypeGuard[n.Closure]:
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
