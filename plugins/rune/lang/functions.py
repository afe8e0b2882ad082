"""Runtime shape of compiled functions: statement sequencing and the call wrapper that
enforces the budget and depth limits and records Rune stack frames."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import nodes as n
from .control import BreakSignal, ContinueSignal, ReturnSignal
from .errors import Frame, RuneError, RuneRuntimeError
from .limits import STATE, out_of_budget, too_deep
from .scope import FnScope
from .values import Function, Future

Code = Callable[[list], Any]


def sequence(stmts: list[Code], tail: Code | None) -> Code:
    if tail is None:
        if not stmts:
            return lambda env: None
        if len(stmts) == 1:
            s0 = stmts[0]

            def one(env: list) -> None:
                s0(env)

            return one

        def run(env: list) -> None:
            for s in stmts:
                s(env)

        return run
    if not stmts:
        return tail
    if len(stmts) == 1:
        s0 = stmts[0]

        def one_tail(env: list) -> Any:
            s0(env)
            return tail(env)

        return one_tail

    def run_tail(env: list) -> Any:
        for s in stmts:
            s(env)
        return tail(env)

    return run_tail


def make_function(
    name: str,
    file: str,
    binders: list,
    body: Code,
    scope: FnScope,
    is_async: bool,
    node: n.Node,
    captured: list | None = None,
) -> Function:
    """Wrap a compiled body into a callable ``Function`` with budget, depth and trace handling."""
    arity = len(binders)
    state = STATE
    line, col = node.line, node.col
    # Plain parameters are declared first, so they occupy slots 0..arity-1 of the frame.
    simple = all(getattr(b, "__name__", "") == "bind" for b in binders)
    padding = [None] * (scope.nslots - arity)

    def call(*args: Any) -> Any:
        if len(args) != arity:
            raise RuneRuntimeError(f"`{name}` expects {arity} arguments, got {len(args)}")
        if simple:
            env = [*args, *padding]
        else:
            env = [None] * scope.nslots
            for b, a in zip(binders, args):
                if not b(env, a):
                    raise RuneRuntimeError(f"argument did not match the parameter pattern of `{name}`")
        if captured:
            for dst, v in captured:
                env[dst] = v
        state.budget -= 1
        if state.budget < 0:
            out_of_budget()
        state.depth += 1
        if state.depth > state.max_depth:
            state.depth -= 1
            too_deep()
        try:
            return body(env)
        except ReturnSignal as r:
            return r.value
        except RuneError as err:
            cur = err.cur or ((err.line, err.column) if err.line and err.file == file else (line, col))
            if not err.line:
                err.file, err.line, err.column = file, cur[0], cur[1]
            err.trace.append(Frame(name, file, cur[0], cur[1]))
            raise
        except (BreakSignal, ContinueSignal):
            raise RuneRuntimeError(
                f"`break` or `continue` outside of a loop in `{name}`", file, line, col
            ) from None
        finally:
            state.depth -= 1

    if is_async:
        sync_call = call

        def call(*args: Any) -> Future:  # type: ignore[no-redef]
            return Future(lambda: sync_call(*args))

    return Function(name, call, is_async)
