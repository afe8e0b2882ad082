"""Inline paths of the generated code for ``std::collections`` (see ``std_collections``).

* The hot methods (``FAST_METHODS``) are called directly on a ``HashMap``, ``HashSet`` or
  ``VecDeque`` after a type test; other receivers take ``_invoke``. ``push_back`` onto a small
  deque appends inline, and ``map.insert(k, v)`` whose result is unused stores an integer or
  string key inline without building the ``Option`` of the old value.
* Raw options: the subject of ``if let`` / ``while let`` / ``match`` whose patterns are only
  ``Some(..)``, ``None`` and ``_`` and which calls ``get`` on a map, or ``pop_front`` /
  ``pop_back`` / ``front`` / ``back`` on a deque, holds the value itself or the marker
  ``_NOVAL`` instead of an ``Option`` (a Python object built and taken apart at once). Any other
  receiver still answers an ``Option`` through ``_invoke``, unwrapped by ``_raw_option``, which
  gives ``_NOTOPT`` for a value that is no ``Option`` at all, so no pattern of the two matches it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Literal

from . import nodes as n
from .limits import ITEM_BLOCK

if TYPE_CHECKING:
    from .codegen_base import CodeGenBase

__all__ = [
    "FAST_METHODS",
    "NOTOPT",
    "NOVAL",
    "fast_method",
    "raw_option",
    "raw_option_pattern",
    "raw_option_subject",
]


FAST_METHODS: dict[tuple[str, int], tuple[str, ...]] = {
    ("get", 1): ("_HashMap",),
    ("insert", 2): ("_HashMap",),
    ("insert", 1): ("_HashSet",),
    ("contains_key", 1): ("_HashMap",),
    ("contains", 1): ("_HashSet",),
    ("remove", 1): ("_HashMap", "_HashSet"),
    ("push_back", 1): ("_VecDeque",),
    ("push_front", 1): ("_VecDeque",),
    ("pop_front", 0): ("_VecDeque",),
    ("pop_back", 0): ("_VecDeque",),
    ("front", 0): ("_VecDeque",),
    ("back", 0): ("_VecDeque",),
}
"""(method, argument count) the generated code calls directly on these collections (the names
the unit's namespace binds them to), after a type test; other receivers take ``_invoke``."""


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NOVAL = _Marker("NOVAL")
"""A raw option that is ``None``."""
NOTOPT = _Marker("NOTOPT")
"""A raw option subject whose value was not an ``Option``."""


def raw_option(v: Any) -> Any:
    """An ``Option`` answered by a receiver of another type, as a raw option."""
    from .values import Option

    if type(v) is Option:
        return v.value if v.is_some else NOVAL
    return NOTOPT


# (method, argument count) -> (collection, how its raw value is read); ``{o}`` is the receiver.
_RAW = {
    ("pop_front", 0): ("_VecDeque", "popleft"),
    ("pop_back", 0): ("_VecDeque", "pop"),
    ("front", 0): ("_VecDeque", 0),
    ("back", 0): ("_VecDeque", -1),
    ("get", 1): ("_HashMap", None),
}


def _option_patterns(patterns: list[n.Node]) -> bool:
    """Only ``Some(p)``, ``None`` and ``_``: what a raw option can be matched against."""
    for p in patterns:
        if isinstance(p, n.PWild):
            continue
        if isinstance(p, n.PPath) and p.names == ["None"]:
            continue
        if isinstance(p, n.PTuple) and p.path == ["Some"] and len(p.items) == 1 and not p.rest:
            continue
        return False
    return True


def raw_option_subject(gen: CodeGenBase, e: n.Node, patterns: list[n.Node]) -> ast.Name | None:
    """The subject ``e`` evaluated into a fresh local as a raw option, or None (then the caller
    evaluates it as usual)."""
    if not isinstance(e, n.MethodCall) or not _option_patterns(patterns):
        return None
    raw = _RAW.get((e.name, len(e.args)))
    if raw is None or gen.static_type(e.receiver) is not None:
        return None
    cls, how = raw
    vals = gen.exprs([e.receiver, *e.args])
    obj = gen.named(vals[0])
    args = [gen.simple(a) for a in vals[1:]]
    slow: ast.expr = gen.call("_raw_option", gen.call("_invoke", gen.N("_s"), obj, gen.K(e.name), *args))
    if cls == "_HashMap":
        key = args[0]
        table = gen.attr(obj, "table")
        test = gen.and_(gen.type_is(obj, cls), gen.or_(gen.type_is(key, "str"), gen.type_is(key, "int")))
        fast: ast.expr = gen.call(gen.attr(table, "get"), key, gen.N("_NOVAL"))
        # an object's `get` with a string key reads the dict the same way
        by_name = gen.and_(gen.type_is(obj, "dict"), gen.type_is(key, "str"))
        slow = gen.ifexp(by_name, gen.call(gen.attr(obj, "get"), key, gen.N("_NOVAL")), slow)
    else:
        items = gen.attr(obj, "items")
        value = gen.call(gen.attr(items, how)) if isinstance(how, str) else gen.sub(items, gen.K(how))
        test = gen.type_is(obj, cls)
        fast = gen.ifexp(gen.attr(obj, "items"), value, gen.N("_NOVAL"))
    name = gen.fresh("raw")
    gen.assign(name, gen.ifexp(test, fast, slow))
    _raw_names(gen).add(name)
    return gen.N(name)


def _raw_names(gen: CodeGenBase) -> set[str]:
    names = gen.__dict__.get("raw_option_names")
    if names is None:
        names = gen.__dict__["raw_option_names"] = set()
    return names


def raw_option_pattern(gen: CodeGenBase, p: n.Node, v: ast.expr) -> ast.expr | Literal[False]:
    """The test of ``Some(p)`` / ``None`` against a raw option subject ``v``; False when ``v``
    is an ordinary value."""
    if type(v) is not ast.Name or v.id not in _raw_names(gen):
        return False
    if isinstance(p, n.PPath):
        return gen.is_(v, gen.N("_NOVAL"))
    assert isinstance(p, n.PTuple)
    present = gen.and_(
        gen.compare(v, [ast.IsNot()], [gen.N("_NOVAL")]), gen.compare(v, [ast.IsNot()], [gen.N("_NOTOPT")])
    )
    names = _raw_names(gen)
    names.discard(v.id)  # inside `Some(..)`, `v` is the value itself (`Some(Some(x))`)
    try:
        inner = gen.pattern(p.items[0], v)
    finally:
        names.add(v.id)
    return gen.and_(present, inner)


def fast_method(
    gen: CodeGenBase, obj: ast.expr, name: str, args: list[ast.expr], unused: bool
) -> ast.expr | None:
    """``obj.name(args)`` on a collection, or None when ``name`` is no hot collection method."""
    collections = FAST_METHODS.get((name, len(args)))
    if collections is None:
        return None
    args = [gen.simple(a) for a in args]
    slow = gen.call("_invoke", gen.N("_s"), obj, gen.K(name), *args)
    if name == "push_back":
        items = gen.attr(obj, "items")
        # a small deque grows inline; a big one through the method, which accounts per block
        room = gen.compare(gen.call("len", items), [ast.Lt()], [gen.K(ITEM_BLOCK)])
        return gen.ifexp(
            gen.and_(gen.type_is(obj, "_VecDeque"), room), gen.call(gen.attr(items, "append"), *args), slow
        )
    if name == "insert" and unused and len(args) == 2:
        return _store(gen, obj, args[0], args[1], slow)
    v: ast.expr = slow
    for cls in reversed(collections):
        v = gen.ifexp(gen.type_is(obj, cls), gen.call(gen.attr(obj, name), *args), v)
    return v


def _store(gen: CodeGenBase, obj: ast.expr, key: ast.expr, value: ast.expr, slow: ast.expr) -> ast.expr:
    """``map.insert(key, value);``: an int or string key goes straight into a small table."""
    table = gen.attr(obj, "table")
    test = gen.and_(
        gen.type_is(obj, "_HashMap"),
        gen.or_(gen.type_is(key, "str"), gen.type_is(key, "int")),
        gen.compare(gen.call("len", table), [ast.Lt()], [gen.K(ITEM_BLOCK)]),
    )
    target = ast.Subscript(table, key, ast.Store(), **gen.pos)
    gen.if_(test, [gen.assignment(target, value)], [ast.Expr(slow, **gen.pos)])
    return gen.K(None)
