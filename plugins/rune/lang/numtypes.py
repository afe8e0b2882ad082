"""Static types of locals: which variables of a function only ever hold an i64 (or only an
f64, a string, a vector or an object).

A name qualifies when every binding of it in the function (``let``, ``for`` over an integer
range, assignments) has that type statically: a literal, another qualifying name, arithmetic
with an operand of that type (Rune never mixes int and float, so the result has that type or
the operation raises) or a cast. The code generator drops ``type(x) is int`` guards for such
names; the i64 overflow checks stay."""

from __future__ import annotations

from typing import Any

from . import nodes as n

INT_CASTS = frozenset({"i64", "u64", "usize", "isize", "i32", "u32", "u8", "i8", "u16", "i16"})
ARITH = frozenset({"+", "-", "*", "/", "%"})
_RANGE = object()


class Facts:
    """What one pass over a function body finds: ``types`` of the Rune names that always hold
    an ``int`` (or always a ``float``), whether it is a ``generator`` (closures, async blocks
    and items are separate functions) and the names it ``assigned`` with ``=``/``op=``. Names
    used before any binding refer to parameters, captures or items and are never typed."""

    __slots__ = ("assigned", "generator", "operands", "types")

    def __init__(self, body: n.Node) -> None:
        binds: dict[str, list[Any]] = {}
        unknown: set[str] = set()
        self.assigned: set[str] = set()
        _walk(body, binds, unknown, self.assigned)
        self.types = _solve(binds, unknown)
        self.generator = "<yield>" in unknown
        self.operands: dict[str, int] = {}  # name -> uses whose code tests its type
        _count_operands(body, self.operands)


def _solve(binds: dict[str, list[Any]], unknown: set[str]) -> dict[str, type]:
    types: dict[str, type] = {}
    for name in set(binds) - unknown:
        first = binds[name][0]
        kind = int if first is _RANGE else static_type(first, {}, optimistic=True)
        if kind is not None:
            types[name] = kind
    changed = True
    while changed:
        changed = False
        for name, kind in list(types.items()):
            if not all((int if v is _RANGE else static_type(v, types)) is kind for v in binds[name]):
                del types[name]
                changed = True
    return types


def static_type(e: Any, names: dict[str, type], optimistic: bool = False) -> type | None:
    """The Python type ``e`` always evaluates to (or it raises): ``int``, ``float``, ``str``,
    ``list`` (vector literal) or ``dict`` (object literal)."""
    if isinstance(e, n.Lit):
        return type(e.value) if type(e.value) in (int, float, str) else None
    if isinstance(e, n.Template):
        return str
    if isinstance(e, n.VecLit):
        return list
    if isinstance(e, n.ObjectLit):
        return dict if e.path is None else None
    if isinstance(e, n.Path):
        return names.get(e.names[0]) if len(e.names) == 1 else None
    if isinstance(e, n.Binary):
        if e.op not in ARITH:
            return None
        left = static_type(e.left, names, optimistic)
        right = static_type(e.right, names, optimistic)
        if optimistic and (left is None or right is None):
            return left or right
        return left if left is not None and (right is None or right is left) else right
    if isinstance(e, n.Unary):
        return static_type(e.operand, names, optimistic) if e.op == "-" else None
    if isinstance(e, n.Cast):
        return int if e.type_name in INT_CASTS else float if e.type_name in ("f64", "f32") else None
    return None


def _pattern_names(p: Any, unknown: set[str]) -> None:
    if isinstance(p, n.PBind):
        unknown.add(p.name)
    elif isinstance(p, n.Node):
        for v in vars(p).values():
            if isinstance(v, list):
                for x in v:
                    _pattern_names(x[1] if isinstance(x, tuple) else x, unknown)
            elif isinstance(v, n.Node):
                _pattern_names(v, unknown)


def _walk(node: Any, binds: dict[str, list[Any]], unknown: set[str], assigned: set[str]) -> None:
    if isinstance(node, list):
        for x in node:
            _walk(x, binds, unknown, assigned)
        return
    if isinstance(node, tuple):
        for x in node:
            _walk(x, binds, unknown, assigned)
        return
    if not isinstance(node, n.Node) or isinstance(node, (n.Closure, n.Item)):
        return
    if isinstance(node, n.Block) and node.is_async:
        return
    if isinstance(node, n.Yield):
        unknown.add("<yield>")  # not an identifier: marks a generator body
    if isinstance(node, n.Path):
        if len(node.names) == 1 and node.names[0] not in binds:
            unknown.add(node.names[0])
        return
    if isinstance(node, n.Let):
        _walk(node.value, binds, unknown, assigned)
        if isinstance(node.pattern, n.PBind) and node.value is not None:
            binds.setdefault(node.pattern.name, []).append(node.value)
        else:
            _pattern_names(node.pattern, unknown)
        return
    if isinstance(node, n.For):
        it = node.iterable
        if (
            isinstance(node.pattern, n.PBind)
            and isinstance(it, n.Range)
            and it.start is not None
            and it.end is not None
        ):
            _walk(it, binds, unknown, assigned)
            binds.setdefault(node.pattern.name, []).append(_RANGE)
        else:
            _walk(it, binds, unknown, assigned)
            _pattern_names(node.pattern, unknown)
        _walk(node.body, binds, unknown, assigned)
        return
    if isinstance(node, n.Assign):
        _walk(node.value, binds, unknown, assigned)
        t = node.target
        if isinstance(t, n.Path) and len(t.names) == 1:
            assigned.add(t.names[0])
            op = node.op[:-1] if node.op != "=" else ""
            if (op and op not in ARITH) or t.names[0] not in binds:
                unknown.add(t.names[0])
            elif not op:
                binds[t.names[0]].append(node.value)
            # `x op= v` with an arithmetic op keeps the type of `x` (or raises)
        elif isinstance(t, n.TupleLit):
            for item in t.items:
                if isinstance(item, n.Path):
                    unknown.update(item.names)
                    assigned.update(item.names)
        _walk(t, binds, unknown, assigned)
        return
    if isinstance(node, (n.MatchArm, n.LetCond)):
        _pattern_names(node.pattern, unknown)
    if isinstance(node, n.Select):
        for pattern, _, _ in node.arms:
            _pattern_names(pattern, unknown)
    for v in vars(node).values():
        if isinstance(v, (n.Node, list, tuple)):
            _walk(v, binds, unknown, assigned)


def _count_operands(node: Any, counts: dict[str, int], weight: int = 1) -> None:
    """Operands of binary operators and bases of field access / indexing: each is a ``type()``
    test in the generated code. A use inside a loop counts twice (it runs repeatedly)."""
    if isinstance(node, (list, tuple)):
        for x in node:
            _count_operands(x, counts, weight)
        return
    if not isinstance(node, n.Node) or isinstance(node, (n.Closure, n.Item)):
        return
    if isinstance(node, n.Binary):
        sides: tuple[Any, ...] = (node.left, node.right)
    elif isinstance(node, (n.Field, n.Index)):
        sides = (node.target,)
    else:
        sides = ()
    for side in sides:
        if isinstance(side, n.Path) and len(side.names) == 1:
            counts[side.names[0]] = counts.get(side.names[0], 0) + weight
    if isinstance(node, (n.For, n.While, n.Loop)):
        weight = 2
    for v in vars(node).values():
        if isinstance(v, (n.Node, list, tuple)):
            _count_operands(v, counts, weight)
