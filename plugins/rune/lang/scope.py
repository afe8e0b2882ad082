"""The scope of the Python function being generated."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ast

    from . import nodes as n

# Previous bounds of the narrowed locals (None: had none), restored after the branch.
Saved = dict[str, tuple[int, int] | None]


class LoopCtx:
    """A loop of the function being generated: where `break` and `continue` inside it go (``codegen_control``)."""

    __slots__ = ("assigned", "depth", "exits", "flag", "label", "parts", "pre", "result")

    def __init__(self, label: str | None, result: str | None, depth: int) -> None:
        self.label = label
        self.result = result  # Python name receiving `break value`
        self.flag: str | None = None
        self.exits: list[LoopCtx] = []  # outer loops that a labelled jump inside this one targets
        self.depth = depth  # scopes (``ctx.blocks``) visible where the loop starts
        self.pre: list[ast.stmt] = []  # statements run once before the loop (hoisted tests)
        self.parts: tuple[n.Node, ...] = ()  # the condition and body
        self.assigned: dict[str, list[n.Node | None]] | None = None  # see ``assignments``


class FnCtx:
    """Scope of the Python function being generated; closures resolve free names via ``parent``."""

    def __init__(self, parent: FnCtx | None, numeric: dict[str, type]) -> None:
        self.parent = parent
        self.blocks: list[dict[str, str]] = [{}]
        self.captures: dict[str, str] = {}  # outer Python name -> local Python name
        self.assigned: set[str] = set()
        self.loops: list[LoopCtx] = []
        self.numeric = numeric  # Rune names bound only to ints (or only floats) in this function
        self.types: dict[str, type] = {}  # Python name -> int/float when statically known
        self.reassigned: set[str] = set()  # Rune names assigned with `=` / `op=`
        self.flaggable: set[str] = set()  # parameters never reassigned
        self.flags: dict[str, str] = {}  # parameter -> local holding `type(p) is int`
        self.bounds: dict[str, tuple[int, int]] = {}  # int locals with known (min, max)
        self.operands: dict[str, int] = {}  # Rune name -> uses that test its type
        self.typecache: dict[str, str] = {}  # local never reassigned -> local holding its type()
        # In a method of a named struct: (self, the local holding its field values or None when
        # `self` is not an instance of that struct, field name -> index).
        self.self_fields: tuple[str, str, dict[str, int]] | None = None
        self.entry_tick = True  # False: ticks only in the branches that call or loop (``ticks``)
