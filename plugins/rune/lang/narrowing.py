"""Integer bounds that comparisons prove, for dropping i64 range checks that cannot fail.

In the ``else`` of ``if n < 2`` (or after ``if n < 2 { return n; }``) an int ``n`` is at least 2,
so ``n - 1`` cannot overflow: ``OpsGen.interval`` then emits the plain Python operation on the
int fast path. Facts are kept in ``ctx.bounds`` while the branch (or the rest of the block) is
generated, then restored."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import nodes as n
from .emit import I64_MAX, I64_MIN

if TYPE_CHECKING:
    from .codegen import CodeGen

    _Base = CodeGen
else:
    _Base = object

# Previous bounds of the narrowed locals (None: had none), restored after the branch.
Saved = dict[str, tuple[int, int] | None]


class NarrowGen(_Base):
    """Mixin of ``CodeGen`` for bounds proved by conditions."""

    def stmts(self, stmts: list[n.Node]) -> Saved:
        """Emit statements; after ``if c { ...; return }`` the rest of the block knows ``!c``
        (see ``narrow``). Returns the bounds to restore at the end of the block."""
        narrowed: Saved = {}
        for s in stmts:
            self.stmt(s)
            e = s.expr if isinstance(s, n.ExprStmt) else s
            if isinstance(e, n.If) and e.otherwise is None and diverges(e.then):
                for py, old in self.narrow(e.cond, False).items():
                    narrowed.setdefault(py, old)
        return narrowed

    def narrow(self, c: n.Node, truth: bool) -> Saved:
        """Bounds that ``c`` evaluating to ``truth`` proves for int locals, added to
        ``ctx.bounds``; returns the previous entries to restore after the branch.

        Only locals never reassigned qualify, so a fact holds for the whole branch. A fact is
        only ever used on an int fast path: if the local is not an int, the comparison either
        raised (Rune does not compare ints with other types) or the operation takes its
        checked slow path. In ``else`` of ``if n < 2``, ``n - 1`` cannot overflow."""
        saved: Saved = {}
        for py, (lo, hi) in self.facts(c, truth):
            old = self.ctx.bounds.get(py)
            saved.setdefault(py, old)
            known = old or (I64_MIN, I64_MAX)
            self.ctx.bounds[py] = (max(lo, known[0]), min(hi, known[1]))
        return saved

    def restore_bounds(self, saved: Saved) -> None:
        for py, old in saved.items():
            if old is None:
                del self.ctx.bounds[py]
            else:
                self.ctx.bounds[py] = old

    def facts(self, c: n.Node, truth: bool) -> list[tuple[str, tuple[int, int]]]:
        if isinstance(c, n.Binary) and c.op in ("&&", "||"):
            if (c.op == "&&") == truth:  # `a && b` true, or `a || b` false: both sides hold
                return self.facts(c.left, truth) + self.facts(c.right, truth)
            return []
        if isinstance(c, n.Unary) and c.op == "!":
            return self.facts(c.operand, not truth)
        if not (isinstance(c, n.Binary) and c.op in _FLIPPED):
            return []
        op, local, k = c.op, self.fact_local(c.left), _int_literal(c.right)
        if local is None or k is None:
            op, local, k = _FLIPPED[c.op], self.fact_local(c.right), _int_literal(c.left)
        if local is None or k is None:
            return []
        if not truth:
            op = _NEGATED[op]
        lo, hi = {"<": (I64_MIN, k - 1), "<=": (I64_MIN, k), ">": (k + 1, I64_MAX), ">=": (k, I64_MAX)}[op]
        return [(local, (lo, hi))] if lo <= hi else []

    def fact_local(self, e: n.Node) -> str | None:
        if isinstance(e, n.Path) and len(e.names) == 1 and e.names[0] not in self.ctx.reassigned:
            return self.lookup(e.names[0])
        return None


def diverges(b: n.Block) -> bool:
    """Whether a block always leaves by ``return``/``break``/``continue``/``panic!``."""
    last = b.tail if b.tail is not None else (b.stmts[-1] if b.stmts else None)
    last = last.expr if isinstance(last, n.ExprStmt) else last
    return isinstance(last, (n.Return, n.Break, n.Continue)) or (
        isinstance(last, n.Macro) and last.name == "panic"
    )


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}  # `k op x` is `x flipped(op) k`
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _int_literal(e: n.Node) -> int | None:
    if isinstance(e, n.Lit) and type(e.value) is int:
        return e.value
    if (
        isinstance(e, n.Unary)
        and e.op == "-"
        and isinstance(e.operand, n.Lit)
        and type(e.operand.value) is int
    ):
        return -e.operand.value
    return None
