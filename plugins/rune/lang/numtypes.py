"""Static types of locals: which variables of a function only ever hold an i64 (or only an
f64, a string, a vector or an object).

A name qualifies when every binding of it in the function (``let``, ``for`` over an integer
range, assignments) has that type statically: a literal, another qualifying name, arithmetic
with an operand of that type (Rune never mixes int and float, so the result has that type or
the operation raises; an int *right* operand proves nothing: the left one may be a ``u64``,
whose type the result takes) or a cast. The code generator drops ``type(x) is int`` guards for such
names; the i64 overflow checks stay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeGuard

from . import nodes as n
from .codegen_collections import FAST_METHODS
from .std_u64 import U64

INT_CASTS = frozenset({"i64", "usize", "isize", "i32", "u32", "u8", "i8", "u16", "i16"})  # `as u64`: a U64
ARITH = frozenset({"+", "-", "*", "/", "%"})
_RANGE = object()
NUMERIC_OPS = ARITH | {"<", "<=", ">", ">="}
Calls = Callable[[n.Call, dict[str, type]], "type | None"]


class Facts:
    """What one pass over a function body finds: whether it is a ``generator`` (closures, async
    blocks and items are separate functions), the names it ``assigned`` with ``=``/``op=``, the
    names it binds (``rebound``: ``let``, ``for`` and patterns), the names that are an operand
    of arithmetic or ordering (``numeric_operands``); ``solve`` then finds the types of the
    Rune names that always hold an ``int`` (or always a ``float``, ...). Names used before any
    binding refer to parameters, captures or items and are never typed."""

    __slots__ = (
        "assigned",
        "binds",
        "generator",
        "numeric_operands",
        "operands",
        "rebound",
        "unknown",
    )

    def __init__(self, body: n.Node) -> None:
        self.binds: dict[str, list[Any]] = {}
        self.unknown: set[str] = set()
        self.assigned: set[str] = set()
        self.rebound: set[str] = set()
        self.numeric_operands: set[str] = set()
        self.operands: dict[str, int] = {}  # name -> uses whose code tests its type
        _walk(body, self, 1)
        self.rebound.update(self.binds)
        self.generator = "<yield>" in self.unknown

    def solve(self, seeds: dict[str, type] | None = None, calls: Calls | None = None) -> dict[str, type]:
        """Type the bound names; ``seeds`` are parameters of known type (never rebound) and
        ``calls`` gives the type of a call expression (see ``static_type``). A string variable
        stays untyped: it may come to hold a ``SharedString`` (see ``shared_string``)."""
        types = _solve(self.binds, self.unknown, seeds or {}, calls)
        return {name: kind for name, kind in types.items() if kind is not str}


def _solve(
    binds: dict[str, list[Any]], unknown: set[str], seeds: dict[str, type], calls: Calls | None
) -> dict[str, type]:
    types: dict[str, type] = {}
    for name in set(binds) - unknown:
        first = binds[name][0]
        kind = int if first is _RANGE else static_type(first, seeds, optimistic=True, calls=calls)
        if kind is not None:
            types[name] = kind
    changed = True
    while changed:
        changed = False
        known = {**seeds, **types}
        for name, kind in list(types.items()):
            if not all(
                (int if v is _RANGE else static_type(v, known, calls=calls)) is kind for v in binds[name]
            ):
                del types[name]
                changed = True
                break
    return types


def counts_in_i64(it: Any) -> TypeGuard[n.Range]:
    """Whether ``for x in it`` counts in i64: a range with both ends that does not start at a u64
    literal or ``as u64`` cast (``0u64..n`` counts in u64, its items are not ints)."""
    if not (isinstance(it, n.Range) and it.start is not None and it.end is not None):
        return False
    start = it.start
    return not (
        (type(start) is n.Lit and type(start.value) is U64)
        or (type(start) is n.Cast and start.type_name == "u64")
    )


def static_type(
    e: Any, names: dict[str, type], optimistic: bool = False, calls: Calls | None = None
) -> type | None:
    """The Python type ``e`` always evaluates to (or it raises): ``int``, ``float``, ``str``,
    ``list`` (vector literal) or ``dict`` (object literal). ``calls(call, names)`` types calls
    of functions whose return type is known."""
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
        left = static_type(e.left, names, optimistic, calls)
        right = static_type(e.right, names, optimistic, calls)
        if optimistic and (left is None or right is None):
            return left or right
        if left is None and right is int:
            return None  # `x + 1`: a u64 `x` makes a u64
        return left if left is not None and (right is None or right is left) else right
    if isinstance(e, n.Unary):
        return static_type(e.operand, names, optimistic, calls) if e.op == "-" else None
    if calls is not None and type(e) is n.Call:
        return calls(e, names)
    if isinstance(e, n.Cast):
        return int if e.type_name in INT_CASTS else float if e.type_name in ("f64", "f32") else None
    return None


def _pattern_names(p: Any, f: Facts) -> None:
    if isinstance(p, n.PBind):
        f.unknown.add(p.name)
        f.rebound.add(p.name)
    elif isinstance(p, n.Node):
        for v in vars(p).values():
            if isinstance(v, list):
                for x in v:
                    _pattern_names(x[1] if isinstance(x, tuple) else x, f)
            elif isinstance(v, n.Node):
                _pattern_names(v, f)


def _walk(node: Any, f: Facts, weight: int) -> None:
    """Record the bindings, unknown names and assignments of ``node`` into ``f`` and count its
    operands (see ``_count_operands``) in the same pass."""
    binds, unknown, assigned, counts = f.binds, f.unknown, f.assigned, f.operands
    cls = type(node)
    if cls is list or cls is tuple:
        for x in node:
            _walk(x, f, weight)
        return
    # Node classes derive from ``Node`` (or ``Item``) directly: exact type tests suffice.
    if cls is n.Path:
        if len(node.names) == 1 and node.names[0] not in binds:
            unknown.add(node.names[0])
        return
    # ``issubclass`` of the class in hand, as fast as ``isinstance``, keeps ``node`` untyped for the
    # attribute reads below: each follows an exact class test.
    if cls is n.Lit or not issubclass(cls, n.Node) or cls is n.Closure or issubclass(cls, n.Item):
        return
    if cls is n.Block and node.is_async:
        _count_operands(node, counts, weight)  # its bindings belong to another function
        return
    weight = _count_own(cls, node, counts, weight)
    if cls is n.Binary and node.op in NUMERIC_OPS:
        for side in (node.left, node.right):
            if type(side) is n.Path and len(side.names) == 1:
                f.numeric_operands.add(side.names[0])
    if cls is n.Yield:
        unknown.add("<yield>")  # not an identifier: marks a generator body
    if cls is n.Let:
        _walk(node.value, f, weight)
        if isinstance(node.pattern, n.PBind) and node.value is not None:
            binds.setdefault(node.pattern.name, []).append(node.value)
        else:
            _pattern_names(node.pattern, f)
        return
    if cls is n.For:
        it = node.iterable
        if isinstance(node.pattern, n.PBind) and counts_in_i64(it):
            _walk(it, f, weight)
            binds.setdefault(node.pattern.name, []).append(_RANGE)
        else:
            _walk(it, f, weight)
            _pattern_names(node.pattern, f)
        _walk(node.body, f, weight)
        return
    if cls is n.Assign:
        _walk(node.value, f, weight)
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
        _walk(t, f, weight)
        return
    if cls is n.MatchArm or cls is n.LetCond:
        _pattern_names(node.pattern, f)
    if cls is n.Select:
        for pattern, _, _ in node.arms:
            _pattern_names(pattern, f)
    for name in n.child_fields(cls):
        v = getattr(node, name)
        if type(v) is list:  # lists of statements, arguments, arms: no call for the list
            for x in v:
                if type(x) is not n.Lit:
                    _walk(x, f, weight)
        elif v is not None and type(v) is not n.Lit:
            _walk(v, f, weight)


def _count_operands(node: Any, counts: dict[str, int], weight: int = 1) -> None:
    """Operands of binary operators and bases of field access / indexing: each is a ``type()``
    test in the generated code. A use inside a loop counts twice (it runs repeatedly)."""
    cls = type(node)
    if cls is list or cls is tuple:
        for x in node:
            _count_operands(x, counts, weight)
        return
    if (
        cls is n.Lit
        or cls is n.Path
        or not isinstance(node, n.Node)
        or cls is n.Closure
        or isinstance(node, n.Item)
    ):
        return
    weight = _count_own(cls, node, counts, weight)
    for name in n.child_fields(cls):
        v = getattr(node, name)
        if type(v) is list:
            for x in v:
                if type(x) is not n.Lit and type(x) is not n.Path:
                    _count_operands(x, counts, weight)
        elif v is not None and type(v) is not n.Lit and type(v) is not n.Path:
            _count_operands(v, counts, weight)


def _count_own(cls: type, node: Any, counts: dict[str, int], weight: int) -> int:
    """Count the operands of ``node`` itself (not of its children); returns the weight for its children."""
    if cls is n.Binary:
        _count_side(node.left, counts, weight)
        _count_side(node.right, counts, weight)
    elif cls is n.Field or cls is n.Index:
        _count_side(node.target, counts, weight)
    elif cls is n.MethodCall and (node.name, len(node.args)) in FAST_METHODS:
        _count_side(node.receiver, counts, weight)  # a collection method tests its receiver's type
    elif cls is n.For or cls is n.While or cls is n.Loop:
        return 2
    return weight


def _count_side(side: Any, counts: dict[str, int], weight: int) -> None:
    if type(side) is n.Path and len(side.names) == 1:
        counts[side.names[0]] = counts.get(side.names[0], 0) + weight
