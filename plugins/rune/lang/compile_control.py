"""Compilation of control flow: conditions, loops, break/continue/return and match."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import nodes as n
from .control import BreakSignal, ContinueSignal, ReturnSignal
from .errors import RuneError, RuneRuntimeError
from .limits import STATE, out_of_budget
from .patterns import compile_pattern
from .runtime import iterate, type_name

Code = Callable[[list], Any]


def _positioned(e: RuneError, file: str, line: int, col: int) -> None:
    if not e.line:
        e.file, e.line, e.column = file, line, col
        e.cur = (line, col)


class ControlCompiler:
    """Mixin of ``Compiler`` for control-flow expressions."""

    def condition(self, c: n.Node) -> Code:
        if isinstance(c, n.LetCond):
            value = self.expr(c.value)
            matcher = compile_pattern(self, c.pattern)
            return lambda env: matcher(env, value(env))
        cond = self.expr(c)
        file, line, col = self.filename, c.line, c.col

        def check(env: list) -> bool:
            v = cond(env)
            if v is True or v is False:
                return v
            raise RuneRuntimeError(f"expected `bool` condition, found `{type_name(v)}`", file, line, col)

        return check

    def x_If(self, e: n.If) -> Code:
        self.scope.push()
        cond = self.condition(e.cond)
        then = self.block(e.then)
        self.scope.pop()
        other = self.expr(e.otherwise) if e.otherwise is not None else (lambda env: None)

        def if_(env: list) -> Any:
            return then(env) if cond(env) else other(env)

        return if_

    def loop_body(self, body: n.Block) -> Code:
        return self.block(body)

    def x_While(self, e: n.While) -> Code:
        self.scope.push()
        cond = self.condition(e.cond)
        body = self.block(e.body)
        self.scope.pop()
        label = e.label
        state = STATE

        def while_(env: list) -> Any:
            while cond(env):
                state.budget -= 1
                if state.budget < 0:
                    out_of_budget()
                try:
                    body(env)
                except BreakSignal as b:
                    if b.label is None or b.label == label:
                        return b.value
                    raise
                except ContinueSignal as c:
                    if c.label is not None and c.label != label:
                        raise
            return None

        return while_

    def x_Loop(self, e: n.Loop) -> Code:
        body = self.block(e.body)
        label = e.label
        state = STATE

        def loop(env: list) -> Any:
            while True:
                state.budget -= 1
                if state.budget < 0:
                    out_of_budget()
                try:
                    body(env)
                except BreakSignal as b:
                    if b.label is None or b.label == label:
                        return b.value
                    raise
                except ContinueSignal as c:
                    if c.label is not None and c.label != label:
                        raise

        return loop

    def x_For(self, e: n.For) -> Code:
        iterable = self.expr(e.iterable)
        self.scope.push()
        simple = isinstance(e.pattern, n.PBind)
        slot = self.scope.declare(e.pattern.name) if simple else -1
        matcher = None if simple else compile_pattern(self, e.pattern)
        body = self.block(e.body)
        self.scope.pop()
        label = e.label
        state = STATE
        file, line, col = self.filename, e.line, e.col

        def for_(env: list) -> Any:
            try:
                it = iterate(iterable(env))
            except RuneError as err:
                _positioned(err, file, line, col)
                raise
            for v in it:
                state.budget -= 1
                if state.budget < 0:
                    out_of_budget()
                if matcher is None:
                    env[slot] = v
                elif not matcher(env, v):
                    raise RuneRuntimeError("for pattern did not match", file, line, col)
                try:
                    body(env)
                except BreakSignal as b:
                    if b.label is None or b.label == label:
                        return b.value
                    raise
                except ContinueSignal as c:
                    if c.label is not None and c.label != label:
                        raise
            return None

        return for_

    def x_Break(self, e: n.Break) -> Code:
        value = self.expr(e.value) if e.value is not None else (lambda env: None)
        label = e.label

        def break_(env: list) -> None:
            raise BreakSignal(label, value(env))

        return break_

    def x_Continue(self, e: n.Continue) -> Code:
        label = e.label

        def continue_(env: list) -> None:
            raise ContinueSignal(label)

        return continue_

    def x_Return(self, e: n.Return) -> Code:
        value = self.expr(e.value) if e.value is not None else (lambda env: None)

        def return_(env: list) -> None:
            raise ReturnSignal(value(env))

        return return_

    def x_Yield(self, e: n.Yield) -> Code:
        # Reported when reached so the rest of a file still compiles and runs.
        file, line, col = self.filename, e.line, e.col

        def unsupported(env: list) -> None:
            raise RuneRuntimeError("generators (`yield`) are not supported yet", file, line, col)

        return unsupported

    def x_Match(self, e: n.Match) -> Code:
        subject = self.expr(e.subject)
        arms = []
        for arm in e.arms:
            self.scope.push()
            matcher = compile_pattern(self, arm.pattern)
            guard = self.condition(arm.guard) if arm.guard is not None else None
            body = self.expr(arm.body)
            self.scope.pop()
            arms.append((matcher, guard, body))
        _file, _line, _col = self.filename, e.line, e.col

        def match(env: list) -> Any:
            v = subject(env)
            for matcher, guard, body in arms:
                if matcher(env, v) and (guard is None or guard(env)):
                    return body(env)
            return None  # like upstream Rune, a match without a matching arm evaluates to ()

        return match

    def x_Select(self, e: n.Select) -> Code:
        file, line, col = self.filename, e.line, e.col

        def unsupported(env: list) -> None:
            raise RuneRuntimeError("`select` is not supported yet", file, line, col)

        return unsupported

    def x_LetCond(self, e: n.LetCond) -> Code:
        return self.condition(e)
