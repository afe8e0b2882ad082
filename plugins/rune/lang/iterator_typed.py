"""The consumers upstream registers per target type: ``sum::<T>`` / ``product::<T>`` for ``i64``,
``u64`` and ``f64``, and ``collect::<String>``.

Upstream reads every item as the named type (``<T>::from_value``), so ``[1, 2].iter().sum::<f64>()``
is an error there, not ``3``, and an empty iterator gives that type's zero or one (``0.0`` for
``f64``, ``0u64`` for ``u64``). ``collect::<String>`` joins `String` and `char` items only, and
``collect::<Object>`` takes ``(String, value)`` tuples only."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .errors import RuneRuntimeError
from .limits import allocate, check_length
from .runtime import type_name
from .shared_string import SharedString
from .std_u64 import U64
from .values import Char

_NUMBERS: dict[str, tuple[type, Any, Any]] = {
    "i64": (int, 0, 1),
    "u64": (U64, U64(0), U64(1)),
    "f64": (float, 0.0, 1.0),
}


def _as(items: Iterable[Any], py: type, what: str, target: str) -> Iterator[Any]:
    for v in items:
        if type(v) is not py:
            raise RuneRuntimeError(f"`{what}` expected `{target}` items, found `{type_name(v)}`")
        yield v


def _typed(
    fold: Callable[[Iterator[Any]], Any], name: str, target: str, empty_index: int
) -> Callable[[Iterable[Any]], Any]:
    py, zero, one = _NUMBERS[target]
    empty = (zero, one)[empty_index]
    what = f"{name}::<{target}>"

    def run(items: Iterable[Any]) -> Any:
        result = fold(_as(items, py, what, target))
        return result if type(result) is py else empty  # the fold's own empty value is an i64

    return run


def _collect_string(items: Iterable[Any]) -> str:
    parts: list[str] = []
    size = 0  # the per-value cap and the budget are checked once the parts are known
    for v in items:
        t = type(v)
        if t is not str and t is not Char and t is not SharedString:
            raise RuneRuntimeError(f"`collect::<String>` expected `String` or `char` items, found `{type_name(v)}`")
        parts.append(str(v))
        size += len(parts[-1])
    text = "".join(parts)
    allocate(size, "collected string", 1 if text.isascii() else 4)
    return text


def _collect_object(items: Iterable[Any]) -> dict[str, Any]:
    """Upstream reads each item as a ``(String, value)`` tuple; a later key replaces an earlier one."""
    found: dict[str, Any] = {}
    for v in items:
        if type(v) is not tuple or len(v) != 2 or (type(v[0]) is not str and type(v[0]) is not SharedString):
            raise RuneRuntimeError(f"`collect::<Object>` expected `(String, value)` tuples, found {_shape(v)}")
        found[str(v[0])] = v[1]
    check_length(len(found), "collected object")
    return found


def _shape(v: Any) -> str:
    if type(v) is tuple and len(v) == 2:
        return f"a tuple with a `{type_name(v[0])}` key"
    return f"`{type_name(v)}`"


def typed_consumers(
    sum_of: Callable[[Iterator[Any]], Any], product_of: Callable[[Iterator[Any]], Any]
) -> dict[str, Callable[..., Any]]:
    """The consumers keyed as method calls name them (``sum::f64``), over the untyped folds."""
    table: dict[str, Callable[..., Any]] = {"collect::String": _collect_string, "collect::Object": _collect_object}
    for target in _NUMBERS:
        table[f"sum::{target}"] = _typed(sum_of, "sum", target, 0)
        table[f"product::{target}"] = _typed(product_of, "product", target, 1)
    return table
