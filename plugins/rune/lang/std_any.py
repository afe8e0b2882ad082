"""``std::any::Type``: the type of a value as upstream identifies it, by the hash of its path.

Upstream's ``Hash::type_hash`` is XxHash64 (seed 0) over the ``TYPE`` marker and each path
component as Rust's ``Hash`` writes it: a one-byte tag (0 for the crate, ``std``; 1 for a name)
and the UTF-8 text followed by ``0xff``. ``Type::of_val(42)`` is therefore the hash of
``::std::i64`` and prints as upstream's ``Type(0x1cad9186c9641c4f)``."""

from __future__ import annotations

import struct
from typing import Any

import xxhash

_TYPE = 0x2FAC10B63A6CC57C
_CRATE, _NAME = b"\x00", b"\x01"


def type_hash(path: str) -> int:
    """Upstream's ``Hash::type_hash`` of a path: ``::std::i64`` (a crate first) or ``Foo``."""
    hasher = xxhash.xxh64(seed=0)
    hasher.update(struct.pack("<Q", _TYPE))
    crate = path.startswith("::")
    for i, part in enumerate(path.removeprefix("::").split("::")):
        hasher.update(_CRATE if crate and i == 0 else _NAME)
        hasher.update(part.encode() + b"\xff")
    return hasher.intdigest()


class Type:
    """A value of ``std::any::Type``: equal to another exactly when the types are the same."""

    __slots__ = ("hash",)

    def __init__(self, hash: int) -> None:
        self.hash = hash

    def rune_display(self) -> str:
        return f"Type(0x{self.hash:x})"

    def equals(self, other: Any) -> bool:
        return type(other) is Type and other.hash == self.hash


def type_of_val(value: Any) -> Type:
    """``Type::of_val(value)``."""
    from .std_modules import type_name_of_val  # the module tree imports this one

    return Type(type_hash(type_name_of_val(value)))


TYPE_NS: dict[str, Any] = {"of_val": type_of_val}
