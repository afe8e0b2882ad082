"""Code generation of control flow: conditions, ``if``, loops, labelled ``break``/``continue``,
``return``, ``?``, ``match``, ``yield`` and ``select``.

Loops are Python loops with the budget check at the back-edge. Python has no labels: a
``break 'outer`` sets the target loop's flag (1 = break, 2 = continue) and breaks the
innermost loop; every loop it crosses tests the flag right after it ends."""

from __future__ import annotations

import ast

from . import nodes as n
from .codegen_base import CodeGenBase
from .codegen_collections import raw_option_subject
from .emit import I64_MAX, I64_MIN
from .flow import assignments
from .numtypes import counts_in_i64
from .scope import LoopCtx


class ControlGen(CodeGenBase):
    """Mixin of ``CodeGen`` for control-flow expressions."""

    def cond(self, c: n.Node) -> ast.expr:
        """A Python bool; Rune conditions must be `bool` (checked unless statically known)."""
        old = self.at(c.line, c.col)
        if isinstance(c, n.LetCond):
            v = raw_option_subject(self, c.value, [c.pattern]) or self.simple(self.expr(c.value))
            test = self.pattern(c.pattern, v)
            self.pos = old
            return test if test is not None else self.K(True)
        v = self.expr(c)
        if not self.is_bool(c):
            v = self.simple(v)
            if type(v) is ast.Constant:
                bad = self.call("_bad_condition", v)
                self.pos = old
                return bad
            check = self.and_(
                ast.Compare(v, [ast.IsNot()], [self.K(False)], **self.pos), self.call("_bad_condition", v)
            )
            v = self.or_(self.is_(v, self.K(True)), check)
        self.pos = old
        return v

    def logical(self, e: n.Binary) -> ast.expr:
        left = self.cond(e.left)
        rest: list[ast.stmt] = []
        saved = self.into(rest)
        right = self.cond(e.right)
        self.out = saved
        if not rest:
            op = ast.And() if e.op == "&&" else ast.Or()
            return ast.BoolOp(op, [left, right], **self.pos)
        r = self.fresh("b")
        self.assign(r, left)
        rest.append(self.assignment(r, right))
        self.if_(self.N(r) if e.op == "&&" else self.not_(self.N(r)), rest)
        return self.N(r)

    def branch(self, e: n.Node | None, want: bool, result: str | None) -> list[ast.stmt]:
        stmts: list[ast.stmt] = []
        if e is None:
            return stmts
        saved = self.into(stmts)
        v = self.block(e, want) if isinstance(e, n.Block) else self.expr(e, want)
        if result is not None:
            self.assign(result, v)
        else:
            self.expr_stmt(v)
        self.out = saved
        return stmts

    def x_If(self, e: n.If, want: bool) -> ast.expr:
        self.push()
        test = self.cond(e.cond)
        result = self.fresh("r") if want else None
        saved = self.narrow(e.cond, True)
        then = self.branch(e.then, want, result)
        self.restore_bounds(saved)
        self.pop()
        saved = self.narrow(e.cond, False)
        other = self.branch(e.otherwise, want, result)
        self.restore_bounds(saved)
        if result is None:
            self.if_(test, then, other)
            return self.K(None)
        if (
            len(then) == 1
            and (len(other) == 1 or e.otherwise is None)
            and isinstance(then[0], ast.Assign)
            and (e.otherwise is None or isinstance(other[0], ast.Assign))
        ):
            a = then[0].value
            b = other[0].value if other and isinstance(other[0], ast.Assign) else self.K(None)
            return self.ifexp(test, a, b)
        if e.otherwise is None:
            other = [self.assignment(result, self.K(None))]
        self.if_(test, then, other)
        return self.N(result)

    # --- loops ----------------------------------------------------------------------------

    def loop(self, label: str | None, want: bool, *parts: n.Node) -> LoopCtx:
        loop = LoopCtx(label, self.fresh("r") if want else None, len(self.ctx.blocks))
        loop.parts = parts
        if loop.result is not None:
            self.assign(loop.result, self.K(None))
        self.ctx.loops.append(loop)
        return loop

    def end_loop(self, loop: LoopCtx, stmt: ast.stmt) -> ast.expr:
        """Emit the loop statement (with its flag reset before it) and the checks of labelled
        jumps that cross it."""
        self.ctx.loops.pop()
        self.out.extend(loop.pre)
        if loop.flag is not None:
            self.assign(loop.flag, self.K(0))
        self.emit(stmt)
        for target in loop.exits:
            assert target.flag is not None  # set by the jump that made it an exit
            flag = self.N(target.flag)
            if self.ctx.loops and target is self.ctx.loops[-1]:
                again = [
                    self.assignment(target.flag, self.K(0)),
                    ast.Continue(**self.pos),
                ]
                is_break = self.compare(flag, [ast.Eq()], [self.K(1)])
                self.if_(self.N(target.flag), [ast.If(is_break, [ast.Break(**self.pos)], again, **self.pos)])
            else:
                self.if_(flag, [ast.Break(**self.pos)])
        return self.N(loop.result) if loop.result is not None else self.K(None)

    def loop_body(self, body: n.Block, stmts: list[ast.stmt]) -> list[ast.stmt]:
        saved = self.into(stmts)
        self.expr_stmt(self.block(body, want=False))
        self.out = saved
        return stmts

    def ticking(self, body: list[ast.stmt]) -> ast.For:
        """``for _ in _s: body`` + ``else: _oob()``: each iteration takes one tick of the run's
        budget iterator; the loop ends by ``break`` or when the budget is exhausted."""
        exhausted: list[ast.stmt] = [ast.Expr(self.call("_oob"), **self.pos)]
        body = body or [ast.Pass(**self.pos)]
        return ast.For(ast.Name("_", ast.Store(), **self.pos), self.N("_s"), body, exhausted, **self.pos)

    def x_While(self, e: n.While, want: bool) -> ast.expr:
        self.enter_loop(e.cond, e.body)
        loop = self.loop(e.label, want, e.cond, e.body)
        self.push()
        head: list[ast.stmt] = []
        saved = self.into(head)
        test = self.cond(e.cond)
        self.out = saved
        head.append(ast.If(self.not_(test), [ast.Break(**self.pos)], [], **self.pos))
        # The condition holds when the body starts, also for locals the body then reassigns
        # (not for those the condition itself assigns).
        narrowed = self.narrow(e.cond, True, fragile=not assignments((e.cond,)))
        stmt = self.ticking(self.loop_body(e.body, head))
        self.restore_bounds(narrowed)
        self.pop()
        return self.end_loop(loop, stmt)

    def x_Loop(self, e: n.Loop, want: bool) -> ast.expr:
        self.enter_loop(e.body)
        loop = self.loop(e.label, want, e.body)
        stmt = self.ticking(self.loop_body(e.body, []))
        return self.end_loop(loop, stmt)

    def x_For(self, e: n.For, want: bool) -> ast.expr:
        it = e.iterable
        rng = it if counts_in_i64(it) else None  # `0u64..n` goes through `_iterate`: u64 items
        if rng is not None:
            source, start, end = self.range_source(rng)
        else:
            # a vector is zipped as it is (what `_iterate` would do, without the call)
            value = self.simple(self.expr(it))
            source = self.ifexp(self.type_is(value, "list"), value, self.call("_iterate", value))
        self.enter_loop(e.body)
        loop = self.loop(e.label, want, e.body)
        self.push()
        head: list[ast.stmt] = []
        if isinstance(e.pattern, n.PBind):
            var = self.declare(e.pattern.name, int if rng is not None else None)
            if rng is not None and e.pattern.name not in self.ctx.reassigned:
                self.ctx.bounds[var] = self.range_item_bounds(start, end, rng.inclusive)
        else:
            var = self.fresh("v")
            saved = self.into(head)
            if not isinstance(e.pattern, n.PWild):
                self.let_pattern(e.pattern, self.N(var), "for pattern did not match")
            self.out = saved
        body = self.loop_body(e.body, head)
        self.pop()
        # compress() takes one budget tick per item, after the item (the loop ends with its
        # source), and an exhausted budget raises inside it; cheaper than zip() and unpacking.
        target = ast.Name(var, ast.Store(), **self.pos)
        ticked = self.call("compress", source, self.N("_s"))
        stmt = ast.For(target, ticked, body or [ast.Pass(**self.pos)], [], **self.pos)
        return self.end_loop(loop, stmt)

    def range_item_bounds(self, start: ast.expr, end: ast.expr, inclusive: bool) -> tuple[int, int]:
        """Bounds of the items of an int range with these ends: each is an i64 within the ends'
        bounds (an i64 end: at most i64::MAX)."""
        lo = (self.bounds_of(start) or (I64_MIN, I64_MAX))[0]
        hi = (self.bounds_of(end) or (I64_MIN, I64_MAX))[1] - (0 if inclusive else 1)
        return lo, max(lo, hi)

    def range_source(self, it: n.Range) -> tuple[ast.expr, ast.expr, ast.expr]:
        """The iterable of ``for x in a..b`` and the values of its ends: ``range`` itself for
        ends statically int, ``_range`` (which rejects other ends) otherwise."""
        assert it.start is not None and it.end is not None  # `for` calls it for `a..b` and `a..=b` only
        start, end = (self.simple(v) for v in self.exprs([it.start, it.end]))
        general = self.call("_range", start, end, self.K(it.inclusive))
        unknown = [
            v
            for v, node in ((start, it.start), (end, it.end))
            if not (self.numeric_type(node) is int or type(v) is ast.Constant and type(v.value) is int)
        ]
        if any(type(v) is ast.Constant for v in unknown):
            return general, start, end
        stop = self.binop(end, ast.Add(), self.K(1)) if it.inclusive else end
        fast = self.call(self.k(range), start, stop)
        if not unknown:
            return fast, start, end
        return self.ifexp(self.and_(*(self.type_is(v, "int") for v in unknown)), fast, general), start, end

    def loop_assigned(self, loop: LoopCtx) -> dict[str, list[n.Node | None]]:
        """The names ``loop`` may assign (computed once)."""
        if loop.assigned is None:
            loop.assigned = assignments(loop.parts)
        return loop.assigned

    def jump_target(self, label: str | None, e: n.Node) -> LoopCtx | None:
        for loop in reversed(self.ctx.loops):
            if label is None or loop.label == label:
                return loop
        return None

    def jump(self, e: n.Node, label: str | None, code: int) -> None:
        target = self.jump_target(label, e)
        if target is None:
            what = "break" if code == 1 else "continue"
            self.emit(self.raise_(self.call("_misplaced", self.K(what))))
            return
        if target is not self.ctx.loops[-1]:
            if target.flag is None:
                target.flag = self.fresh("jump")
            self.assign(target.flag, self.K(code))
            inner = self.ctx.loops[self.ctx.loops.index(target) + 1 :]
            for loop in inner:
                if target not in loop.exits:
                    loop.exits.append(target)
            self.emit(ast.Break(**self.pos))
            return
        self.emit(ast.Break(**self.pos) if code == 1 else ast.Continue(**self.pos))

    def x_Break(self, e: n.Break, want: bool) -> ast.expr:
        target = self.jump_target(e.label, e)
        value = self.expr(e.value) if e.value is not None else self.K(None)
        if target is not None and target.result is not None:
            self.assign(target.result, value)
        else:
            self.expr_stmt(value)
        self.jump(e, e.label, 1)
        return self.K(None)

    def x_Continue(self, e: n.Continue, want: bool) -> ast.expr:
        self.jump(e, e.label, 2)
        return self.K(None)

    def x_Return(self, e: n.Return, want: bool) -> ast.expr:
        self.ret(self.expr(e.value) if e.value is not None else self.K(None))
        return self.K(None)

    def x_Yield(self, e: n.Yield, want: bool) -> ast.expr:
        value = self.expr(e.value) if e.value is not None else self.K(None)
        return ast.Yield(value, **self.pos)

    def x_Try(self, e: n.Try, want: bool) -> ast.expr:
        v = self.simple(self.expr(e.operand))
        ok = self.or_(
            self.and_(self.type_is(v, "_Result"), self.attr(v, "is_ok")),
            self.and_(self.type_is(v, "_Option"), self.attr(v, "is_some")),
        )
        self.if_(self.not_(ok), [ast.Return(self.call("_try_fail", v), **self.pos)])
        return self.attr(v, "value")

    def x_LetCond(self, e: n.LetCond, want: bool) -> ast.expr:
        return self.cond(e)

    # --- match and select -----------------------------------------------------------------

    def x_Match(self, e: n.Match, want: bool) -> ast.expr:
        patterns = [arm.pattern for arm in e.arms]
        subject = raw_option_subject(self, e.subject, patterns) or self.simple(self.expr(e.subject))
        result = self.fresh("r") if want else None
        arms: list[tuple[ast.expr | None, list[ast.stmt], ast.expr | None, list[ast.stmt]]] = []
        for arm in e.arms:
            self.push()
            old = self.at(arm.line, arm.col)
            test = self.pattern(arm.pattern, subject)
            guard_stmts: list[ast.stmt] = []
            guard = None
            if arm.guard is not None:
                saved = self.into(guard_stmts)
                guard = self.cond(arm.guard)
                self.out = saved
            body = self.branch(arm.body, want, result)
            self.pos = old
            self.pop()
            arms.append((test, guard_stmts, guard, body))
            if test is None and guard is None:
                break  # later arms are unreachable
        default: list[ast.stmt] = [self.assignment(result, self.K(None))] if result else []
        if all(not g for _, g, _, _ in arms):
            chain = default
            for test, _, guard, body in reversed(arms):
                full = self.and_(test, guard) if guard is not None else test
                if full is None:
                    chain = body
                else:
                    chain = [ast.If(full, body or [ast.Pass(**self.pos)], chain, **self.pos)]
            self.out.extend(chain)
        else:
            # A guard needs statements: test the arms in turn behind a `done` flag.
            done = self.fresh("done")
            self.assign(done, self.K(False))
            for test, guard_stmts, guard, body in arms:
                taken: list[ast.stmt] = [
                    self.assignment(done, self.K(True)),
                    *body,
                ]
                inner = guard_stmts + ([ast.If(guard, taken, [], **self.pos)] if guard is not None else taken)
                self.if_(
                    self.and_(self.not_(self.N(done)), test) if test is not None else self.not_(self.N(done)),
                    inner,
                )
            if default:
                self.if_(self.not_(self.N(done)), default)
        return self.N(result) if result else self.K(None)

    def x_Select(self, e: n.Select, want: bool) -> ast.expr:
        """Futures resolve synchronously: the first branch (in order) whose future has not
        completed yet is run; a branch whose pattern does not match is skipped. With no branch
        left the value is the `default` branch or `()`."""
        futures = [self.simple(v) for v in self.exprs([fut for _, fut, _ in e.arms])]
        result = self.fresh("r")
        done = self.fresh("done")
        self.assign(result, self.K(None))
        self.assign(done, self.K(False))
        for (pattern, _, body), fut in zip(e.arms, futures):
            value = self.fresh("v")
            self.push()
            test = self.pattern(pattern, self.N(value))
            taken: list[ast.stmt] = [self.assignment(done, self.K(True))]
            taken += self.branch(body, True, result)
            self.pop()
            inner: list[ast.stmt] = [
                ast.Assign(
                    [ast.Name(value, ast.Store(), **self.pos)], self.call("_select_take", fut), **self.pos
                )
            ]
            inner += [ast.If(test, taken, [], **self.pos)] if test is not None else taken
            self.if_(self.and_(self.not_(self.N(done)), self.call("_select_ready", fut)), inner)
        if e.default is not None:
            self.if_(self.not_(self.N(done)), self.branch(e.default, True, result))
        return self.N(result)
