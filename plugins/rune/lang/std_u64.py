"""``std::u64``: Rune's unsigned 64-bit integer, with upstream's semantics.

A ``u64`` is a ``U64``, an ``int`` subclass holding ``0..=u64::MAX``. Its type is not ``int``, so
every fast path of the generated code (guarded by ``type(x) is int``) and every i64 helper
leaves it alone; the helpers' error paths hand it to the functions here. The i64 code
therefore pays nothing for it: a ``U64`` costs a type test only where an i64 test has already
failed.

Upstream's rules (``runtime/value/inline.rs``, ``runtime/vm.rs``), followed here:

- arithmetic, bitwise and shift operators take the type of the *left* operand and convert
  the right one to it (``5u64 + 1`` is a ``u64``, ``1 + 5u64`` an ``i64``); a right operand
  that does not fit (``5u64 + -1``, ``1 + u64::MAX``) is an error, as are overflow and
  underflow (``0u64 - 1``), division by zero and a float or other non-integer operand;
- ``==`` and the orderings (``<`` ...) convert the right operand the same way, so
  ``5u64 == 5`` is true and ``5u64 == -1`` an error; ``std::ops::eq`` / ``cmp`` (total
  equality and order) refuse to compare a ``u64`` with an ``i64``;
- a ``u64`` hashes like the ``i64`` with the same bits, and a map meeting both as keys
  compares them with total equality, which fails;
- ``as`` converts between ``i64``, ``u64`` and ``f64`` like Rust's ``as`` (wrapping between
  the integers, saturating from floats);
- it leaves a script as a JSON integer (serde's ``serialize_u64``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

from .errors import RuneRuntimeError
from .values import NONE, Char, Option, Result, some

__all__ = [
    "BYTE_VALUES",
    "U64",
    "U64_MAX",
    "U64_METHODS",
    "U64_NS",
    "byte_values",
    "cast_integer",
    "integer_range",
    "mixed_arith",
    "mixed_bitwise",
    "mixed_cmp",
    "mixed_eq",
    "negative_literal_error",
    "parse_u64",
    "range_items",
    "refuse_total",
    "u64_hash_bits",
    "u64_hash_key",
    "u64_not",
    "unsigned_hint",
    "unsigned_literal",
]

U64_MAX = 2**64 - 1
_I64_MAX = 2**63 - 1
_WIDTH = 2**64
_UNSIGNED_SUFFIXES = {"u8": 2**8 - 1, "u16": 2**16 - 1, "u32": 2**32 - 1, "u64": U64_MAX}
_U32_MAX = 2**32 - 1


class U64(int):
    """A Rune ``u64`` value (``0 <= value <= u64::MAX``); see the module docstring."""

    __slots__ = ()

    def to_python(self, convert: Callable[[Any], Any]) -> int:
        """The plain ``int`` a ``u64`` becomes outside a script (a JSON integer)."""
        return int(self)


U64_MIN_VALUE = U64(0)
U64_MAX_VALUE = U64(U64_MAX)


def _name(v: Any) -> str:
    from .runtime import type_name  # the runtime imports this module

    return type_name(v)


def _convert_error(value: int, target: str) -> RuneRuntimeError:
    how = "`as u64` wraps a negative i64" if target == "u64" else f"`as {target}` wraps it"
    return RuneRuntimeError(
        f"failed to convert value `{value}` to integer `{target}`: it is out of range ({how})"
    )


def _bad_operands(op: str, a: Any, b: Any) -> RuneRuntimeError:
    return RuneRuntimeError(f"unsupported operation `{_name(a)} {op} {_name(b)}`")


def _as_u64(op: str, a: Any, b: Any) -> int:
    """The right operand ``b`` of ``a op b`` (``a`` a ``u64``) as a u64; upstream's ``as_integer``."""
    tb = type(b)
    if tb is U64:
        return int(b)
    if tb is int:
        if b < 0:
            raise _convert_error(b, "u64")
        return b
    raise _bad_operands(op, a, b)


def _as_i64(b: int) -> int:
    if b > _I64_MAX:
        raise _convert_error(b, "i64")
    return int(b)


def _range_error(op: str, under: bool) -> RuneRuntimeError:
    kind = "underflow" if under else "overflow"
    return RuneRuntimeError(
        f"integer {kind} in `{op}` on `u64` (0 to {U64_MAX}); use checked_, wrapping_ or saturating_ methods"
    )


_DIVIDE_BY_ZERO = "division by zero"


def _arith(op: str, x: int, y: int) -> U64:
    if op == "+":
        r = x + y
    elif op == "-":
        r = x - y
        if r < 0:
            raise _range_error("-", True)
    elif op == "*":
        r = x * y
    elif y == 0:
        raise RuneRuntimeError(_DIVIDE_BY_ZERO)
    else:
        r = x // y if op == "/" else x % y  # both non-negative: floor is truncation
    if r > U64_MAX:
        raise _range_error(op, False)
    return U64(r)


def mixed_arith(op: str, a: Any, b: Any, i64_op: Callable[[Any, Any], Any]) -> Any:
    """``a op b`` (``+ - * / %``) where a ``u64`` takes part; ``i64_op`` is the i64 operator."""
    if type(a) is U64:
        return _arith(op, int(a), _as_u64(op, a, b))
    if type(a) is int and type(b) is U64:
        return i64_op(a, _as_i64(b))
    raise _bad_operands(op, a, b)


def mixed_bitwise(op: str, a: Any, b: Any, i64_op: Callable[[Any, Any], Any]) -> Any:
    """``a op b`` for ``& | ^ << >>`` where a ``u64`` takes part."""
    if type(a) is U64:
        x = int(a)
        if op in ("<<", ">>"):
            shift = _as_u64(op, a, b)
            if shift > _U32_MAX:
                raise _convert_error(shift, "u32")
            if shift >= 64:
                raise _range_error(op, op == ">>")
            return U64((x << shift) & U64_MAX if op == "<<" else x >> shift)
        y = _as_u64(op, a, b)
        return U64(x & y if op == "&" else x | y if op == "|" else x ^ y)
    if type(a) is int and type(b) is U64:
        return i64_op(a, _as_i64(b))
    raise _bad_operands(op, a, b)


def u64_not(a: U64) -> U64:
    """``!a``: the bitwise complement within 64 bits."""
    return U64(~int(a) & U64_MAX)


def mixed_eq(a: Any, b: Any) -> bool:
    """``a == b`` (``PartialEq``) where a ``u64`` takes part: the right side converts to the left's type."""
    if type(a) is U64:
        tb = type(b)
        if tb is U64 or tb is int:
            return int(a) == _as_u64("==", a, b)
    elif type(a) is int:
        return a == _as_i64(b)
    raise RuneRuntimeError(f"cannot compare `{_name(a)}` with `{_name(b)}` for equality")


def mixed_cmp(a: Any, b: Any) -> int:
    """``PartialOrd`` of ``a`` and ``b`` where a ``u64`` takes part, as -1, 0 or 1."""
    if type(a) is U64:
        tb = type(b)
        if tb is U64 or tb is int:
            x, y = int(a), _as_u64("<", a, b)
            return (x > y) - (x < y)
    elif type(a) is int:
        y = _as_i64(b)
        return (a > y) - (a < y)
    raise RuneRuntimeError(f"cannot compare `{_name(a)}` with `{_name(b)}`")


def refuse_total(op: str, a: Any, b: Any) -> None:
    """``std::ops::eq`` / ``cmp`` (``Eq``, ``Ord``) never mix ``u64`` and ``i64``, as upstream."""
    ta, tb = type(a), type(b)
    if (ta is U64 and tb is int) or (ta is int and tb is U64):
        raise RuneRuntimeError(
            f"unsupported binary operation `{op}` on `{_name(a)}` and `{_name(b)}`: total "
            f"comparison needs one integer type; convert one side with `as`, or use `==` / `<`"
        )


# --- hashing -----------------------------------------------------------------------------


def u64_hash_bits(v: U64) -> int:
    """The i64 with the same 64 bits: upstream hashes both alike."""
    return int(v) - _WIDTH if v > _I64_MAX else int(v)


class _U64Key:
    """The hash key of a ``u64`` in a ``HashMap``/``HashSet``: it hashes as the ``i64`` key with
    the same bits, and meeting that key (upstream compares equal hashes with total equality)
    is the upstream error."""

    __slots__ = ("bits", "value")

    def __init__(self, value: U64) -> None:
        self.value = int(value)
        self.bits = u64_hash_bits(value)

    def __hash__(self) -> int:
        return hash(self.bits)

    def __eq__(self, other: object) -> bool:
        if type(other) is _U64Key:
            return self.value == other.value
        if type(other) is int and other == self.bits:
            raise RuneRuntimeError(
                f"unsupported binary operation `eq` on `u64` and `i64`: the keys {self.value}u64 and "
                f"{other} hash alike and cannot be compared; use one integer type for the keys"
            )
        return False

    def __repr__(self) -> str:
        return f"{self.value}u64"


def u64_hash_key(v: U64) -> _U64Key:
    """The dict key standing for ``v`` in ``std::collections``."""
    return _U64Key(v)


# --- conversions -------------------------------------------------------------------------


def cast_integer(v: Any, target: str) -> Any:
    """``v as u64`` (of an integer, float, bool or char) or ``v as i64`` of a ``u64``, as Rust's
    ``as``: wrapping between the integers, saturating (NaN: 0) from a float."""
    t = type(v)
    if t is U64:
        return v if target == "u64" else u64_hash_bits(v)
    if t is int:
        return U64(v & U64_MAX)
    if t is float:
        if math.isnan(v) or v <= 0.0:
            return U64_MIN_VALUE
        return U64(min(int(v), U64_MAX)) if math.isfinite(v) else U64_MAX_VALUE
    if t is bool:
        return U64(int(v))
    if t is Char:
        return U64(ord(v))
    raise RuneRuntimeError(f"cannot cast `{_name(v)}` to `{target}`")


def unsigned_literal(value: int, suffix: str) -> U64 | None:
    """The value of an integer literal with an unsigned suffix (``5u64``, ``255u8``: all are
    ``u64`` values upstream); None for any other suffix. Out of range is a compile error."""
    limit = _UNSIGNED_SUFFIXES.get(suffix)
    if limit is None:
        return None
    if value > limit:
        raise ValueError(f"Unsigned number literal out of bounds `0` to `{limit}`")
    return U64(value)


def negative_literal_error(value: U64) -> str | None:
    """Why ``-<value>`` of an unsigned literal is invalid (upstream checks the negated value:
    only ``-0`` is in range); None when it is valid."""
    if not value:
        return None
    return (
        f"Unsigned number literal out of bounds `0` to `{U64_MAX}`: `-{int(value)}` is negative; "
        "use an i64 literal (no suffix), or `as u64` to wrap it"
    )


def integer_range(start: Any, end: Any, inclusive: bool) -> Iterator[Any]:
    """``for x in start..end`` where a ``u64`` is one end: an i64 start converts the end to
    i64, as upstream does. Such a loop's variable is compiled as an i64 unless the start is a
    u64 literal or ``as u64`` cast (see ``numtypes.counts_in_i64``), so any other u64 start is
    refused rather than counted in the wrong type."""
    if type(start) is int and type(end) is U64:
        stop = _as_i64(end)
        return iter(range(start, stop + 1 if inclusive else stop))
    if type(start) is U64:
        raise RuneRuntimeError(
            f"cannot iterate a range starting at the u64 `{int(start)}` here: write its start as a "
            "u64 literal or an `as u64` cast (`for i in (a as u64)..b`), or count in i64 (`a as i64`)"
        )
    raise RuneRuntimeError("only integer ranges can be iterated")


# --- parse, methods and the module ---------------------------------------------------------


def parse_u64(s: str) -> Result:
    """Rust's ``u64::from_str``: an optional ``+`` and ASCII digits (a ``-`` is an invalid digit)."""
    if not s:
        return Result(False, "cannot parse integer from empty string")
    body = s[1:] if s[0] == "+" else s
    if not body or not body.isascii() or not body.isdigit():
        return Result(False, "invalid digit found in string")
    v = int(body)
    if v > U64_MAX:
        return Result(False, "number too large to fit in target type")
    return Result(True, U64(v))


def _arg(name: str, a: U64, b: Any) -> int:
    """A ``u64`` parameter of method ``name``: upstream converts the argument (``as_integer``)."""
    if type(b) is not int and type(b) is not U64:
        raise RuneRuntimeError(f"`u64::{name}` takes an integer argument, not `{_name(b)}`; convert it with `as u64`")
    return _as_u64(name, a, b)


def _checked(op: str) -> Callable[[U64, Any], Option]:
    def method(a: U64, b: Any) -> Option:
        y = _arg(f"checked_{op}", a, b)
        x = int(a)
        if op == "add":
            r = x + y
        elif op == "sub":
            r = x - y
        elif op == "mul":
            r = x * y
        elif y == 0:
            return NONE
        else:
            r = x // y if op == "div" else x % y
        return some(U64(r)) if 0 <= r <= U64_MAX else NONE

    return method


def _wrapping(op: str) -> Callable[[U64, Any], U64]:
    def method(a: U64, b: Any) -> U64:
        y = _arg(f"wrapping_{op}", a, b)
        x = int(a)
        if op in ("div", "rem"):
            if y == 0:
                raise RuneRuntimeError(f"division by zero in `wrapping_{op}`")
            return U64(x // y if op == "div" else x % y)
        r = x + y if op == "add" else x - y if op == "sub" else x * y
        return U64(r % _WIDTH)

    return method


def _saturating(op: str) -> Callable[[U64, Any], U64]:
    def method(a: U64, b: Any) -> U64:
        y = _arg(f"saturating_{op}", a, b)
        x = int(a)
        r = x + y if op == "add" else x - y if op == "sub" else x * y
        return U64(min(max(r, 0), U64_MAX))

    return method


def _exponent(name: str, a: U64, e: Any) -> int:
    """A ``u32`` exponent (upstream converts the argument, failing outside ``0..=u32::MAX``)."""
    y = _arg(name, a, e)
    if y > _U32_MAX:
        raise _convert_error(y, "u32")
    return y


def _pow(a: U64, e: Any) -> U64:
    return U64(pow(int(a), _exponent("pow", a, e), _WIDTH))  # wraps, as upstream's `pow`


def _saturating_pow(a: U64, e: Any) -> U64:
    y, x = _exponent("saturating_pow", a, e), int(a)
    if x >= 2 and y >= 64:
        return U64_MAX_VALUE
    return U64(min(x**y, U64_MAX))


def _ordering(c: int) -> Any:
    from .std_types import ordering_of  # std_types registers these methods

    return ordering_of(c)


def _compare(a: U64, b: Any, name: str) -> int:
    x, y = int(a), _arg(name, a, b)
    return (x > y) - (x < y)


U64_METHODS: dict[str, Any] = {
    "to::f64": float,
    "max": lambda a, b: U64(max(int(a), _arg("max", a, b))),
    "min": lambda a, b: U64(min(int(a), _arg("min", a, b))),
    "pow": _pow,
    **{f"checked_{op}": _checked(op) for op in ("add", "sub", "mul", "div", "rem")},
    **{f"wrapping_{op}": _wrapping(op) for op in ("add", "sub", "mul", "div", "rem")},
    **{f"saturating_{op}": _saturating(op) for op in ("add", "sub", "mul")},
    "saturating_pow": _saturating_pow,
    "to_string": lambda a: str(int(a)),
    "clone": lambda a: a,
    # As methods these take a `u64` argument, which upstream converts: `5u64.eq(5)` is true.
    "partial_eq": lambda a, b: _compare(a, b, "partial_eq") == 0,
    "eq": lambda a, b: _compare(a, b, "eq") == 0,
    "partial_cmp": lambda a, b: some(_ordering(_compare(a, b, "partial_cmp"))),
    "cmp": lambda a, b: _ordering(_compare(a, b, "cmp")),
}

U64_NS: dict[str, Any] = {"MIN": U64_MIN_VALUE, "MAX": U64_MAX_VALUE, "parse": parse_u64}


def unsigned_hint(hint: tuple[int, Option]) -> tuple[U64, Option]:
    """``size_hint()`` as a script sees it: upstream's ``usize`` bounds are ``u64`` values (the
    lower bound saturates, an upper bound past ``u64::MAX`` is ``None``)."""
    lower, upper = hint
    high = some(U64(upper.value)) if upper.is_some and upper.value <= U64_MAX else NONE
    return U64(min(lower, U64_MAX)), high


BYTE_VALUES: tuple[U64, ...] = tuple(U64(i) for i in range(256))
"""The ``u64`` each byte reads as: upstream's byte literals and ``Bytes`` items are ``u64`` values."""


def byte_values(data: Any) -> list[U64]:
    """The items of a byte string as ``u64`` values (a snapshot, as ``iter(list(b))`` was)."""
    return [BYTE_VALUES[x] for x in data]


def range_items(start: Any, end: Any, inclusive: bool) -> Iterator[Any]:
    """The items of a range value one of whose ends is a ``u64``, as upstream iterates it: the
    start's type decides, the end converts to it (``0u64..3`` gives u64 items, ``0..3u64`` i64
    ones); ``start..`` counts up from a u64 start."""
    if type(start) is U64:
        if end is None:
            return map(U64, itertools.count(int(start)))
        stop = _as_u64("..", start, end) + inclusive
        return map(U64, range(int(start), stop))
    if type(start) is int:
        stop = _as_i64(end) + inclusive
        return iter(range(start, stop))
    raise RuneRuntimeError(f"only integer ranges (and char ranges) can be iterated, not `{_name(start)}..`")
