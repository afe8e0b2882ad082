"""Runtime value types that have no direct Python equivalent: chars, Option, Result,
structs, enum variants, functions and ranges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Char(str):
    """A Rune ``char``; a one-character str subclass so it stays distinct from String."""

    __slots__ = ()


class Bytes(bytearray):
    """A Rune byte string (``b"..."``)."""


class Option:
    """``Some(value)`` or ``None``; ``NONE`` is the single None instance."""

    __slots__ = ("is_some", "value")

    def __init__(self, is_some: bool, value: Any = None) -> None:
        self.is_some = is_some
        self.value = value

    def __repr__(self) -> str:
        return f"Some({self.value!r})" if self.is_some else "None"


NONE = Option(False)


def some(value: Any) -> Option:
    return Option(True, value)


class Result:
    """``Ok(value)`` or ``Err(value)``."""

    __slots__ = ("is_ok", "value")

    def __init__(self, is_ok: bool, value: Any) -> None:
        self.is_ok = is_ok
        self.value = value

    def __repr__(self) -> str:
        return f"{'Ok' if self.is_ok else 'Err'}({self.value!r})"


class TypeInfo:
    """A user-defined struct, or one variant of an enum (``enum_name`` set)."""

    def __init__(self, name: str, kind: str, fields: list[str], enum_name: str | None = None) -> None:
        self.name = name
        self.kind = kind
        self.fields = fields
        self.enum_name = enum_name
        self.methods: dict[str, Any] = {}
        self.variants: dict[str, TypeInfo] = {}

    @property
    def full_name(self) -> str:
        return f"{self.enum_name}::{self.name}" if self.enum_name else self.name

    def __call__(self, *args: Any) -> Instance:
        from .errors import RuneRuntimeError

        if self.kind != "tuple":
            raise RuneRuntimeError(f"`{self.full_name}` is not a tuple struct and cannot be called")
        if len(args) != len(self.fields):
            raise RuneRuntimeError(
                f"`{self.full_name}` expects {len(self.fields)} arguments, got {len(args)}"
            )
        return Instance(self, list(args))


class Instance:
    """An instance of a struct or enum variant; ``values`` is ordered like ``type.fields``."""

    __slots__ = ("type", "values")

    def __init__(self, type_: TypeInfo, values: list[Any]) -> None:
        self.type = type_
        self.values = values

    def get(self, name: str) -> Any:
        try:
            return self.values[self.type.fields.index(name)]
        except ValueError:
            from .errors import RuneRuntimeError

            raise RuneRuntimeError(f"`{self.type.full_name}` has no field `{name}`") from None

    def set(self, name: str, value: Any) -> None:
        try:
            self.values[self.type.fields.index(name)] = value
        except ValueError:
            from .errors import RuneRuntimeError

            raise RuneRuntimeError(f"`{self.type.full_name}` has no field `{name}`") from None


class Function:
    """A Rune function or closure value callable from both Rune and Python."""

    __slots__ = ("call", "is_async", "is_generator", "name")

    def __init__(self, name: str, call: Callable[..., Any], is_async: bool = False) -> None:
        self.name = name
        self.call = call
        self.is_async = is_async

    def __call__(self, *args: Any) -> Any:
        return self.call(*args)

    def __repr__(self) -> str:
        return f"<fn {self.name}>"


class Future:
    """The value of calling an ``async fn`` or evaluating an ``async`` block; ``.await`` runs it."""

    __slots__ = ("done", "result", "thunk")

    def __init__(self, thunk: Callable[[], Any]) -> None:
        self.thunk = thunk
        self.done = False
        self.result = None

    def resolve(self) -> Any:
        if not self.done:
            self.result = self.thunk()
            self.done = True
        return self.result


class RangeValue:
    """``a..b`` / ``a..=b`` / open ranges; iterable when both ends are integers."""

    __slots__ = ("end", "inclusive", "start")

    def __init__(self, start: Any, end: Any, inclusive: bool) -> None:
        self.start = start
        self.end = end
        self.inclusive = inclusive

    def contains(self, value: Any) -> bool:
        if self.start is not None and value < self.start:
            return False
        if self.end is None:
            return True
        return value <= self.end if self.inclusive else value < self.end

    def py_range(self) -> range:
        end = self.end + 1 if self.inclusive else self.end
        return range(self.start, end)


class Module:
    """A namespace of items (from ``mod`` or a host-provided module)."""

    def __init__(self, name: str, items: dict[str, Any] | None = None) -> None:
        self.name = name
        self.items: dict[str, Any] = items if items is not None else {}
