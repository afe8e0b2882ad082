"""Integer bounds that comparisons and assignments prove, for dropping i64 range checks and
index tests that cannot fail.

In the ``else`` of ``if n < 2`` (or after ``if n < 2 { return n; }``) an int ``n`` is at least 2,
so ``n - 1`` cannot overflow: ``OpsGen.interval`` then emits the plain Python operation on the
int fast path. Facts are kept in ``ctx.bounds`` while the branch (or the rest of the block) is
generated, then restored.

Locals that are reassigned get bounds too, valid until their next assignment (code generation
follows the program order except at loop back-edges):

* a statement ``let i = 2 * p`` / ``i = e`` / ``i += e`` of an int local records the bounds of
  the value (from the bounds of its int operands) for the rest of the block;
* every other assignment drops the local's bounds (``OpsGen`` calls ``forget``);
* before a loop, locals it assigns lose their bounds, except the side a monotone update keeps
  (``i += p`` with ``p >= 0`` keeps the lower bound) -- see ``enter_loop``;
* in a ``while`` body the condition holds at entry: ``while i < 10 { a[i] = 0; i += p; }`` knows
  ``i <= 9`` up to ``i += p``."""

from __future__ import annotations

from . import nodes as n
from .codegen_floats import FloatGen
from .emit import I64_MAX, I64_MIN
from .flow import assignments, binds, combine, divided, nodes
from .scope import Saved


class NarrowGen(FloatGen):
    """Mixin of ``CodeGen`` for bounds proved by conditions."""

    def stmts(self, stmts: list[n.Node]) -> Saved:
        """Emit statements; after ``if c { ...; return }`` the rest of the block knows ``!c``
        (see ``narrow``), after an assignment of an int local its value's bounds. Returns the
        bounds to restore at the end of the block."""
        narrowed: Saved = {}
        i = 0
        while i < len(stmts):
            end, done = self.float_region(stmts, i)
            if done:
                i = end
                continue
            end = max(end, i + 1)
            while i < end:
                after = self.field_reads(stmts, i, end)
                if after == i:
                    self.narrowed_stmt(stmts[i], narrowed)
                    after += 1
                i = after
        return narrowed

    def narrowed_stmt(self, s: n.Node, narrowed: Saved) -> None:
        """Emit one statement of a block, adding to ``narrowed`` the bounds it proves."""
        e = s.expr if isinstance(s, n.ExprStmt) else s
        assigned = self.assigned_bounds(e)
        self.stmt(s)
        if assigned is not None:
            name, known = assigned
            py = self.local_py(name)
            if py is not None and self.ctx.types.get(py) is int:
                narrowed.setdefault(py, self.ctx.bounds.get(py))
                self.ctx.bounds[py] = known
        if isinstance(e, n.If) and e.otherwise is None and diverges(e.then):
            for py, old in self.narrow(e.cond, False).items():
                narrowed.setdefault(py, old)

    def assigned_bounds(self, s: n.Node) -> tuple[str, tuple[int, int]] | None:
        """The local that statement ``s`` binds or assigns and the bounds of its new value,
        computed before ``s`` is generated (from the bounds the operands have there)."""
        if isinstance(s, n.Let) and isinstance(s.pattern, n.PBind) and s.value is not None:
            name, value = s.pattern.name, s.value
        elif isinstance(s, n.Assign) and isinstance(s.target, n.Path) and len(s.target.names) == 1:
            name, value = s.target.names[0], s.value
            if s.op != "=":
                value = n.Binary(s.line, s.col, s.op[:-1], s.target, s.value)
        else:
            return None
        known = self.int_bounds(value)
        return (name, known) if known is not None else None

    def int_bounds(self, e: n.Node) -> tuple[int, int] | None:
        """Bounds of ``e`` when it is an int expression of literals, int locals with bounds
        and ``+ - *``: the value is within them or its computation raised (i64 overflow)."""
        k = self.int_constant(e)
        if k is not None:
            return k, k
        if isinstance(e, n.Path) and len(e.names) == 1:
            py = self.local_py(e.names[0])
            return self.ctx.bounds.get(py) if py is not None and self.ctx.types.get(py) is int else None
        if isinstance(e, n.Binary) and e.op in ("+", "-", "*"):
            left, right = self.int_bounds(e.left), self.int_bounds(e.right)
            if left is None or right is None:
                return None
            lo, hi = combine(e.op, left, right)
            return (max(lo, I64_MIN), min(hi, I64_MAX)) if lo <= I64_MAX and hi >= I64_MIN else None
        if isinstance(e, n.Binary) and e.op in ("%", "/"):
            left, divisor = self.int_bounds(e.left), self.int_constant(e.right)
            return None if left is None or divisor is None or divisor <= 0 else divided(e.op, left, divisor)
        return None

    def local_py(self, name: str, depth: int | None = None) -> str | None:
        """The Python name of local ``name`` in the current function (captures not registered),
        in its first ``depth`` scopes if given."""
        for block in reversed(self.ctx.blocks[:depth]):
            if name in block:
                return block[name]
        return None

    def forget(self, py: str) -> None:
        """``py`` was assigned: its bounds (and float facts) no longer hold."""
        self.ctx.bounds.pop(py, None)
        self.forget_floats(py)

    def enter_loop(self, *parts: n.Node) -> None:
        """Before generating a loop whose condition / body are ``parts``: a local the loop
        assigns keeps only the side of its bounds that every iteration preserves (``i += p``
        with ``p >= 0`` only grows), since code generated before an assignment may run after
        it in the next iteration."""
        if not self.ctx.bounds and not self.float_facts:
            return
        entry: dict[str, tuple[int, int]] = {}  # locals without a monotone side: their bounds at entry
        for name, sites in assignments(parts).items():
            py = self.local_py(name)
            if py is not None:
                self.forget_floats(py)
            if py is None or py not in self.ctx.bounds:
                continue
            lo, hi = self.ctx.bounds[py]
            step = self.monotone(py, sites, parts)
            if step > 0:
                self.ctx.bounds[py] = (lo, I64_MAX)
            elif step < 0:
                self.ctx.bounds[py] = (I64_MIN, hi)
            else:
                del self.ctx.bounds[py]
                entry[name] = (lo, hi)
        for name, known in entry.items():
            self.kept_through_loop(name, known, parts)

    def kept_through_loop(self, name: str, entry: tuple[int, int], parts: tuple[n.Node, ...]) -> None:
        """Bounds for int local ``name`` through the loop made of ``parts``, if its assignments
        there keep it within bounds that hold at entry (``seed = (seed * k + c) % m``): the
        union of the entry bounds and of what each assignment can store, grown until it holds
        itself (an induction over the iterations), else none.

        A value is bounded from the bounds that hold everywhere in the loop (locals it does
        not assign, the sides kept by ``enter_loop``, and the bounds found before this one);
        a loop that binds a name of its own (``let``, a pattern) may shadow what a value
        reads, so it is left alone."""
        py = self.local_py(name)
        if py is None or self.ctx.types.get(py) is not int or binds(parts, name):
            return
        values = []
        for site in assignments(parts)[name]:
            if not isinstance(site, n.Assign):
                return
            value = site.value if site.op == "=" else n.Binary(site.line, site.col, site.op[:-1], site.target, site.value)
            if any(binds(parts, read) for read in _read_names(value)):
                return
            values.append(value)
        known = entry
        for _ in range(4):
            self.ctx.bounds[py] = known
            grown = known
            for value in values:
                stored = self.int_bounds(value)
                if stored is None:
                    del self.ctx.bounds[py]
                    return
                grown = (min(grown[0], stored[0]), max(grown[1], stored[1]))
            if grown == known:
                return  # every assignment stores a value within `known`: it holds throughout
            known = grown
        del self.ctx.bounds[py]

    def monotone(self, py: str, sites: list[n.Node | None], parts: tuple[n.Node, ...]) -> int:
        """1 if every assignment in ``sites`` adds something >= 0 to int local ``py``, -1 if
        every one subtracts something >= 0, else 0."""
        if self.ctx.types.get(py) is not int:
            return 0
        ops = set()
        for site in sites:
            if not (isinstance(site, n.Assign) and site.op in ("+=", "-=")):
                return 0
            if not self.invariant_non_negative(site.value, parts):
                return 0
            ops.add(site.op)
        return 0 if len(ops) != 1 else 1 if "+=" in ops else -1

    def invariant_non_negative(self, e: n.Node, parts: tuple[n.Node, ...]) -> bool:
        """Whether ``e`` is an int >= 0 at every iteration of the loop made of ``parts``: a
        literal, or a never reassigned int local with such bounds that the loop does not
        shadow."""
        k = self.int_constant(e)
        if k is not None:
            return k >= 0
        if not (isinstance(e, n.Path) and len(e.names) == 1) or e.names[0] in self.ctx.reassigned:
            return False
        py = self.local_py(e.names[0])
        if py is None:
            return False
        known = self.ctx.bounds.get(py)
        return (
            known is not None
            and known[0] >= 0
            and self.ctx.types.get(py) is int
            and not binds(parts, e.names[0])
        )

    def int_constant(self, e: n.Node) -> int | None:
        """The value of an int literal (or negated literal) or of a path to an int constant."""
        k = _int_literal(e)
        if k is not None or not isinstance(e, n.Path):
            return k
        if len(e.names) == 1 and self.lookup(e.names[0]) is not None:
            return None  # a local (perhaps captured by a closure) shadows the item
        value = self.static(e.names)
        return value if type(value) is int and I64_MIN <= value <= I64_MAX else None

    def narrow(self, c: n.Node, truth: bool, fragile: bool = False) -> Saved:
        """Bounds that ``c`` evaluating to ``truth`` proves for int locals, added to
        ``ctx.bounds``; returns the previous entries to restore after the branch.

        Only locals never reassigned qualify, so a fact holds for the whole branch. A fact is
        only ever used on an int fast path: if the local is not an int, the comparison either
        raised (Rune does not compare ints with other types) or the operation takes its
        checked slow path. In ``else`` of ``if n < 2``, ``n - 1`` cannot overflow.

        ``fragile``: reassigned locals qualify too, their facts holding until they are
        assigned (a ``while`` condition at the start of the body, after ``enter_loop``)."""
        saved: Saved = {}
        for py, (lo, hi) in self.cond_facts(c, truth, fragile):
            old = self.ctx.bounds.get(py)
            saved.setdefault(py, old)
            known = old or (I64_MIN, I64_MAX)
            self.ctx.bounds[py] = (max(lo, known[0]), min(hi, known[1]))
        return saved

    def restore_bounds(self, saved: Saved) -> None:
        for py, old in saved.items():
            if old is None:
                self.ctx.bounds.pop(py, None)  # an assignment may have dropped it already
            else:
                self.ctx.bounds[py] = old

    def cond_facts(self, c: n.Node, truth: bool, fragile: bool = False) -> list[tuple[str, tuple[int, int]]]:
        if isinstance(c, n.Binary) and c.op in ("&&", "||"):
            if (c.op == "&&") == truth:  # `a && b` true, or `a || b` false: both sides hold
                return self.cond_facts(c.left, truth, fragile) + self.cond_facts(c.right, truth, fragile)
            return []
        if isinstance(c, n.Unary) and c.op == "!":
            return self.cond_facts(c.operand, not truth, fragile)
        if not (isinstance(c, n.Binary) and c.op in _FLIPPED):
            return []
        op, local, k = c.op, self.fact_local(c.left, fragile), self.int_constant(c.right)
        if local is None or k is None:
            op, local, k = _FLIPPED[c.op], self.fact_local(c.right, fragile), self.int_constant(c.left)
        if local is None or k is None:
            return []
        if not truth:
            op = _NEGATED[op]
        lo, hi = {"<": (I64_MIN, k - 1), "<=": (I64_MIN, k), ">": (k + 1, I64_MAX), ">=": (k, I64_MAX)}[op]
        return [(local, (lo, hi))] if lo <= hi else []

    def fact_local(self, e: n.Node, fragile: bool = False) -> str | None:
        if isinstance(e, n.Path) and len(e.names) == 1 and (fragile or e.names[0] not in self.ctx.reassigned):
            return self.lookup(e.names[0])
        return None


def _read_names(e: n.Node) -> set[str]:
    return {x.names[0] for x in nodes((e,)) if isinstance(x, n.Path) and len(x.names) == 1}


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
