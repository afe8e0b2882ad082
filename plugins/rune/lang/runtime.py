"""Operators with Rune semantics (checked i64 arithmetic, no implicit int/float mixing),
equality, ordering, formatting and iteration."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

from .errors import RuneRuntimeError
from .formatting import debug
from .limits import allocate, metered
from .shared_string import SharedString
from .std_u64 import (
    U64,
    byte_values,
    integer_range,
    mixed_arith,
    mixed_bitwise,
    mixed_cmp,
    mixed_eq,
    range_items,
    u64_not,
)
from .values import (
    Bytes,
    Char,
    Function,
    Future,
    Instance,
    Option,
    RangeValue,
    Result,
    TypeInfo,
)

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


def type_name(v: Any) -> str:
    t = type(v)
    if t is int:
        return "i64"
    if t is float:
        return "f64"
    if t is bool:
        return "bool"
    if t is str or t is SharedString:
        return "String"
    if t is Char:
        return "char"
    if v is None:
        return "()"
    if t is list:
        return "Vec"
    if t is tuple:
        return "Tuple"
    if t is dict:
        return "Object"
    if t is Option:
        return "Option"
    if t is Result:
        return "Result"
    if t is Instance:
        return v.type.full_name
    if t is Function:
        return "Function"
    if t is RangeValue:
        return "Range"
    if t is Bytes:
        return "Bytes"
    if t is U64:
        return "u64"
    return t.__name__


def overflow(op: str) -> RuneRuntimeError:
    return RuneRuntimeError(f"integer overflow in `{op}`")


def bad_operands(op: str, a: Any, b: Any) -> RuneRuntimeError:
    return RuneRuntimeError(f"unsupported operation `{type_name(a)} {op} {type_name(b)}`")


def op_add(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int and type(b) is int:
        r = a + b
        if I64_MIN <= r <= I64_MAX:
            return r
        raise overflow("+")
    if ta is float and type(b) is float:
        return a + b
    if ta is str and type(b) is str:
        allocate(len(a) + len(b), "string", 1 if a.isascii() and b.isascii() else 4)
        return a + b
    if (ta is SharedString or ta is str) and type(b) in _TEXT:  # a new string, as upstream's ADD
        return op_add(str(a), str(b))
    if ta is U64 or type(b) is U64:
        return mixed_arith("+", a, b, op_add)
    raise bad_operands("+", a, b)


_TEXT = (str, SharedString)


def op_sub(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        r = a - b
        if I64_MIN <= r <= I64_MAX:
            return r
        raise overflow("-")
    if type(a) is float and type(b) is float:
        return a - b
    if type(a) is U64 or type(b) is U64:
        return mixed_arith("-", a, b, op_sub)
    raise bad_operands("-", a, b)


def op_mul(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        r = a * b
        if I64_MIN <= r <= I64_MAX:
            return r
        raise overflow("*")
    if type(a) is float and type(b) is float:
        return a * b
    if type(a) is U64 or type(b) is U64:
        return mixed_arith("*", a, b, op_mul)
    raise bad_operands("*", a, b)


def op_div(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        if b == 0:
            raise RuneRuntimeError("division by zero")
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q
        if q > I64_MAX:
            raise overflow("/")
        return q
    if type(a) is float and type(b) is float:
        if b == 0.0:
            return (
                math.copysign(math.inf, a) * math.copysign(1.0, b)
                if a != 0 and not math.isnan(a)
                else math.nan
            )
        return a / b
    if type(a) is U64 or type(b) is U64:
        return mixed_arith("/", a, b, op_div)
    raise bad_operands("/", a, b)


def op_rem(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        if b == 0:
            raise RuneRuntimeError("division by zero")
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    if type(a) is float and type(b) is float:
        return math.fmod(a, b) if b != 0.0 else math.nan
    if type(a) is U64 or type(b) is U64:
        return mixed_arith("%", a, b, op_rem)
    raise bad_operands("%", a, b)


def _other_bitwise(op: str, a: Any, b: Any, i64_op: Any) -> Any:
    """``a op b`` past the i64 and bool paths: a ``u64`` takes part (see ``std_u64``), or an error."""
    if type(a) is U64 or type(b) is U64:
        return mixed_bitwise(op, a, b, i64_op)
    raise bad_operands(op, a, b)


def op_bitand(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        return a & b
    if type(a) is bool and type(b) is bool:
        return a and b
    return _other_bitwise("&", a, b, op_bitand)


def op_bitor(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        return a | b
    if type(a) is bool and type(b) is bool:
        return a or b
    return _other_bitwise("|", a, b, op_bitor)


def op_bitxor(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        return a ^ b
    if type(a) is bool and type(b) is bool:
        return a != b
    return _other_bitwise("^", a, b, op_bitxor)


def op_shl(a: Any, b: Any) -> Any:
    if type(a) is not int or type(b) is not int:
        return _other_bitwise("<<", a, b, op_shl)
    if not 0 <= b < 64:
        raise overflow("<<")
    r = (a << b) & 0xFFFFFFFFFFFFFFFF
    return r - (1 << 64) if r > I64_MAX else r


def op_shr(a: Any, b: Any) -> Any:
    if type(a) is not int or type(b) is not int:
        return _other_bitwise(">>", a, b, op_shr)
    if not 0 <= b < 64:
        raise overflow(">>")
    return a >> b


def op_neg(a: Any) -> Any:
    if type(a) is int:
        if a == I64_MIN:
            raise overflow("-")
        return -a
    if type(a) is float:
        return -a
    raise RuneRuntimeError(f"unsupported operation `-{type_name(a)}`")


def op_not(a: Any) -> Any:
    if type(a) is bool:
        return not a
    if type(a) is int:
        return ~a
    if type(a) is U64:
        return u64_not(a)
    raise RuneRuntimeError(f"unsupported operation `!{type_name(a)}`")


def eq(a: Any, b: Any) -> bool:
    """Rune structural equality; comparing values of different types is an error."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        if a is None or b is None:
            return False
        if ta in _TEXT and tb in _TEXT:
            return str(a) == str(b)
        if ta is U64 or tb is U64:
            return mixed_eq(a, b)
        if hasattr(ta, "equals"):  # std::collections: HashMap, HashSet, VecDeque (any iterable)
            return a.equals(b)
        if (ta is list or ta is tuple) and (tb is RangeValue or hasattr(tb, "__rune_iter__")):
            return _vec_eq_iterable(a, b)
        raise RuneRuntimeError(f"cannot compare `{type_name(a)}` with `{type_name(b)}` for equality")
    if ta in (int, float, str, bool, Char, Bytes, SharedString, U64):
        return a == b
    if ta in (list, tuple):
        return len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(eq(v, b[k]) for k, v in a.items())
    if ta is Option:
        return a.is_some == b.is_some and (not a.is_some or eq(a.value, b.value))
    if ta is Result:
        return a.is_ok == b.is_ok and eq(a.value, b.value)
    if ta is Instance:
        return a.type is b.type and eq(a.values, b.values)
    if ta is RangeValue:
        return a.start == b.start and a.end == b.end and a.inclusive == b.inclusive
    if hasattr(ta, "equals"):
        return a.equals(b)
    return a is b


def _vec_eq_iterable(a: list, b: Any) -> bool:
    """A vector equals an iterable value (an iterator, a range, a VecDeque) with equal items, in
    order: upstream's ``Vec`` ``PARTIAL_EQ`` takes anything with ``INTO_ITER``."""
    end = object()
    theirs = iterate(b)
    for x in a:
        y = next(theirs, end)
        if y is end or not eq(x, y):
            return False
    return next(theirs, end) is end


def cmp(a: Any, b: Any) -> int:
    """Rune ordering: -1, 0 or 1; mixing types is an error."""
    ta, tb = type(a), type(b)
    if (ta is SharedString or tb is SharedString) and ta in _TEXT and tb in _TEXT:
        a, b = str(a), str(b)
        return (a > b) - (a < b)
    if ta is not tb:
        if ta is U64 or tb is U64:
            return mixed_cmp(a, b)
        raise RuneRuntimeError(f"cannot compare `{type_name(a)}` with `{type_name(b)}`")
    if ta in (int, float, str, bool, Char, Bytes, U64):
        return (a > b) - (a < b)
    if ta in (list, tuple):
        for x, y in zip(a, b):
            c = cmp(x, y)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    if ta is Option:
        if a.is_some != b.is_some:
            return 1 if a.is_some else -1
        return cmp(a.value, b.value) if a.is_some else 0
    if ta is Result:
        if a.is_ok != b.is_ok:
            return -1 if a.is_ok else 1
        return cmp(a.value, b.value)
    if ta is Instance and a.type is b.type and a.type.ordered:
        return cmp(a.values, b.values)
    if ta is RangeValue and a.inclusive == b.inclusive:  # start first, then end
        return cmp([Option(a.start is not None, a.start), Option(a.end is not None, a.end)],
                   [Option(b.start is not None, b.start), Option(b.end is not None, b.end)])
    if hasattr(ta, "compare"):  # VecDeque: PARTIAL_CMP / CMP
        return a.compare(b)
    raise RuneRuntimeError(f"`{type_name(a)}` values cannot be ordered")


def op_lt(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str):
        return a < b
    return cmp(a, b) < 0


def op_le(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str):
        return a <= b
    return cmp(a, b) <= 0


def op_gt(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str):
        return a > b
    return cmp(a, b) > 0


def op_ge(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str):
        return a >= b
    return cmp(a, b) >= 0


def op_eq(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is type(b) and (ta is int or ta is str):
        return a == b
    return eq(a, b)


def op_ne(a: Any, b: Any) -> bool:
    return not op_eq(a, b)


BINARY_OPS = {
    "+": op_add,
    "-": op_sub,
    "*": op_mul,
    "/": op_div,
    "%": op_rem,
    "&": op_bitand,
    "|": op_bitor,
    "^": op_bitxor,
    "<<": op_shl,
    ">>": op_shr,
    "==": op_eq,
    "!=": op_ne,
    "<": op_lt,
    "<=": op_le,
    ">": op_gt,
    ">=": op_ge,
}


def iterate(v: Any) -> Iterator[Any]:
    """Python iterator over any iterable Rune value."""
    t = type(v)
    if t is RangeValue:
        if type(v.start) is int and v.end is None:
            return metered(itertools.count(v.start))
        if type(v.start) is Char and type(v.end) is Char:  # 'a'..='e'
            return map(Char, map(chr, range(ord(v.start), ord(v.end) + v.inclusive)))
        if type(v.start) is not int or type(v.end) is not int:
            if type(v.start) is U64 or type(v.end) is U64:
                items = range_items(v.start, v.end, v.inclusive)
                return metered(items) if v.end is None else items
            raise RuneRuntimeError("only integer ranges (and char ranges) can be iterated")
        return iter(v.py_range())
    if t is list or t is tuple:
        return iter(v)
    if t is dict:
        return iter(list(v.items()))
    if t is str or t is SharedString:
        return iter([Char(c) for c in str(v)])
    if t is Option:
        return iter([v.value] if v.is_some else [])
    if t is Bytes:
        return iter(byte_values(v))  # u64 items, as upstream
    it = getattr(v, "__rune_iter__", None)
    if it is not None:
        return it()
    raise RuneRuntimeError(f"`{type_name(v)}` is not iterable")


# --- helpers of the generated code (slow paths and checks) -------------------------------


def bad_condition(v: Any) -> bool:
    raise RuneRuntimeError(f"expected `bool` condition, found `{type_name(v)}`")


def int_range(start: Any, end: Any, inclusive: bool) -> Iterator[Any]:
    """The iterator of ``for x in start..end``: integer bounds only."""
    if type(start) is not int or type(end) is not int:
        return integer_range(start, end, inclusive)
    return iter(range(start, end + 1 if inclusive else end))


def try_fail(v: Any) -> Any:
    """``v?`` on an ``Err``/``None``: the value to return; anything else is an error."""
    if type(v) is Result or type(v) is Option:
        return v
    raise RuneRuntimeError(f"`?` needs an Option or Result, found `{type_name(v)}`")


def no_match(message: str) -> RuneRuntimeError:
    return RuneRuntimeError(message)


def misplaced(what: str) -> RuneRuntimeError:
    return RuneRuntimeError(f"`{what}` outside of a loop")


def arity(name: str, expected: int, given: int) -> Any:
    raise RuneRuntimeError(f"`{name}` expects {expected} arguments, got {given}")


def not_callable(t: TypeInfo) -> Any:
    raise RuneRuntimeError(f"`{t.full_name}` is not callable")


def tuple_set(t: tuple, i: int, v: Any) -> tuple:
    if not 0 <= i < len(t):
        raise RuneRuntimeError(f"tuple index {i} out of bounds")
    return t[:i] + (v,) + t[i + 1 :]


def new_struct(t: Any, path: str, given: dict) -> Instance:
    if not isinstance(t, TypeInfo) or t.kind != "named":
        raise RuneRuntimeError(f"`{path}` is not a struct with named fields")
    missing = [f for f in t.fields if f not in given]
    extra = [k for k in given if k not in t.fields]
    if missing or extra:
        what = f"missing field `{missing[0]}`" if missing else f"unknown field `{extra[0]}`"
        raise RuneRuntimeError(f"{what} in `{t.full_name}`")
    return Instance(t, [given[f] for f in t.fields])


def struct_field(v: Instance, name: str) -> Any:
    return v.get(name)


def match_value(v: Any, target: Any) -> bool:
    """A path pattern naming a value (a constant or unit struct)."""
    if isinstance(target, TypeInfo):
        return type(v) is Instance and v.type is target
    if isinstance(target, Instance):
        return type(v) is Instance and v.type is target.type
    return type(v) is type(target) and eq(v, target)


def select_ready(f: Any) -> bool:
    if type(f) is not Future:
        raise RuneRuntimeError(f"`select` needs futures, found `{type_name(f)}`")
    return not f.done


def select_take(f: Future) -> Any:
    return f.resolve()


def assert_failed(message: str) -> Exception:
    from .errors import RunePanic

    return RunePanic("assertion failed: " + (message or "condition is false"))


def assert_eq_failed(a: Any, b: Any, want: bool, message: str) -> Exception:
    from .errors import RunePanic

    op = "==" if want else "!="
    extra = f": {message}" if message else ""
    return RunePanic(f"assertion failed: `left {op} right`: left: {debug(a)}, right: {debug(b)}{extra}")


def panic(message: str) -> Exception:
    from .errors import RunePanic

    return RunePanic(message or "explicit panic")
