"""Integer clones: a second version of a function, generated for calls whose numeric
parameters are ints.

A parameter qualifies when the body uses it as an operand of arithmetic or ordering and never
rebinds or assigns it. The clone ``F_name_i`` declares those parameters ``int``, so their type
tests disappear; the generic ``F_name`` starts with ``if type(p) is int ...: return
F_name_i(...)``. A call whose arguments are statically ints (a literal, ``n - 1`` inside a
clone) goes to the clone directly, and its result has the clone's inferred return type: the
type every ``return`` and the tail evaluate to, found by assuming the type for the recursive
calls and checking the body agrees (``fib(n - 1) + fib(n - 2)`` is then int + int). Overflow
checks and the budget tick stay as they are in the generic code."""

from __future__ import annotations

import ast
from typing import Any, TypeGuard

from . import nodes as n
from .codegen_base import Clone, CodeGenBase, Pending
from .flow import nodes
from .narrowing import diverges
from .numtypes import Calls, Facts, static_type

_NEVER = object()  # the type of an expression that never produces a value (`return`, `panic!`)
_EXITS = (n.Return, n.Try)  # nodes that leave a function early


def _binds_only(params: list[n.Node]) -> TypeGuard[list[n.PBind]]:
    """Whether every parameter is a plain name (only such functions get a clone)."""
    return all(type(prm) is n.PBind for prm in params)


class CloneGen(CodeGenBase):
    """Mixin of ``CodeGen`` deciding, inferring and calling integer clones."""

    walked: dict[int, tuple[n.Node, Facts]]  # id(function body) -> its walk (see ``facts``)

    def facts(self, body: n.Node) -> Facts:
        """The ``numtypes`` walk of a function body, made once per body."""
        found = self.walked.get(id(body))
        if found is None:
            found = self.walked[id(body)] = (body, Facts(body))  # the body is kept: ids stay unique
        return found[1]

    def clone_of(self, p: Pending) -> Clone | None:
        """The clone of the function ``p`` declares, if it has one (decided once)."""
        if p.pyname in self.clones:
            return self.clones[p.pyname]
        decl = p.decl
        clone = None
        if (
            isinstance(decl, n.FnDecl)
            and not decl.is_async
            and not decl.has_self
            and _binds_only(decl.params)
        ):
            facts = self.facts(decl.body)
            params = [
                i
                for i, prm in enumerate(decl.params)
                if prm.name in facts.numeric_operands
                and prm.name not in facts.assigned
                and prm.name not in facts.rebound
            ]
            if params and not facts.generator:
                clone = Clone(p.pyname + "_i", params)
        self.clones[p.pyname] = clone
        if self.inferring:
            self.inferring[-1].append(p.pyname)  # depends on the assumptions being checked
        if clone is not None:
            self.infer_returns(p, clone)
        return clone

    def infer_returns(self, p: Pending[n.FnDecl], clone: Clone) -> None:
        """Set ``clone.returns``: try each candidate as the type recursive calls return and keep
        the one the body then evaluates to. Clones decided while a candidate is checked depend
        on it and are forgotten when it fails."""
        for candidate in (int, float):
            clone.returns = candidate
            self.inferring.append([])
            holds = self.body_type(p, clone) is candidate
            decided = self.inferring.pop()
            if holds:
                if self.inferring:
                    self.inferring[-1].extend(decided)
                return
            for name in decided:
                del self.clones[name]
        clone.returns = None

    def body_type(self, p: Pending[n.FnDecl], clone: Clone) -> Any:
        decl = p.decl
        saved = (self.module, self.self_type)
        self.module, self.self_type = p.module, p.self_type
        try:
            facts = self.facts(decl.body)
            assert _binds_only(decl.params)  # see ``clone_of``
            seeds: dict[str, type] = {decl.params[i].name: int for i in clone.params}
            calls = self.calls_typer(facts.rebound | {prm.name for prm in decl.params})
            names = {**facts.solve(seeds, calls), **seeds}
            kind = self.value_type(decl.body, names, calls)
            for value in _exits(decl.body):
                if kind is None:
                    break
                if value is None:  # `?` or a bare `return`
                    return None
                kind = _join(kind, self.value_type(value, names, calls))
            return kind
        finally:
            self.module, self.self_type = saved

    def value_type(self, e: n.Node, names: dict[str, type], calls: Any) -> Any:
        """The type the value of ``e`` always has, ``_NEVER`` if it has none, else None."""
        if type(e) is n.Block and not e.is_async:
            if e.tail is None:
                return _NEVER if diverges(e) else None
            return self.value_type(e.tail, names, calls)
        if type(e) is n.If:
            if e.otherwise is None:
                return None
            return _join(self.value_type(e.then, names, calls), self.value_type(e.otherwise, names, calls))
        if type(e) is n.Match:
            kind: Any = _NEVER
            for arm in e.arms:
                kind = _join(kind, self.value_type(arm.body, names, calls))
            return kind
        if type(e) is n.Return or (type(e) is n.Macro and e.name == "panic"):
            return _NEVER
        return static_type(e, names, calls=calls)

    def call_type(self, e: n.Call) -> type | None:
        """The return type of call ``e`` in the code being generated, when it goes to a clone."""
        clone = self.clone_call(e, self.static_type)
        return clone.returns if clone is not None else None

    def calls_typer(self, local: set[str]) -> Calls:
        """Types calls for ``numtypes`` (before code generation) in a function binding the
        names ``local``."""

        def calls(e: n.Call, names: dict[str, type]) -> type | None:
            clone = self.clone_call(e, lambda a: static_type(a, names, calls=calls), local)
            return clone.returns if clone is not None else None

        return calls

    def clone_call(self, e: n.Call, arg_type: Any, local: set[str] | None = None) -> Clone | None:
        """The clone call ``e`` can use: its callee is a declared function with a clone and
        ``arg_type`` proves every argument at a specialised position an int."""
        func = e.func
        if type(func) is not n.Path:
            return None
        if len(func.names) == 1 and (
            func.names[0] in local if local is not None else self.lookup(func.names[0]) is not None
        ):
            return None
        p = self.declared.get(id(self.static(func.names)))
        if p is None or len(p.decl.params) != len(e.args):
            return None
        clone = self.clone_of(p)
        if clone is None or any(arg_type(e.args[i]) is not int for i in clone.params):
            return None
        self.reference(p, clone)
        return clone

    def reference(self, p: Pending[n.FnDecl], clone: Clone) -> None:
        """Code about to be generated calls ``clone``: a stub generates it at its first call."""
        if not clone.done and clone.pyname not in self.ns:
            self.ns[clone.pyname] = self.stub(p, clone)

    def dispatch(self, p: Pending[n.FnDecl], clone: Clone, params: list[str]) -> ast.stmt:
        """``if type(p) is int ...: return F_i(_s, *params)`` at the start of the generic code."""
        self.reference(p, clone)
        test = self.and_(*(self.type_is(self.N(params[i]), "int") for i in clone.params))
        call = self.call(clone.pyname, self.N("_s"), *(self.N(p) for p in params))
        return ast.If(test, [ast.Return(call, **self.pos)], [], **self.pos)


def _join(a: Any, b: Any) -> Any:
    if a is _NEVER:
        return b
    if b is _NEVER or a is b:
        return a
    return None


def _exits(body: n.Node) -> list[n.Node | None]:
    """The values of the ``return`` expressions of a function body (None for a bare ``return``
    and for each ``?``, which may return early), not looking into closures and items."""
    return [node.value if type(node) is n.Return else None for node in nodes((body,)) if type(node) in _EXITS]
