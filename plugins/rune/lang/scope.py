"""Compile-time name resolution: local variable slots per function and closure captures."""

from __future__ import annotations


class FnScope:
    """Slots of one function frame; closures resolve free names through ``parent``."""

    def __init__(self, name: str, parent: FnScope | None = None) -> None:
        self.name = name
        self.parent = parent
        self.blocks: list[dict[str, int]] = [{}]
        self.nslots = 0
        # (slot in the parent frame, slot in this frame) copied when the closure is created
        self.captures: list[tuple[int, int]] = []
        self.loop_labels: list[str | None] = []

    def push(self) -> None:
        self.blocks.append({})

    def pop(self) -> None:
        self.blocks.pop()

    def declare(self, name: str) -> int:
        slot = self.nslots
        self.nslots += 1
        self.blocks[-1][name] = slot
        return slot

    def lookup(self, name: str) -> int | None:
        for block in reversed(self.blocks):
            if name in block:
                return block[name]
        if self.parent is not None:
            outer = self.parent.lookup(name)
            if outer is not None:
                # Rune closures copy captured values at creation time.
                inner = self.nslots
                self.nslots += 1
                self.blocks[0][name] = inner
                self.captures.append((outer, inner))
                return inner
        return None
