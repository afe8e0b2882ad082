"""Code generation for shared strings and moves (see ``shared_string`` and ``moves``).

A ``str`` in a variable has one holder, so a mutation may store a new ``str`` back into the
variable. Where the variable's value gains a second holder (another variable, an argument, an
element of a collection literal, a closure's capture) the code first turns a ``str`` into a
``SharedString`` and stores that back, so both holders see one mutable string afterwards."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from . import moves
from . import nodes as n
from .std_modules import PRELUDE
from .values import Function, Module, TypeInfo

if TYPE_CHECKING:
    from .codegen_base import CodeGenBase

# Methods that only read their arguments' text: their arguments gain no holder.
READING_METHODS = frozenset({
    "contains", "starts_with", "ends_with", "split", "split_once", "find", "replace", "push_str",
    "eq", "ne", "cmp", "partial_eq", "partial_cmp", "lt", "le", "gt", "ge", "get", "contains_key",
    "join", "char_at", "strip_prefix", "strip_suffix", "trim_start_matches", "trim_end_matches",
})

_NOT_STRINGS = (int, float, list, dict)

KEYED_METHODS = frozenset({"insert"})
"""Methods whose first argument is a map key or set value: hashed as the text it has then
(a key is not shared with the variable it came from), or an index."""

# Built-in functions that keep or inspect the value itself, not its text.
_KEEP_VALUES = frozenset(
    [id(PRELUDE[name]) for name in ("Some", "Ok", "Err", "drop", "is_readable", "is_writable", "clone")]
    + [id(moves.snapshot)]
)


def native_reads_text(target: Any) -> bool:
    """Whether ``target`` is a built-in or host function that reads a string argument's text
    (upstream's ``&str`` parameters): it gets a ``str``, and the argument gains no holder."""
    return (
        callable(target)
        and not isinstance(target, (Function, TypeInfo, Module))
        and id(target) not in _KEEP_VALUES
    )


def text_operand(gen: CodeGenBase, v: ast.expr) -> ast.expr:
    """``v``, or the text of ``v`` when it is a ``SharedString``."""
    if type(v) is ast.Constant:
        return v
    v = gen.simple(v)
    return gen.ifexp(gen.type_is(v, "_SharedString"), gen.call("str", v), v)


def shared_local(gen: CodeGenBase, e: n.Node) -> str | None:
    """The Python name of local variable ``e`` when it may hold a string, else None."""
    if not (isinstance(e, n.Path) and len(e.names) == 1):
        return None
    py = gen.lookup(e.names[0])
    if py is None or gen.ctx.types.get(py) in _NOT_STRINGS:
        return None
    return py


def share_local(gen: CodeGenBase, py: str) -> None:
    """``if type(py) is str: py = _share(py)``: the variable keeps the string it hands out."""
    promote: list[ast.stmt] = [gen.assignment(py, gen.call("_share", gen.N(py)))]
    cached = gen.ctx.typecache.get(py)
    if cached is not None:  # `x_t = type(x)`, read by code before and after this point
        promote.append(gen.assignment(cached, gen.N("_SharedString")))
    gen.if_(gen.type_is(gen.N(py), "str"), promote)
    gen.ctx.assigned.add(py)


def share_operands(
    gen: CodeGenBase, nodes: list[n.Node], vals: list[ast.expr], first: int = 0
) -> list[ast.expr]:
    """``vals`` (the compiled ``nodes``) after every string in a variable among them, from
    index ``first`` on, is shared."""
    out = list(vals)
    for i, node in enumerate(nodes[first:], first):
        py = shared_local(gen, node)
        if py is not None:
            share_local(gen, py)
            out[i] = gen.N(py)  # read again: a spilled temporary would hold the old str
    return out
