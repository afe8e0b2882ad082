"""The prelude (``Some``, ``Ok``, ``String::new`` ...) and the ``std`` module tree a script may use."""

from __future__ import annotations

from typing import Any

from .iterators import RuneIterator
from .runtime import iterate
from .std_methods import ORDERING
from .std_types import GENERATOR_STATE, RANGE_TYPES
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
    "with_capacity": lambda n: "",
}
VEC_NS = {
    "new": list,
    "with_capacity": lambda n: [],
    "from": lambda v: list(iterate(v)),
}
OBJECT_NS = {"new": dict, "with_capacity": lambda n: {}}
CHAR_NS = {
    "from_i64": lambda i: some(Char(chr(i))) if 0 <= i <= 0x10FFFF else NONE,
    "from_u32": lambda i: some(Char(chr(i))) if 0 <= i <= 0x10FFFF else NONE,
}
I64_NS = {"MAX": 2**63 - 1, "MIN": -(2**63), "parse": lambda s: _parse(s)}
F64_NS = {
    "MAX": 1.7976931348623157e308,
    "MIN": -1.7976931348623157e308,
    "INFINITY": float("inf"),
    "NEG_INFINITY": float("-inf"),
    "NAN": float("nan"),
    "EPSILON": 2.220446049250313e-16,
}
ITER_NS = {
    "empty": lambda: RuneIterator(iter(())),
    "once": lambda v: RuneIterator(iter((v,))),
    "range": lambda a, b: RuneIterator(iter(range(a, b))),
}


def _parse(s: str) -> Result:
    from .std_types import parse_int

    return parse_int(s)


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
    "u64": I64_NS,
    "f64": F64_NS,
    "Option": OPTION_NS,
    "Result": RESULT_NS,
    "Ordering": ORDERING,
    "drop": lambda v: None,
}


_STD_TYPE_NAMES = {
    bool: "::std::bool",
    int: "::std::i64",
    float: "::std::f64",
    Char: "::std::char",
    str: "::std::string::String",
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
    cmp_mod = Module("cmp", {"Ordering": ORDERING})
    iter_mod = Module("iter", dict(ITER_NS))
    string = Module("string", {"String": STRING_NS})
    vec = Module("vec", {"Vec": VEC_NS})
    obj = Module("object", {"Object": OBJECT_NS})
    option = Module("option", {"Option": OPTION_NS, **OPTION_NS})
    result = Module("result", {"Result": RESULT_NS, **RESULT_NS})
    i64 = Module("i64", dict(I64_NS))
    f64 = Module("f64", dict(F64_NS))
    char = Module("char", dict(CHAR_NS))
    return Module(
        "std",
        {
            "cmp": cmp_mod,
            "iter": iter_mod,
            "string": string,
            "vec": vec,
            "object": obj,
            "option": option,
            "result": result,
            "i64": i64,
            "f64": f64,
            "char": char,
            "collections": Module("collections", {}),
            "slice": Module("slice", {"Iter": {}}),  # `Iter::collect(it)`: methods by path
            "any": Module("any", {"type_name_of_val": type_name_of_val}),
            "ops": Module(
                "ops",
                {"generator": Module("generator", {"GeneratorState": GENERATOR_STATE}), **RANGE_TYPES},
            ),
        },
    )


ROOTS: dict[str, Any] = {"std": _std()}
