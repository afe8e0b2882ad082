"""Runtime value types that have no direct Python equivalent: chars, Option, Result,
structs, enum variants, functions and ranges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import RuneRuntimeError


class Char(str):
    """A Rune ``char``; a one-character str subclass so it stays distinct from String."""

    __slots__ = ()


class Bytes(bytearray):
    """A Rune byte string (``b"..."``)."""

    cap: int  # the capacity reserved by `with_capacity` / `reserve`, once either is called


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

    unit_value: Instance  # the only value of a unit struct or variant, set when it is declared
    ordered = True  # std's `Ordering`, `GeneratorState` and `ControlFlow` have no PARTIAL_CMP upstream

    def __init__(self, name: str, kind: str, fields: list[str], enum_name: str | None = None) -> None:
        self.name = name
        self.kind = kind
        self.fields = fields
        self.slots = {f: i for i, f in enumerate(fields)}  # field name -> index in ``values``
        self.enum_name = enum_name
        self.methods: dict[str, Any] = {}
        self.variants: dict[str, TypeInfo] = {}

    @property
    def full_name(self) -> str:
        return f"{self.enum_name}::{self.name}" if self.enum_name else self.name

    def __call__(self, *args: Any) -> Instance:
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
            return self.values[self.type.slots[name]]
        except KeyError:
            raise RuneRuntimeError(f"`{self.type.full_name}` has no field `{name}`") from None

    def set(self, name: str, value: Any) -> None:
        try:
            self.values[self.type.slots[name]] = value
        except KeyError:
            raise RuneRuntimeError(f"`{self.type.full_name}` has no field `{name}`") from None


class Function:
    """A Rune function or closure value.

    ``fn(run, *args)`` is the compiled code (it takes the current ``Run`` first); ``call(*args)``
    is the same function for Python callers. Host code may build one from ``call`` alone.
    ``direct`` is what a call written in Rune code runs: ``fn`` without the budget tick of its
    entry, for functions that tick only where they call or loop (see ``ticks``)."""

    __slots__ = ("call", "direct", "fn", "is_async", "name", "returns_bool")

    def __init__(
        self,
        name: str,
        call: Callable[..., Any] | None = None,
        is_async: bool = False,
        fn: Callable[..., Any] | None = None,
        returns_bool: bool = False,
    ) -> None:
        self.name = name
        self.is_async = is_async
        self.returns_bool = returns_bool  # statically known: lets `filter` skip its checks
        if fn is None:
            assert call is not None
            fn = _stateless(call)
        self.fn = self.direct = fn
        self.call = call if call is not None else _with_run(fn)

    def __call__(self, *args: Any) -> Any:
        return self.call(*args)

    def __repr__(self) -> str:
        return f"<fn {self.name}>"


def _stateless(call: Callable[..., Any]) -> Callable[..., Any]:
    return lambda run, *args: call(*args)


def _with_run(fn: Callable[..., Any]) -> Callable[..., Any]:
    from .limits import STATE

    return lambda *args: fn(STATE.run, *args)


class Future:
    """The value of calling an ``async fn`` or evaluating an ``async`` block: ``fn(run, *args)``
    runs when the future is first awaited (or taken by ``select``)."""

    __slots__ = ("args", "done", "fn", "result", "run")

    def __init__(self, fn: Callable[..., Any], run: Any = None, args: tuple = ()) -> None:
        self.fn = fn
        self.run = run
        self.args = args
        self.done = False
        self.result = None

    @classmethod
    def of(cls, thunk: Callable[[], Any]) -> Future:
        """A future of a Python thunk (no run state)."""
        return cls(lambda run: thunk())

    def resolve(self) -> Any:
        if not self.done:
            from .limits import STATE

            self.result = self.fn(self.run or STATE.run, *self.args)
            self.done = True
            self.fn = self.args = None  # type: ignore[assignment]  # released: never called again
        return self.result


class Generator:
    """A suspended Rune generator (a function containing ``yield``): a Python generator."""

    __slots__ = ("finished", "gen")

    def __init__(self, gen: Any) -> None:
        self.gen = gen
        self.finished = False

    def __rune_iter__(self) -> Any:
        return self.gen

    def resume(self, value: Any) -> tuple[bool, Any]:
        """Send ``value``; returns (True, yielded) or (False, returned)."""
        if self.finished:
            raise RuneRuntimeError("cannot resume a generator that has completed")
        try:
            return True, self.gen.send(value)
        except StopIteration as stop:
            self.finished = True
            return False, stop.value


class Stream(Generator):
    """An ``async fn`` containing ``yield``: ``next()``/``resume()`` return futures."""

    __slots__ = ()


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
