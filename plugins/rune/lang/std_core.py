"""Small std items that need no module of their own: ``std::panic(message)``, the
``std::ops::ControlFlow`` enum (``Continue(v)`` / ``Break(v)``) and ``char::from_i64``."""

from __future__ import annotations

from typing import NoReturn

from .errors import RunePanic, RuneRuntimeError
from .runtime import type_name
from .shared_string import SharedString
from .values import NONE, Char, Option, TypeInfo, some


def std_panic(message: object) -> NoReturn:
    """Upstream's ``std::panic(message: &str)``: a panic with exactly that message."""
    if type(message) is not str and type(message) is not SharedString:
        raise RuneRuntimeError(f"`std::panic` takes a `String` message, not `{type_name(message)}`")
    raise RunePanic(str(message))


CONTROL_FLOW = TypeInfo("ControlFlow", "enum", [])
for _name in ("Continue", "Break"):
    CONTROL_FLOW.variants[_name] = TypeInfo(_name, "tuple", ["0"], "ControlFlow")
    CONTROL_FLOW.variants[_name].ordered = False


def char_from_i64(value: int) -> Option:
    """Upstream's ``char::from_i64``: ``None`` for a surrogate or past ``char::MAX``; a negative
    value or one past ``u32::MAX`` is an error, as there."""
    if type(value) is not int:
        raise RuneRuntimeError(f"`char::from_i64` takes an `i64`, not `{type_name(value)}`")
    if value < 0:
        raise RuneRuntimeError(f"integer underflow in `char::from_i64`: {value} is below 0")
    if value > 0xFFFF_FFFF:
        raise RuneRuntimeError(f"integer overflow in `char::from_i64`: {value} is above `u32::MAX`")
    if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
        return NONE
    return some(Char(chr(value)))
