"""Method dispatch, indexing, field access and casts of the built-in value types."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import RunePanic, RuneRuntimeError
from .formatting import debug, display
from .iterators import ADAPTORS, CONSUMERS, RuneIterator, iterator_method
from .limits import allocate, grow
from .moves import check_readable, is_moved
from .runtime import I64_MAX, I64_MIN, iterate, type_name
from .shared_string import SHARING_MUTATORS, SharedString, mutate_str
from .std_numbers import turbofish_missing
from .std_ops import COMPARISON_METHODS
from .std_strings import str_get
from .std_types import (
    METHODS,
    ORDERING,
    RANGE_TYPES,
    STRING_MUTATORS,
    is_range_kind,
    range_slice,
)
from .std_u64 import BYTE_VALUES, U64, cast_integer, u64_hash_bits
from .std_vec_deque import COLLECTION_TYPES, INDEXED
from .values import (
    NONE,
    Bytes,
    Char,
    Function,
    Instance,
    Module,
    Option,
    RangeValue,
    Result,
    TypeInfo,
    some,
)

__all__ = [
    "ORDERING",
    "STRING_MUTATORS",
    "call_method",
    "call_value",
    "get_field",
    "get_index",
    "invoke",
    "set_field",
    "set_index",
]


def invoke(run: Any, obj: Any, name: str, *args: Any) -> Any:
    """``obj.name(args)`` from compiled code: user methods get the run state directly."""
    if type(obj) is Instance:
        ty = obj.type
        m = ty.methods.get(name)
        if m is None and ty.enum_name is not None:
            m = getattr(ty, "enum", ty).methods.get(name)
        if type(m) is Function:
            return m.fn(run, obj, *args)
    return call_method(obj, name, list(args))


def push(run: Any, obj: Any, x: Any) -> Any:
    """``obj.push(x)`` past the inline path of the generated code: a big vector, or another type."""
    if type(obj) is list:
        grow(obj, x, "vector")
        obj.append(x)
        return None
    return invoke(run, obj, "push", x)


def call_value(f: Any, *args: Any) -> Any:
    """Call a value that is not a Rune ``Function``: a tuple struct or variant, a host callable."""
    if type(f) is Function:
        return f.call(*args)
    if callable(f) and not isinstance(f, Module):
        if isinstance(f, TypeInfo) and f.kind != "tuple":
            raise RuneRuntimeError(f"`{f.full_name}` is not callable")
        return f(*args)
    raise RuneRuntimeError(f"`{type_name(f)}` is not a function")


def call_method(obj: Any, name: str, args: list[Any]) -> Any:
    t = type(obj)
    if is_moved(obj):
        check_readable(obj)
    if t is Instance:
        ty = obj.type
        m = ty.methods.get(name)
        if m is None and ty.enum_name is not None:
            m = getattr(ty, "enum", ty).methods.get(name)
        if m is not None:
            return m(obj, *args)
        if name == "clone":
            return Instance(ty, list(obj.values))
        if name in COMPARISON_METHODS:
            return COMPARISON_METHODS[name](obj, *args)
        raise RuneRuntimeError(f"missing method `{name}` on `{ty.full_name}`")
    if t is RuneIterator:
        return iterator_method(obj, name, args)
    table = METHODS.get(t)
    if table is not None:
        m = table.get(name)
        if m is not None:
            if t is str and SharedString in map(type, args):  # the text of shared string arguments
                args = [str(a) if type(a) is SharedString else a for a in args]
            return m(obj, *args)
    if (name in ADAPTORS or name in CONSUMERS) and t in (list, tuple, RangeValue, dict, str):
        return iterator_method(RuneIterator(iterate(obj)), name, args)
    if name == "to_string":
        return display(obj)
    if name == "clone":
        return obj
    if name in COMPARISON_METHODS:
        return COMPARISON_METHODS[name](obj, *args)
    if "::" in name:
        base = name.partition("::")[0]
        if base in ("parse", "to"):
            raise turbofish_missing(type_name(obj), name)
        return call_method(obj, base, args)  # the type of `collect::<Vec<_>>()` changes nothing
    raise RuneRuntimeError(f"missing method `{name}` on `{type_name(obj)}`")


def mutate_string(s: str, name: str, args: list[Any]) -> tuple[str, Any]:
    """Strings are values here; mutating methods return the new string for write-back."""
    if name in SHARING_MUTATORS:  # a capacity or a move: the place gets a SharedString
        return mutate_str(s, name, args)
    if name == "push_str" or name == "push":
        added = str(args[0])
        allocate(len(s) + len(added), "string", 1 if s.isascii() and added.isascii() else 4)
        return s + added, None
    if name == "clear":
        return "", None
    if name == "insert_str":
        added = str(args[1])
        allocate(len(s) + len(added), "string", 1 if s.isascii() and added.isascii() else 4)
        return s[: args[0]] + added + s[args[0] :], None
    if name == "truncate":
        return s.encode()[: args[0]].decode(errors="ignore"), None
    if name == "pop":
        return (s[:-1], some(Char(s[-1]))) if s else (s, NONE)
    raise RuneRuntimeError(f"missing method `{name}` on `String`")


def get_index(obj: Any, key: Any) -> Any:
    t = type(obj)
    if t is list or t is tuple:
        if type(key) is int or type(key) is U64:  # upstream indexes with a usize: i64 or u64
            if 0 <= key < len(obj):
                return obj[key]
            raise RuneRuntimeError(f"index {key} out of bounds for length {len(obj)}")
        if type(key) is RangeValue:
            return obj[range_slice(key, len(obj))]
    elif t is dict:
        if key in obj:
            return obj[key]
        raise RuneRuntimeError(f"missing key {debug(key)} in object")
    elif (t is str or t is SharedString) and type(key) is RangeValue:
        found = str_get(str(obj), key)  # upstream INDEX_GET: a panic off a char boundary
        if not found.is_some:
            raise RunePanic("missing string slice")
        return found.value
    elif t is Instance and obj.type.kind == "tuple" and type(key) is int:
        if 0 <= key < len(obj.values):
            return obj.values[key]
        raise RuneRuntimeError(f"index {key} out of bounds for `{obj.type.full_name}`")
    elif t is Bytes and type(key) is int:
        if 0 <= key < len(obj):
            return BYTE_VALUES[obj[key]]  # a u64, as upstream
        raise RuneRuntimeError(f"index {key} out of bounds for length {len(obj)}")
    elif t is Bytes and type(key) is RangeValue:
        return Bytes(obj[range_slice(key, len(obj))])
    if t in INDEXED:  # HashMap, VecDeque: their INDEX_GET protocol
        return obj.index_get(key)
    raise RuneRuntimeError(f"cannot index `{type_name(obj)}` with `{type_name(key)}`")


def set_index(obj: Any, key: Any, value: Any) -> None:
    t = type(obj)
    if t is list and (type(key) is int or type(key) is U64):
        if 0 <= key < len(obj):
            obj[key] = value
            return
        raise RuneRuntimeError(f"index {key} out of bounds for length {len(obj)}")
    if t is Bytes and type(key) is int:
        if not 0 <= key < len(obj):
            raise RuneRuntimeError(f"index {key} out of bounds for length {len(obj)}")
        if (type(value) is not int and type(value) is not U64) or not 0 <= value <= 255:
            raise RuneRuntimeError(f"a byte string holds bytes (0..=255), not `{type_name(value)}` {value!r}")
        obj[key] = value
        return
    if t is dict and type(key) is SharedString:  # an object's keys are copies of the text
        key = str(key)
    if t is dict and type(key) is str:
        if key not in obj:
            grow(obj, value, "object")
        obj[key] = value
        return
    if t in INDEXED:
        obj.index_set(key, value)
        return
    raise RuneRuntimeError(f"cannot assign into `{type_name(obj)}` with `{type_name(key)}` index")


def get_field(obj: Any, name: Any) -> Any:
    t = type(obj)
    if t is Instance:
        if type(name) is int:
            if obj.type.kind == "tuple" and name < len(obj.values):
                return obj.values[name]
            raise RuneRuntimeError(f"`{obj.type.full_name}` has no field {name}")
        return obj.get(name)
    if t is dict:
        if name in obj:
            return obj[name]
        raise RuneRuntimeError(f"missing field `{name}` in object")
    if (t is tuple or t is list) and type(name) is int:
        if name < len(obj):
            return obj[name]
        raise RuneRuntimeError(f"tuple index {name} out of bounds")
    if (t is Option and name == 0 and obj.is_some) or (t is Result and name == 0):
        return obj.value  # upstream's GET protocol: `Some(v).0`, `Ok(v).0`, `Err(e).0`; `None.0` has none
    if t is RangeValue and name in ("start", "end"):
        return getattr(obj, name)
    raise RuneRuntimeError(f"`{type_name(obj)}` has no field `{name}`")


def set_field(obj: Any, name: Any, value: Any) -> None:
    t = type(obj)
    if t is Instance:
        if type(name) is int:
            obj.values[name] = value
        else:
            obj.set(name, value)
        return
    if t is dict:
        obj[name] = value
        return
    raise RuneRuntimeError(f"cannot assign field `{name}` of `{type_name(obj)}` (tuples are immutable here)")


def cast(v: Any, target: str) -> Any:
    t = type(v)
    if target in ("f64", "f32"):
        if t in (int, float) or t is U64:
            return float(v)
    elif target in ("i64", "u64", "usize", "isize", "i32", "u32", "u8", "i8", "u16", "i16"):
        if target == "u64" or t is U64:
            if target in ("u64", "i64"):
                return cast_integer(v, target)
            v, t = u64_hash_bits(v), int  # the other integer targets: as the i64 with its bits
        if t is float:
            if math.isnan(v):
                return 0
            return max(I64_MIN, min(I64_MAX, int(v))) if math.isfinite(v) else (I64_MAX if v > 0 else I64_MIN)
        if t is int:
            if target == "u8":
                return v & 0xFF
            return v
        if t is Char:
            return ord(v)
        if t is bool:
            return int(v)
    elif target == "char":
        if t is int:
            return Char(chr(v))
        if t is Char:
            return v
    raise RuneRuntimeError(f"cannot cast `{type_name(v)}` to `{target}`")


_TYPE_NAMES = {
    "i64": int,
    "u64": U64,
    "int": int,
    "f64": float,
    "float": float,
    "bool": bool,
    "String": str,
    "char": Char,
    "Vec": list,
    "Tuple": tuple,
    "Object": dict,
    "Option": Option,
    "Result": Result,
    "Function": Function,
    **COLLECTION_TYPES,
}


def is_type(v: Any, name: str, resolve: Callable[[], Any]) -> bool:
    py = _TYPE_NAMES.get(name)
    if name == "Tuple" and v is None:
        return True  # unit is the empty tuple
    if py is not None:
        return type(v) is py or (py is str and type(v) is SharedString)
    t = resolve()
    if type(v) is RangeValue:  # `x is std::ops::RangeInclusive`
        return isinstance(t, TypeInfo) and RANGE_TYPES.get(t.name) is t and is_range_kind(v, t.name)
    if isinstance(t, TypeInfo):
        return type(v) is Instance and (v.type is t or v.type.enum_name == t.name)
    if isinstance(t, Instance):
        return type(v) is Instance and v.type is t.type
    return False


def type_function(t: TypeInfo, name: str) -> Any:
    return None


def static_function(namespace: Any, name: str) -> Any:
    if isinstance(namespace, dict):
        return namespace.get(name)
    return None


def method_as_function(name: str) -> Function:
    """``Vec::sort(v)`` / ``i64::min(a, b)``: a built-in method called through its type path."""
    return Function(name, lambda recv, *args: call_method(recv, name, list(args)))
