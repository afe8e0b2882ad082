"""The prelude (``Some``, ``Ok``, ``String::new`` ...) and the ``std`` module tree a script may use."""

from __future__ import annotations

from typing import Any

from . import moves, vec_capacity
from .iterators import RuneIterator
from .runtime import iterate
from .shared_string import SharedString, string_with_capacity
from .std_any import TYPE_NS
from .std_bytes import BYTES_NS, string_from_utf8
from .std_core import CONTROL_FLOW, char_from_i64, std_panic
from .std_io import IO_FUNCTIONS, clone_value, join
from .std_methods import ORDERING
from .std_numbers import F64_CONSTS, F64_EXTRA, parse_float, parse_int
from .std_ops import CMP_FUNCTIONS, OPS_FUNCTIONS
from .std_types import GENERATOR_STATE, RANGE_TYPES
from .std_u64 import U64, U64_NS
from .std_vec_deque import collections_module
from .values import NONE, Char, Module, Option, Result, some

_out: list = []


def _err(v: Any) -> Result:
    return Result(False, v)


def _ok(v: Any) -> Result:
    return Result(True, v)


STRING_NS = {
    "new": lambda: "",
    "from": lambda s: str(s),
    "from_str": lambda s: str(s),
    "with_capacity": string_with_capacity,
    "from_utf8": string_from_utf8,
}
VEC_NS = {
    "new": list,
    "with_capacity": vec_capacity.with_capacity,
    "from": lambda v: list(iterate(v)),
}
OBJECT_NS: dict[str, Any] = {"new": dict, "with_capacity": lambda n: {}}
CHAR_NS = {
    "from_i64": char_from_i64,
    "from_u32": lambda i: some(Char(chr(i))) if 0 <= i <= 0x10FFFF else NONE,
}
I64_NS = {"MAX": 2**63 - 1, "MIN": -(2**63), "parse": parse_int}
F64_NS = {
    "MAX": 1.7976931348623157e308,
    "MIN": -1.7976931348623157e308,
    "INFINITY": float("inf"),
    "NEG_INFINITY": float("-inf"),
    "NAN": float("nan"),
    "EPSILON": 2.220446049250313e-16,
    # Rust's f64 exponent limits (i32 there, i64 here)
    "MIN_EXP": -1021,
    "MAX_EXP": 1024,
    "MIN_10_EXP": -307,
    "MAX_10_EXP": 308,
    "parse": parse_float,
    **F64_EXTRA,
}
ITER_NS = {
    "empty": lambda: RuneIterator(iter(())),
    "once": lambda v: RuneIterator(iter((v,))),
    "range": lambda a, b: RuneIterator(iter(range(a, b))),
}


OPTION_NS = {"Some": some, "None": NONE}
RESULT_NS = {"Ok": _ok, "Err": _err}

PRELUDE: dict[str, Any] = {
    "Some": some,
    "None": NONE,
    "Ok": _ok,
    "Err": _err,
    "String": STRING_NS,
    "Vec": VEC_NS,
    "Object": OBJECT_NS,
    "char": CHAR_NS,
    "i64": I64_NS,
    "u64": U64_NS,
    "f64": F64_NS,
    "Option": OPTION_NS,
    "Result": RESULT_NS,
    "Ordering": ORDERING,
    "drop": moves.drop,
    "is_readable": moves.is_readable,
    "is_writable": moves.is_writable,
    "Bytes": BYTES_NS,
    **IO_FUNCTIONS,
    "clone": clone_value,
    "panic": std_panic,
    "Type": TYPE_NS,
}


_STD_TYPE_NAMES = {
    bool: "::std::bool",
    int: "::std::i64",
    U64: "::std::u64",
    float: "::std::f64",
    Char: "::std::char",
    str: "::std::string::String",
    SharedString: "::std::string::String",
    Option: "::std::option::Option",
    Result: "::std::result::Result",
    list: "::std::vec::Vec",
    tuple: "::std::tuple::Tuple",
    dict: "::std::object::Object",
}


def type_name_of_val(v: Any) -> str:
    """Rune's ``std::any::type_name_of_val``."""
    from .values import Function, Instance

    if type(v) is Instance:
        return v.type.enum_name or v.type.name
    if type(v) is Function or callable(v):
        return "::std::ops::Function"
    return _STD_TYPE_NAMES.get(type(v), "::std::tuple::Tuple" if v is None else type(v).__name__)


def _std() -> Module:
    cmp_mod = Module("cmp", {"Ordering": ORDERING, **CMP_FUNCTIONS})
    iter_mod = Module("iter", dict(ITER_NS))
    string = Module("string", {"String": STRING_NS})
    vec = Module("vec", {"Vec": VEC_NS})
    obj = Module("object", {"Object": OBJECT_NS})
    option = Module("option", {"Option": OPTION_NS, **OPTION_NS})
    result = Module("result", {"Result": RESULT_NS, **RESULT_NS})
    i64 = Module("i64", dict(I64_NS))
    f64 = Module("f64", {**F64_NS, "consts": Module("consts", dict(F64_CONSTS))})
    char = Module("char", dict(CHAR_NS))
    return Module(
        "std",
        {
            "panic": std_panic,
            "cmp": cmp_mod,
            "iter": iter_mod,
            "string": string,
            "vec": vec,
            "object": obj,
            "option": option,
            "result": result,
            "i64": i64,
            "u64": Module("u64", dict(U64_NS)),
            "f64": f64,
            "char": char,
            "collections": collections_module(),
            "slice": Module("slice", {"Iter": {}}),  # `Iter::collect(it)`: methods by path
            "any": Module("any", {"type_name_of_val": type_name_of_val, "Type": TYPE_NS}),
            "bytes": Module("bytes", {"Bytes": BYTES_NS}),
            "io": Module("io", dict(IO_FUNCTIONS)),
            "future": Module("future", {"join": join}),
            "clone": Module("clone", {"clone": clone_value}),
            "mem": Module("mem", {"drop": moves.drop, "snapshot": moves.snapshot, "Snapshot": {}}),
            "ops": Module(
                "ops",
                {
                    "generator": Module("generator", {"GeneratorState": GENERATOR_STATE}),
                    "ControlFlow": CONTROL_FLOW,
                    **RANGE_TYPES,
                    **OPS_FUNCTIONS,
                },
            ),
        },
    )


ROOTS: dict[str, Any] = {"std": _std()}


_NAMESPACE_TYPES: dict[int, type] = {
    id(STRING_NS): str,
    id(VEC_NS): list,
    id(OBJECT_NS): dict,
    id(CHAR_NS): Char,
    id(I64_NS): int,
    id(U64_NS): U64,
    id(F64_NS): float,
    id(OPTION_NS): Option,
    id(RESULT_NS): Result,
}
_MODULE_TYPES: dict[str, type] = {
    "string": str, "vec": list, "object": dict, "char": Char, "i64": int, "u64": U64, "f64": float,
    "option": Option, "result": Result,
}


def has_builtin_method(namespace: Any, name: str) -> bool:
    """Whether ``Type::name`` names a method of a built-in type (``i64::max``, ``Vec::sort``)."""
    from .iterators import ADAPTORS, CONSUMERS
    from .std_ops import COMPARISON_METHODS
    from .std_types import METHODS

    if isinstance(namespace, dict):
        t = _NAMESPACE_TYPES.get(id(namespace))
    else:
        t = _MODULE_TYPES.get(getattr(namespace, "name", ""))
    if t is None:
        return True
    return (
        name in METHODS.get(t, {})
        or name in COMPARISON_METHODS
        or name in ("to_string", "clone")
        or (t in (str, list, dict) and (name in ADAPTORS or name in CONSUMERS))
    )


def _std_namespaces() -> set[int]:
    found: set[int] = {id(ns) for ns in PRELUDE.values() if isinstance(ns, dict) and id(ns) in _NAMESPACE_TYPES}
    stack = [ROOTS["std"]]
    while stack:
        module = stack.pop()
        found.add(id(module))
        stack.extend(v for v in module.items.values() if isinstance(v, Module) and id(v) not in found)
    return found


def is_std_namespace(v: Any) -> bool:
    """Whether ``v`` is a module of ``std`` or a built-in type's namespace (``i64``, ``String``):
    their items are all known when a script compiles, so a missing one is a compile error."""
    global _STD_NAMESPACES
    if _STD_NAMESPACES is None:
        _STD_NAMESPACES = _std_namespaces()
    return id(v) in _STD_NAMESPACES


_STD_NAMESPACES: set[int] | None = None
