"""Compile match patterns into ``(env, value) -> bool`` predicates that bind slots."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import nodes as n
from .errors import RuneCompileError
from .runtime import eq
from .values import Instance, Option, Result, TypeInfo

if TYPE_CHECKING:
    from .compiler import Compiler

Matcher = Callable[[list, Any], bool]


def compile_pattern(c: Compiler, p: n.Node) -> Matcher:
    if isinstance(p, n.PWild):
        return lambda env, v: True
    if isinstance(p, n.PBind):
        slot = c.scope.declare(p.name)

        def bind(env: list, v: Any) -> bool:
            env[slot] = v
            return True

        return bind
    if isinstance(p, n.PLit):
        lit = c.literal_value(p.value)
        t = type(lit)

        def lit_match(env: list, v: Any) -> bool:
            return type(v) is t and v == lit

        return lit_match
    if isinstance(p, n.PRange):
        lo, hi, inc = p.start, p.end, p.inclusive
        lo = c.literal_value(lo)
        hi = c.literal_value(hi) if hi is not None else None
        t = type(lo)

        def range_match(env: list, v: Any) -> bool:
            if type(v) is not t or v < lo:
                return False
            return hi is None or (v <= hi if inc else v < hi)

        return range_match
    if isinstance(p, n.POr):
        options = [compile_pattern(c, o) for o in p.options]
        return lambda env, v: any(m(env, v) for m in options)
    if isinstance(p, n.PVec) or (isinstance(p, n.PTuple) and p.path is None):
        subs = [compile_pattern(c, i) for i in p.items]
        count, rest = len(subs), p.rest
        want = list if isinstance(p, n.PVec) else tuple
        if want is tuple and count == 0 and not rest:
            return lambda env, v: v is None  # `()` matches unit

        def seq_match(env: list, v: Any) -> bool:
            if type(v) is not want or (len(v) != count if not rest else len(v) < count):
                return False
            return all(m(env, x) for m, x in zip(subs, v))

        return seq_match
    if isinstance(p, n.PObject) and p.path is None:
        fields = [(k, compile_pattern(c, sub)) for k, sub in p.fields]
        keys = {k for k, _ in fields}
        rest = p.rest

        def obj_match(env: list, v: Any) -> bool:
            if type(v) is not dict or (not rest and v.keys() != keys):
                return False
            for k, m in fields:
                if k not in v or not m(env, v[k]):
                    return False
            return True

        return obj_match
    if isinstance(p, (n.PTuple, n.PObject, n.PPath)):
        return _typed_pattern(c, p)
    raise RuneCompileError(f"unsupported pattern {type(p).__name__}", c.filename, p.line, p.col)


def _typed_pattern(c: Compiler, p: n.Node) -> Matcher:
    names = p.names if isinstance(p, n.PPath) else p.path
    last = names[-1]
    if len(names) == 1 and last in ("Some", "Ok", "Err", "None"):
        if last == "None":
            return lambda env, v: type(v) is Option and not v.is_some
        if not isinstance(p, n.PTuple) or len(p.items) != 1:
            raise RuneCompileError(f"`{last}` pattern takes one item", c.filename, p.line, p.col)
        sub = compile_pattern(c, p.items[0])
        if last == "Some":
            return lambda env, v: type(v) is Option and v.is_some and sub(env, v.value)
        ok = last == "Ok"
        return lambda env, v: type(v) is Result and v.is_ok is ok and sub(env, v.value)
    resolve = c.static_path(names, p)
    cache: list = []

    def target() -> Any:
        if not cache:
            cache.append(resolve())
        return cache[0]

    if isinstance(p, n.PPath):

        def path_match(env: list, v: Any) -> bool:
            t = target()
            if isinstance(t, TypeInfo):
                return type(v) is Instance and v.type is t
            if isinstance(t, Instance):
                return type(v) is Instance and v.type is t.type
            return type(v) is type(t) and eq(v, t)

        return path_match
    if isinstance(p, n.PTuple):
        subs = [compile_pattern(c, i) for i in p.items]
        rest = p.rest

        def tuple_match(env: list, v: Any) -> bool:
            if type(v) is not Instance or v.type is not target():
                return False
            vals = v.values
            if len(vals) != len(subs) and not (rest and len(vals) >= len(subs)):
                return False
            return all(m(env, x) for m, x in zip(subs, vals))

        return tuple_match
    fields = [(k, compile_pattern(c, sub)) for k, sub in p.fields]

    def struct_match(env: list, v: Any) -> bool:
        if type(v) is not Instance or v.type is not target():
            return False
        for k, m in fields:
            if k not in v.type.fields or not m(env, v.get(k)):
                return False
        return True

    return struct_match
