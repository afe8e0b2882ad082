"""Where a function takes its budget tick.

A Rune function takes one tick of the run's budget per call, at entry: that tick is what ends
runaway recursion. Code that can neither call nor loop does a bounded amount of work, so it needs
no tick of its own; the tick of its caller pays for it. Functions called directly from Rune code
use this in two cases:

* a body that cannot call or loop (``fn sq(x) { x * x }``) takes no tick;
* a body ending in ``if c { a } else { b }`` (``else if`` chains included, statements before it
  and every condition unable to call or loop) takes the tick only in the branches that can call
  or loop: the base case of ``fib``, half of its calls, returns without one.

Each run of a body then does at most its own size of work, plus a callee's unticked path at each
of its call sites, before the next tick; loops tick at every iteration. Host code (iterators,
``sort_by``, calls through a function value) may call a function any number of times, so the
``Function`` value of such a function runs an entry that ticks first."""

from __future__ import annotations

from typing import Any

from . import nodes as n

# Nodes that can call Rune code or run without bound.
_ACTIVE = (n.Call, n.MethodCall, n.Closure, n.While, n.Loop, n.For, n.Await, n.Yield, n.Select)


def plain(node: Any) -> bool:
    """Whether ``node`` can neither call a function nor loop (nested items are not run)."""
    cls = type(node)
    if cls is list or cls is tuple:
        return all(plain(x) for x in node)
    if not issubclass(cls, n.Node) or issubclass(cls, n.Item):  # keeps ``node`` untyped (see numtypes)
        return True
    if isinstance(node, _ACTIVE) or (cls is n.Macro and node.name != "panic"):
        return False
    if cls is n.Block and node.is_async:
        return False
    return all(plain(getattr(node, name)) for name in n.child_fields(cls))


def ticks_at_entry(body: n.Node) -> bool:
    """Whether a function with this body must tick at entry, or can tick in its branches (see
    ``CodeGen.branch_return``) or not at all."""
    if plain(body):
        return False
    if type(body) is not n.Block or body.is_async or body.tail is None or not plain(body.stmts):
        return True
    e: Any = body.tail
    has_plain_branch = False
    while type(e) is n.If:
        if not plain(e.cond):
            return True
        has_plain_branch = has_plain_branch or plain(e.then) or e.otherwise is None
        e = e.otherwise
    return not (has_plain_branch or plain(e))
