"""The globals of a compiled unit: the runtime helpers its code calls, and nothing else (no
Python builtins beyond the few names the fast paths use)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from . import asyncio_bridge, formatting, output, std_methods
from . import runtime as rt
from .codegen_collections import NOTOPT, NOVAL, raw_option
from .codegen_ops import HELPERS
from .formatting import format_with_options
from .iterators import RuneIterator
from .iterators import _sum as iterator_sum
from .limits import allocate_text, check_length, out_of_budget
from .moves import take
from .shared_string import SharedString, share
from .std_collections import HashMap, HashSet
from .std_float import FLOAT
from .std_types import is_range_kind
from .std_vec_deque import VecDeque
from .values import Bytes, Char, Function, Future, Generator, Instance, Option, RangeValue, Result, Stream


def helpers() -> dict[str, Any]:
    """A fresh namespace for one unit."""
    ns: dict[str, Any] = {
        "__builtins__": {},
        "type": type,
        "len": len,
        "int": int,
        "float": float,
        "str": str,
        "bool": bool,
        "list": list,
        "tuple": tuple,
        "dict": dict,
        "_oob": out_of_budget,
        "_overflow": rt.overflow,
        "next": next,
        "zip": zip,
        "compress": itertools.compress,
        "_neg": rt.op_neg,
        "_not": rt.op_not,
        "_eq": rt.eq,
        "_display": formatting.display,
        "_debug": formatting.debug,
        "_format": formatting.format_string,
        "_format_options": format_with_options,
        "_write": output.write,
        "_panic": rt.panic,
        "_assert_failed": rt.assert_failed,
        "_assert_eq_failed": rt.assert_eq_failed,
        "_dbg": _dbg,
        "_Bytes": Bytes,
        "_Char": Char,
        "_Instance": Instance,
        "_Option": Option,
        "_Result": Result,
        "_Function": Function,
        "_RangeValue": RangeValue,
        "_Future": Future,
        "_Generator": Generator,
        "_Stream": Stream,
        "_new_struct": rt.new_struct,
        "_get_index": std_methods.get_index,
        "_set_index": std_methods.set_index,
        "_get_field": std_methods.get_field,
        "_set_field": std_methods.set_field,
        "_tuple_set": rt.tuple_set,
        "_call_value": std_methods.call_value,
        "_arity": rt.arity,
        "_not_callable": rt.not_callable,
        "_invoke": std_methods.invoke,
        "_push": std_methods.push,
        "_mutate_string": std_methods.mutate_string,
        "_share": share,
        "_SharedString": SharedString,
        "_take": take,
        "_check_length": check_length,
        "_allocate_text": allocate_text,
        "_await": asyncio_bridge.await_value,
        "_cast": std_methods.cast,
        "_is_type": std_methods.is_type,
        "_range": rt.int_range,
        "_iterate": rt.iterate,
        "_bad_condition": rt.bad_condition,
        "_misplaced": rt.misplaced,
        "_try_fail": rt.try_fail,
        "_select_ready": rt.select_ready,
        "_select_take": rt.select_take,
        "_no_match": rt.no_match,
        "_match_value": rt.match_value,
        "_struct_field": rt.struct_field,
        "_is_range_kind": is_range_kind,
        "_f_sqrt": math.sqrt,  # guarded by `x >= 0.0` where it is called inline
        "_f_abs": FLOAT["abs"],
        "_RuneIterator": RuneIterator,
        "_iter_sum": iterator_sum,
        "_HashMap": HashMap,
        "_HashSet": HashSet,
        "_VecDeque": VecDeque,
        "_NOVAL": NOVAL,
        "_NOTOPT": NOTOPT,
        "_raw_option": raw_option,
    }
    for op, name in HELPERS.items():
        ns[name] = rt.BINARY_OPS[op]
    return ns


def _dbg(values: list) -> Any:
    for v in values:
        output.write(formatting.debug(v) + "\n")
    return values[0] if len(values) == 1 else None
