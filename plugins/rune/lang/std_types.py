"""Method tables of the built-in types: String, Vec, Tuple, Object, Option, Result, numbers, char."""

from __future__ import annotations

import itertools
import math
import operator
import unicodedata
from collections.abc import Callable
from typing import Any

from . import vec_capacity
from .errors import RuneRuntimeError
from .formatting import debug, display
from .iterators import RuneIterator
from .limits import ITEM_BYTES, STATE, TextBuilder, allocate, check_length, grow
from .moves import SNAPSHOT_METHODS, Snapshot, moving
from .runtime import I64_MAX, I64_MIN, cmp, eq, iterate
from .shared_string import SHARING_MUTATORS, SharedString, shared_methods
from .std_bytes import BYTES_METHODS
from .std_collections import HASHMAP_METHODS, HASHSET_METHODS, HashMap, HashSet
from .std_float import FLOAT
from .std_numbers import FLOAT_METHODS, INT_METHODS, STRING_PARSERS
from .std_strings import char_at, char_boundary, range_slice_or_none, split, str_get
from .std_u64 import BYTE_VALUES, U64, U64_METHODS
from .std_vec_deque import VECDEQUE_METHODS, VecDeque
from .values import (
    NONE,
    Bytes,
    Char,
    Function,
    Future,
    Generator,
    Instance,
    Option,
    RangeValue,
    Result,
    Stream,
    TypeInfo,
    some,
)

STRING_MUTATORS = frozenset({"push_str", "push", "clear", "insert_str", "truncate", "pop"}) | SHARING_MUTATORS


def _key(v: Any) -> Any:
    import functools

    return functools.cmp_to_key(cmp)(v)


def _sort(v: list, f: Any = None) -> None:
    import functools

    if f is None:
        v.sort(key=functools.cmp_to_key(cmp))
    else:

        def order(a: Any, b: Any) -> int:
            o = f(a, b)
            return {"Less": -1, "Equal": 0, "Greater": 1}[o.type.name] if type(o) is Instance else o

        v.sort(key=functools.cmp_to_key(order))


def _int_check(r: int, op: str) -> int:
    if I64_MIN <= r <= I64_MAX:
        return r
    raise RuneRuntimeError(f"integer overflow in `{op}`")


def _checked(f: Callable[[int, int], int]) -> Callable[[int, int], Option]:
    def run(a: int, b: int) -> Option:
        try:
            r = f(a, b)
        except ZeroDivisionError:
            return NONE
        return some(r) if I64_MIN <= r <= I64_MAX else NONE

    return run


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _repeat(s: Any, k: int) -> Any:
    allocate(len(s) * max(k, 0), "string", _width(s))
    return s * k


def _width(s: str) -> int:
    """Estimated bytes per character of a string built from ``s``."""
    return 1 if s.isascii() else 4


def _replace(s: str, a: Any, b: Any) -> str:
    old, new = str(a), str(b)
    # the exact length of the result, known before it is built
    count = s.count(old)
    allocate(len(s) + count * (len(new) - len(old)), "string", max(_width(s), _width(new)))
    return s.replace(old, new)


def _changed_case(convert: Callable[[str], str]) -> Callable[[str], str]:
    def method(s: str) -> str:
        allocate(len(s), "string", _width(s))
        out = convert(s)
        check_length(len(out), "string")  # a few characters grow (ß -> SS): at most three times
        return out

    return method


def _encoded(s: str) -> bytes:
    allocate(len(s), "byte string", _width(s))
    return s.encode()


_STR_ONLY = frozenset({str})
_TEXT_ONLY = frozenset({str, SharedString})
_SHARED_ONLY = frozenset({SharedString})
_MOVED = operator.attrgetter("moved")
_TEXT = operator.attrgetter("text")


def _join_strings(v: list, separator: str) -> str | None:
    """``separator.join(v)`` when every item is a ``str`` and the result fits the run's limits
    even at four bytes a character (checked before it is built, its exact width counted after);
    None otherwise. Cheaper than testing each item's type and width first."""
    if v and type(v[0]) is not str:
        return None  # most likely not all strings: not worth measuring
    try:
        size = sum(map(len, v)) + len(separator) * max(len(v) - 1, 0)
    except TypeError:  # an item without a length: not all strings
        return None
    state = STATE
    if size > state.max_length or state.allocated + 4 * size > state.max_memory:
        return None  # near a limit: the exact path measures the width first
    try:
        out = separator.join(v)
    except TypeError:  # not all strings
        return None
    allocate(len(out), "joined string", 1 if out.isascii() else 4)
    return out


def _joined(v: list, sep: Any) -> str:
    separator = str(sep)
    out = _join_strings(v, separator)
    if out is not None:
        return out
    kinds: frozenset[type] = frozenset(map(type, v))
    if SharedString in kinds and kinds <= _TEXT_ONLY:  # their text now
        # Shared strings none of which was moved: their texts read in C, not by `str()` each.
        fast = kinds == _SHARED_ONLY and not any(map(_MOVED, v))
        v, kinds = list(map(_TEXT, v)) if fast else [str(x) for x in v], _STR_ONLY
        out = _join_strings(v, separator)
        if out is not None:
            return out
    if kinds <= _STR_ONLY:
        # all strings: the exact length is known before the string is built
        ascii_only = separator.isascii() and all(map(str.isascii, v))
        size = sum(map(len, v)) + len(separator) * max(len(v) - 1, 0)
        allocate(size, "joined string", 1 if ascii_only else 4)
        return separator.join(v)
    text = TextBuilder("joined string")
    for i, x in enumerate(v):
        if i:
            text.add(separator)
        text.add(display(x))
    return text.text()


def _insert(v: list, i: int, x: Any) -> None:
    if not 0 <= i <= len(v):  # Python's insert would clamp the index
        raise RuneRuntimeError(f"index {i} out of range for insertion into a vector of length {len(v)}")
    grow(v, x, "vector")
    v.insert(i, x)


def _copy(v: Any) -> Any:
    t = type(v)
    allocate(len(v), _KINDS.get(t, "vector"), 1 if t is Bytes else ITEM_BYTES)
    return t(v)


_KINDS: dict[type, str] = {dict: "object", Bytes: "byte string"}


def _swap(v: list, a: int, b: int) -> None:
    v[a], v[b] = v[b], v[a]


def _pow(a: int, b: int) -> int:
    if b < 0:
        raise RuneRuntimeError("negative exponent in `pow`")
    if b > 64 and a not in (-1, 0, 1):  # |a| >= 2: beyond i64 long before Python is done
        raise RuneRuntimeError("integer overflow in `pow`")
    return _int_check(a**b, "pow")


def _vec_get(v: Any, i: Any) -> Any:
    if type(i) is RangeValue:
        s = range_slice_or_none(i, len(v))
        return NONE if s is None else some(list(v[s]))
    return some(v[i]) if type(i) is int and 0 <= i < len(v) else NONE


def _clone_value(v: Any) -> Any:
    """Upstream's ``Value::clone_with``: a built-in value through its ``CLONE`` protocol, while a
    script's struct or enum value (a ``Dynamic`` there) is shared, not copied."""
    if type(v) is Instance:
        return v
    method = METHODS.get(type(v), {}).get("clone")
    return v if method is None else method(v)


def _sort_checked(v: list, f: Any = None) -> None:
    if f is None and any(type(x) is float and math.isnan(x) for x in v):
        raise RuneRuntimeError("cannot sort a vector holding NaN: NaN has no order (use `sort_by`)")
    _sort(v, f)


def range_slice(r: RangeValue, n: int) -> slice:
    start = r.start or 0
    end = n if r.end is None else (r.end + 1 if r.inclusive else r.end)
    if start < 0 or end > n or start > end:
        raise RuneRuntimeError(f"range {debug(r)} out of bounds for length {n}")
    return slice(start, end)


def _push(v: Any, x: Any) -> None:
    grow(v, x, "vector")
    v.append(x)


def _extend(v: Any, other: Any) -> None:
    items = iterate(other)
    for chunk in iter(lambda: list(itertools.islice(items, 65_536)), []):
        check_length(len(v) + len(chunk), "vector")
        allocate(len(chunk), "vector", ITEM_BYTES)
        v.extend(chunk)


def _pop(v: list) -> Option:
    return some(v.pop()) if v else NONE


def _remove(v: list, i: int) -> Any:
    if not 0 <= i < len(v):
        raise RuneRuntimeError(f"index {i} out of bounds")
    return v.pop(i)


def _contains(v: Any, x: Any) -> bool:
    return any(type(y) is type(x) and eq(y, x) for y in v)


def _opt(v: Any) -> Option:
    return some(v)


def _dedup(v: list) -> None:
    out: list = []
    for x in v:
        if not out or not eq(out[-1], x):
            out.append(x)
    v[:] = out


def _char_to_digit(c: str, radix: int) -> Option:
    if not 2 <= radix <= 36:
        raise RuneRuntimeError(f"to_digit: radix {radix} is out of range (it must be in 2..=36)")
    if not c.isascii():
        return NONE
    try:
        d = int(c, radix)
        return some(d)
    except ValueError:
        return NONE


def _obj_get(d: dict, k: Any) -> Option:
    return some(d[k]) if k in d else NONE


def _obj_insert(d: dict, k: Any, v: Any) -> Option:
    if k not in d:
        grow(d, v, "object")
    old = some(d[k]) if k in d else NONE
    d[k] = v
    return old


def _obj_remove(d: dict, k: Any) -> Option:
    return some(d.pop(k)) if k in d else NONE


def _unwrap(o: Any) -> Any:
    if type(o) is Option:
        if o.is_some:
            return o.value
        raise _panic("called `Option::unwrap()` on a `None` value")
    if o.is_ok:
        return o.value
    raise _panic(f"called `Result::unwrap()` on an `Err` value: {debug(o.value)}")


def _expect(o: Any, msg: str) -> Any:
    if (type(o) is Option and o.is_some) or (type(o) is Result and o.is_ok):
        return o.value
    raise _panic(msg)


def _result_expect(r: Result, msg: Any) -> Any:
    """Upstream panics with the message and the error's debug form: ``msg: "err"``."""
    if r.is_ok:
        return r.value
    raise _panic(f"{display(msg)}: {debug(r.value)}")


def _panic(msg: str) -> Exception:
    from .errors import RunePanic

    return RunePanic(msg)


STRING = {
    "len": lambda s: len(s.encode()),
    "is_empty": lambda s: not s,
    "chars": lambda s: RuneIterator(map(Char, s)),
    "bytes": lambda s: RuneIterator(iter(_encoded(s))),
    "as_bytes": lambda s: Bytes(_encoded(s)),
    "to_uppercase": _changed_case(str.upper),
    "to_lowercase": _changed_case(str.lower),
    "trim": str.strip,
    "trim_start": str.lstrip,
    "trim_end": str.rstrip,
    "starts_with": lambda s, p: s.startswith(str(p)),
    "ends_with": lambda s, p: s.endswith(str(p)),
    "contains": lambda s, p: p(s) if isinstance(p, Function) else str(p) in s,
    "split": split,
    "split_str": split,  # upstream's deprecated name of `split`
    "split_whitespace": lambda s: RuneIterator(iter(s.split())),
    "lines": lambda s: RuneIterator(iter(s.splitlines())),
    "replace": _replace,
    "repeat": _repeat,
    "to_string": lambda s: s,
    "to_owned": lambda s: s,
    "clone": lambda s: s,
    **STRING_PARSERS,
    "find": lambda s, p: some(len(s[: s.find(str(p))].encode())) if str(p) in s else NONE,
    "char_at": char_at,
    "get": str_get,
    "is_char_boundary": lambda s, i: char_boundary(s.encode(), i),
    "iter": lambda s: RuneIterator(map(Char, s)),
    "into_bytes": lambda s: Bytes(_encoded(s)),
    "capacity": lambda s: len(s.encode()),
    "reserve": lambda s, n: None,
    "shrink_to_fit": lambda s: None,
    "split_once": lambda s, p: some(tuple(s.split(str(p), 1))) if str(p) in s else NONE,
}

VEC = {
    "len": len,
    "is_empty": lambda v: not v,
    "push": _push,
    "pop": _pop,
    "get": _vec_get,
    "first": lambda v: some(v[0]) if v else NONE,
    "last": lambda v: some(v[-1]) if v else NONE,
    "insert": _insert,
    "remove": _remove,
    "clear": lambda v: v.clear(),
    "extend": _extend,
    "contains": _contains,
    "sort": _sort_checked,
    "sort_by": _sort,
    "capacity": vec_capacity.capacity,
    "reserve": vec_capacity.reserve,
    "reverse": lambda v: v.reverse(),
    "clone": _copy,
    "to_vec": _copy,
    "iter": lambda v: RuneIterator(iter(v)),
    "iter_mut": lambda v: RuneIterator(iter(v)),
    "into_iter": lambda v: RuneIterator(iter(v)),
    "join": _joined,
    "truncate": lambda v, k: v.__delitem__(slice(k, None)),
    "swap": _swap,
    "dedup": _dedup,
    "retain": lambda v, f: v.__setitem__(slice(None), [x for x in v if f(x)]),
    "split_off": lambda v, k: _split_off(v, k),
    "resize": lambda v, k, x: _resize(v, k, x),
}


_IMMUTABLE = frozenset({int, float, bool, str, Char, type(None)})  # shared safely by every slot


def _resize(v: list, k: int, x: Any) -> None:
    check_length(k, "vector")
    if k > len(v):
        allocate(k - len(v), "vector", ITEM_BYTES)
    if k < len(v):
        del v[k:]
    elif type(x) in _IMMUTABLE:
        v.extend([x] * (k - len(v)))
    else:
        v.extend([_clone_value(x) for _ in range(k - len(v))])  # each slot its own value


def _split_off(v: list, k: int) -> list:
    tail = v[k:]
    del v[k:]
    return tail


TUPLE = {
    "len": len,
    "is_empty": lambda v: not v,
    "iter": lambda v: RuneIterator(iter(v)),
    "get": _vec_get,
    "clone": lambda v: tuple(map(_clone_value, v)),  # upstream clones each item (`clone_with`)
}

OBJECT = {
    "len": len,
    "is_empty": lambda d: not d,
    "get": _obj_get,
    "insert": _obj_insert,
    "remove": _obj_remove,
    "contains_key": lambda d, k: k in d,
    "keys": lambda d: RuneIterator(iter(list(d.keys()))),
    "values": lambda d: RuneIterator(iter(list(d.values()))),
    "iter": lambda d: RuneIterator(iter(list(d.items()))),
    "clear": lambda d: d.clear(),
    "clone": _copy,
}

def _take(o: Option) -> Option:
    """``Option::take``: the option is emptied in place and its old content returned."""
    if not o.is_some:
        return NONE
    out = Option(True, o.value)
    o.is_some, o.value = False, None
    return out


def _transpose(o: Option) -> Result:
    if not o.is_some:
        return Result(True, NONE)
    inner = o.value
    if type(inner) is not Result:
        raise RuneRuntimeError("`Option::transpose` needs an `Option` holding a `Result`")
    return Result(True, some(inner.value)) if inner.is_ok else inner


OPTION = {
    "is_some": lambda o: o.is_some,
    "is_none": lambda o: not o.is_some,
    "unwrap": _unwrap,
    "expect": _expect,
    "unwrap_or": lambda o, d: o.value if o.is_some else d,
    "unwrap_or_else": lambda o, f: o.value if o.is_some else f(),
    "unwrap_or_default": lambda o: o.value if o.is_some else 0,
    "map": lambda o, f: some(f(o.value)) if o.is_some else NONE,
    "and_then": lambda o, f: f(o.value) if o.is_some else NONE,
    "or": lambda o, other: o if o.is_some else other,
    "or_else": lambda o, f: o if o.is_some else f(),
    "filter": lambda o, f: o if o.is_some and f(o.value) else NONE,
    "ok_or": lambda o, e: Result(True, o.value) if o.is_some else Result(False, e),
    "ok_or_else": lambda o, f: Result(True, o.value) if o.is_some else Result(False, f()),
    "iter": lambda o: RuneIterator(iter([o.value] if o.is_some else [])),
    "take": _take,
    "clone": lambda o: Option(True, _clone_value(o.value)) if o.is_some else o,
    "transpose": _transpose,
    "unwrap_none": lambda o: None,
}

RESULT = {
    "is_ok": lambda r: r.is_ok,
    "is_err": lambda r: not r.is_ok,
    "unwrap": _unwrap,
    "expect": _result_expect,
    "unwrap_err": lambda r: (
        r.value
        if not r.is_ok
        else (_ for _ in ()).throw(_panic("called `Result::unwrap_err()` on an `Ok` value"))
    ),
    "unwrap_or": lambda r, d: r.value if r.is_ok else d,
    "unwrap_or_else": lambda r, f: r.value if r.is_ok else f(r.value),
    "map": lambda r, f: Result(True, f(r.value)) if r.is_ok else r,
    "map_err": lambda r, f: r if r.is_ok else Result(False, f(r.value)),
    "and_then": lambda r, f: f(r.value) if r.is_ok else r,
    "ok": lambda r: some(r.value) if r.is_ok else NONE,
    "err": lambda r: NONE if r.is_ok else some(r.value),
    "clone": lambda r: Result(r.is_ok, _clone_value(r.value)),
}

INT = {
    "abs": lambda a: a if a == I64_MIN else abs(a),  # upstream's `wrapping_abs`: MIN stays MIN
    "pow": _pow,
    "min": min,
    "max": max,
    "to_string": str,
    "to_float": float,
    "checked_add": _checked(lambda a, b: a + b),
    "checked_sub": _checked(lambda a, b: a - b),
    "checked_mul": _checked(lambda a, b: a * b),
    "checked_div": _checked(_trunc_div),
    "wrapping_add": lambda a, b: ((a + b + 2**63) % 2**64) - 2**63,
    "wrapping_sub": lambda a, b: ((a - b + 2**63) % 2**64) - 2**63,
    "wrapping_mul": lambda a, b: ((a * b + 2**63) % 2**64) - 2**63,
    "saturating_add": lambda a, b: max(I64_MIN, min(I64_MAX, a + b)),
    "saturating_sub": lambda a, b: max(I64_MIN, min(I64_MAX, a - b)),
    "signum": lambda a: (a > 0) - (a < 0),
    "is_positive": lambda a: a > 0,
    "is_negative": lambda a: a < 0,
    "clone": lambda a: a,
    "cmp": lambda a, b: ordering_of(cmp(a, b)),
    **INT_METHODS,
}

CHAR = {
    "is_alphabetic": str.isalpha,
    "is_numeric": lambda c: unicodedata.category(c) in ("Nd", "Nl", "No"),
    "is_control": lambda c: unicodedata.category(c) == "Cc",
    "is_alphanumeric": str.isalnum,
    "is_whitespace": str.isspace,
    "is_uppercase": str.isupper,
    "is_lowercase": str.islower,
    "is_digit": lambda c, r=10: _char_to_digit(c, r).is_some,
    "to_digit": _char_to_digit,
    "to_uppercase": lambda c: Char(c.upper()),
    "to_lowercase": lambda c: Char(c.lower()),
    "to_string": str,
    "clone": lambda c: c,
    "is_ascii": lambda c: ord(c) < 128,
    "to_i64": ord,
}

BOOL = {"to_string": display, "clone": lambda b: b}
FUNCTION = {"call": lambda f, *a: f(*a)}
RANGE = {
    "contains": lambda r, v: r.contains(v),
    "iter": lambda r: RuneIterator(iterate(r)),
    "into_iter": lambda r: RuneIterator(iterate(r)),
}
BYTES = {
    "len": len,
    "is_empty": lambda b: not b,
    "push": _push,
    "pop": lambda b: some(BYTE_VALUES[b.pop()]) if b else NONE,
    "clone": _copy,
    "extend": _extend,
}

# Struct patterns over ranges (`RangeFrom { start }`): (start given, end given, inclusive).
RANGE_KINDS = {
    "RangeFull": (False, False, False),
    "RangeFrom": (True, False, False),
    "RangeTo": (False, True, False),
    "RangeToInclusive": (False, True, True),
    "Range": (True, True, False),
    "RangeInclusive": (True, True, True),
}
RANGE_TYPES = {name: TypeInfo(name, "named", ["start", "end"]) for name in RANGE_KINDS}


def is_range_kind(v: Any, name: str) -> bool:
    if type(v) is not RangeValue:
        return False
    start, end, inclusive = RANGE_KINDS[name]
    return (v.start is not None) == start and (v.end is not None) == end and v.inclusive == inclusive


GENERATOR_STATE = TypeInfo("GeneratorState", "enum", [])
for _name in ("Yielded", "Complete"):
    GENERATOR_STATE.variants[_name] = TypeInfo(_name, "tuple", ["0"], "GeneratorState")
    GENERATOR_STATE.variants[_name].ordered = False


def _gen_next(g: Generator) -> Option:
    if g.finished:
        return NONE
    yielded, value = g.resume(None)
    return some(value) if yielded else NONE


def _gen_resume(g: Generator, value: Any) -> Instance:
    yielded, out = g.resume(value)
    return Instance(GENERATOR_STATE.variants["Yielded" if yielded else "Complete"], [out])


GENERATOR = {
    "next": _gen_next,
    "resume": _gen_resume,
    "iter": lambda g: RuneIterator(g.gen),
    "into_iter": lambda g: RuneIterator(g.gen),
}
STREAM = {
    "next": lambda g: Future.of(lambda: _gen_next(g)),
    "resume": lambda g, v: Future.of(lambda: _gen_resume(g, v)),
}

METHODS = {
    Generator: GENERATOR,
    Stream: STREAM,
    str: STRING,
    list: VEC,
    tuple: TUPLE,
    dict: OBJECT,
    Option: OPTION,
    Result: RESULT,
    int: INT,
    U64: U64_METHODS,
    float: {**FLOAT, **FLOAT_METHODS},
    Char: CHAR,
    bool: BOOL,
    Function: FUNCTION,
    RangeValue: RANGE,
    Bytes: {**BYTES, **BYTES_METHODS},
    type(None): {"len": lambda u: 0, "is_empty": lambda u: True, "clone": lambda u: None},
    HashMap: HASHMAP_METHODS,
    HashSet: HASHSET_METHODS,
    VecDeque: VECDEQUE_METHODS,
}
METHODS[SharedString] = shared_methods(STRING)
METHODS[Snapshot] = SNAPSHOT_METHODS
METHODS[Bytes]["into_vec"] = moving(METHODS[Bytes]["into_vec"])  # takes the bytes by value

ORDERING = TypeInfo("Ordering", "enum", [])
for _name in ("Less", "Equal", "Greater"):
    _t = TypeInfo(_name, "unit", [], "Ordering")
    _t.unit_value = Instance(_t, [])
    _t.ordered = False
    ORDERING.variants[_name] = _t


def ordering_of(c: int) -> Instance:
    return ORDERING.variants[("Less", "Equal", "Greater")[c + 1]].unit_value
