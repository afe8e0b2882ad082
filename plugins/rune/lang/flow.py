"""Facts about Rune syntax trees that code generation uses to prove checks unnecessary: which
locals a loop may assign, which names it binds, and interval arithmetic."""

from __future__ import annotations

from . import nodes as n
from .std_types import STRING_MUTATORS


def combine(op: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """Bounds of ``x op y`` for ``x`` within ``a`` and ``y`` within ``b`` (``op`` in ``+ - *``)."""
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


def divided(op: str, dividend: tuple[int, int], divisor: int) -> tuple[int, int]:
    """Bounds of ``x % divisor`` / ``x / divisor`` (Rune's truncating division) for ``x``
    within ``dividend`` and a ``divisor`` > 0."""
    lo, hi = dividend
    if op == "%":  # the remainder has the sign of the dividend and is smaller than the divisor
        return max(min(lo, 0), 1 - divisor), min(max(hi, 0), divisor - 1)
    return _truncated(lo, divisor), _truncated(hi, divisor)  # truncation is monotone


def _truncated(x: int, divisor: int) -> int:
    return x // divisor if x >= 0 else -(-x // divisor)


def _children(node: n.Node) -> list[n.Node]:
    """Child nodes of ``node`` in the same function (closures, async blocks and items are
    separate functions: they copy what they capture and cannot assign its locals)."""
    out: list[n.Node] = []
    stack: list[object] = [getattr(node, f) for f in n.child_fields(type(node))]
    while stack:
        v = stack.pop()
        if type(v) is list or type(v) is tuple:
            stack.extend(v)
        elif isinstance(v, n.Node) and not (
            isinstance(v, (n.Closure, n.Item)) or (isinstance(v, n.Block) and v.is_async)
        ):
            out.append(v)
    return out


def nodes(parts: tuple[n.Node, ...]) -> list[n.Node]:
    """``parts`` and every node below them in the same function (see ``_children``)."""
    out: list[n.Node] = []
    stack = list(parts)
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(_children(node))
    return out


def assignments(parts: tuple[n.Node, ...]) -> dict[str, list[n.Node | None]]:
    """Rune names that ``parts`` may assign, each with its ``Assign`` nodes (None for an
    assignment of another form: a tuple target, a string mutated in place)."""
    found: dict[str, list[n.Node | None]] = {}
    for node in nodes(parts):
        if isinstance(node, n.Assign):
            targets = node.target.items if isinstance(node.target, n.TupleLit) else [node.target]
            for t in targets:
                if isinstance(t, n.Path) and len(t.names) == 1:
                    found.setdefault(t.names[0], []).append(node if t is node.target else None)
        elif isinstance(node, n.MethodCall) and node.name in STRING_MUTATORS:
            r = node.receiver
            if isinstance(r, n.Path) and len(r.names) == 1:
                found.setdefault(r.names[0], []).append(None)
    return found


def binds(parts: tuple[n.Node, ...], name: str) -> bool:
    """Whether ``parts`` bind ``name`` anywhere (``let``, patterns, closure parameters)."""
    return any(isinstance(node, n.PBind) and node.name == name for node in nodes(parts))
