"""The scope of the Python function being generated."""

from __future__ import annotations

from typing import Any


class FnCtx:
    """Scope of the Python function being generated; closures resolve free names via ``parent``."""

    def __init__(self, parent: FnCtx | None, numeric: dict[str, type]) -> None:
        self.parent = parent
        self.blocks: list[dict[str, str]] = [{}]
        self.captures: dict[str, str] = {}  # outer Python name -> local Python name
        self.assigned: set[str] = set()
        self.loops: list[Any] = []
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
