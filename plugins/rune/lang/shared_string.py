"""Rune's ``String`` as a shared, mutable value with a capacity.

Upstream a ``String`` is reference counted: ``let b = a`` and passing ``a`` to a function hand
out the same string, so ``b.push('i')`` is seen through ``a``. Here a string that nothing else
holds stays an immutable Python ``str`` (literals, results of ``+``, templates, ``split``): the
generated code writes a mutated ``str`` back into its place, which is the same thing while the
place is its only holder. When a string held by a place is handed to a second holder (another
variable, an argument, a collection, a closure), or when its capacity starts to differ from its
length (``with_capacity``, ``reserve``, ``clear``), it becomes a ``SharedString``: one mutable
object that every holder sees. Lengths, offsets and capacities count UTF-8 bytes, as upstream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import RuneRuntimeError
from .limits import allocate
from .values import Bytes, Char

__all__ = [
    "SharedString",
    "grown_capacity",
    "mutate_str",
    "share",
    "shared_methods",
    "string_with_capacity",
    "text_of",
]

MIN_CAPACITY = 8
"""Rust's ``RawVec`` never grows a byte buffer to less than this (``MIN_NON_ZERO_CAP``)."""


def _utf8_len(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode())


def grown_capacity(capacity: int, length: int, additional: int) -> int:
    """The capacity after ``reserve(additional)`` (Rust's amortized growth: at least double)."""
    if capacity - length >= additional:
        return capacity
    return max(capacity * 2, length + additional, MIN_CAPACITY)


class SharedString:
    """A ``String`` held by more than one place, or whose capacity exceeds its length."""

    __slots__ = ("cap", "moved", "size", "text")

    def __init__(self, text: str = "", cap: int | None = None) -> None:
        self.text = text
        self.size = _utf8_len(text)  # UTF-8 bytes
        self.cap = self.size if cap is None else max(cap, self.size)
        self.moved = False

    def __str__(self) -> str:
        self.readable()
        return self.text

    def __repr__(self) -> str:
        return f"SharedString({self.text!r}, cap={self.cap})"

    def __format__(self, spec: str) -> str:
        self.readable()
        return format(self.text, spec)

    def __eq__(self, other: object) -> bool:
        if type(other) is SharedString:
            return self.text == other.text
        return type(other) is str and self.text == other

    def __hash__(self) -> int:
        return hash(self.text)

    def to_python(self, convert: Callable[[Any], Any]) -> str:
        """The text, for a result leaving the script (``bridge.to_python``)."""
        self.readable()
        return self.text

    def readable(self) -> None:
        if self.moved:
            raise RuneRuntimeError("cannot read a `String` that was moved (`into_bytes`, `drop`)")

    # --- the mutating methods of upstream's String ----------------------------------------

    def push_str(self, other: Any) -> None:
        self.readable()
        added = text_of(other, "push_str")
        size = _utf8_len(added)
        allocate(self.size + size, "string", 1 if self.text.isascii() and added.isascii() else 4)
        self.cap = grown_capacity(self.cap, self.size, size)
        text = self.text
        self.text = ""  # the local below is then the only reference: CPython appends in place
        text += added
        self.text = text
        self.size += size

    def push(self, c: Any) -> None:
        if type(c) is not Char:
            raise RuneRuntimeError(f"`String::push` takes a `char`, not {_type_of(c)}")
        self.push_str(str(c))

    def add_assign(self, other: Any) -> None:
        self.push_str(other)

    def clear(self) -> None:
        self.readable()
        self.text, self.size = "", 0

    def reserve(self, additional: int) -> None:
        self.readable()
        self.cap = grown_capacity(self.cap, self.size, _usize(additional, "reserve"))

    def reserve_exact(self, additional: int) -> None:
        self.readable()
        if self.cap - self.size < _usize(additional, "reserve_exact"):
            self.cap = self.size + additional

    def shrink_to_fit(self) -> None:
        self.readable()
        self.cap = self.size

    def capacity(self) -> int:
        self.readable()
        return self.cap

    def insert_str(self, at: Any, other: Any) -> None:
        self.readable()
        data = self.text.encode()
        if type(at) is not int or not _boundary(data, at):
            raise RuneRuntimeError(f"`String::insert_str`: {at!r} is not a char boundary of the string")
        added = text_of(other, "insert_str")
        self.push_str(added)  # the capacity and memory accounting of the longer string
        self.text = (data[:at] + added.encode() + data[at:]).decode()

    def truncate(self, at: Any) -> None:
        self.readable()
        data = self.text.encode()
        if type(at) is not int or at < 0:
            raise RuneRuntimeError(f"`String::truncate` takes a non-negative integer, not {at!r}")
        if at < len(data):
            if not _boundary(data, at):
                raise RuneRuntimeError(f"`String::truncate`: {at} is not a char boundary of the string")
            self.text, self.size = data[:at].decode(), at

    def pop(self) -> Any:
        from .values import NONE, some

        self.readable()
        if not self.text:
            return NONE
        c = self.text[-1]
        self.text = self.text[:-1]
        self.size -= _utf8_len(c)
        return some(Char(c))

    def into_bytes(self) -> Bytes:
        """Moves the string: every holder then sees a value that cannot be read."""
        self.readable()
        out = Bytes(self.text.encode())
        self.moved = True
        self.text, self.size, self.cap = "", 0, 0
        return out

    def clone(self) -> str:
        """A new string, held by nothing else yet (capacity == length, as Rust's clone)."""
        self.readable()
        return self.text


def _boundary(data: bytes, i: int) -> bool:
    return i == len(data) or (0 <= i < len(data) and (data[i] & 0xC0) != 0x80)


def _type_of(v: Any) -> str:
    from .runtime import type_name

    return f"`{type_name(v)}`"


def _usize(n: Any, what: str) -> int:
    if type(n) is not int or n < 0:
        raise RuneRuntimeError(f"`String::{what}` takes a non-negative integer, not {_type_of(n)}")
    return n


def text_of(v: Any, what: str) -> str:
    """The text of a string argument (``str`` or ``SharedString``)."""
    if type(v) is str:
        return v
    if type(v) is SharedString:
        v.readable()
        return v.text
    raise RuneRuntimeError(f"`String::{what}` takes a `String`, not {_type_of(v)}")


def share(v: Any) -> Any:
    """``v`` as a value two places can hold: a ``str`` becomes a ``SharedString``."""
    return SharedString(v) if type(v) is str else v


def string_with_capacity(n: Any) -> SharedString:
    """``String::with_capacity(n)``."""
    allocate(_usize(n, "with_capacity"), "string")
    return SharedString("", n)


_STR_MUTATORS: dict[str, Callable[..., Any]] = {
    "push_str": SharedString.push_str,
    "push": SharedString.push,
    "clear": SharedString.clear,
    "reserve": SharedString.reserve,
    "reserve_exact": SharedString.reserve_exact,
    "shrink_to_fit": SharedString.shrink_to_fit,
    "into_bytes": SharedString.into_bytes,
    "insert_str": SharedString.insert_str,
    "truncate": SharedString.truncate,
    "pop": SharedString.pop,
}
SHARING_MUTATORS = frozenset({"clear", "reserve", "reserve_exact", "into_bytes", "shrink_to_fit"})
"""Mutators whose effect on an unshared ``str`` is more than new text: a capacity or a move."""


def mutate_str(s: str, name: str, args: list[Any]) -> tuple[Any, Any]:
    """``s.name(args)`` on a ``str`` held by one place: the value to store back and the result."""
    if name == "shrink_to_fit":
        return s, None  # a str's capacity is its length already
    shared = SharedString(s)
    result = _STR_MUTATORS[name](shared, *args)
    return shared, result


def _reading(f: Callable[..., Any]) -> Callable[..., Any]:
    def method(s: SharedString, *args: Any) -> Any:
        s.readable()
        return f(s.text, *[a.text if type(a) is SharedString else a for a in args])

    return method


def shared_methods(string_methods: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """The method table of ``SharedString``: the ``str`` methods read its current text, the
    mutators change it in place."""
    table = {name: _reading(f) for name, f in string_methods.items()}
    table.update(_STR_MUTATORS)
    table["clone"] = SharedString.clone
    table["to_string"] = SharedString.clone
    table["to_owned"] = SharedString.clone
    table["capacity"] = SharedString.capacity
    table["len"] = _length
    table["is_empty"] = lambda s: _length(s) == 0
    return table


def _length(s: SharedString) -> int:
    s.readable()
    return s.size
