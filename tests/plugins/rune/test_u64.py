"""``u64`` is a type of its own, with upstream Rune's rules: literals, constants, checked
arithmetic that underflows at zero, the right operand converting to the left one's type,
``==``/``<`` converting while ``std::ops::eq``/``cmp`` refuse to mix, ``as`` wrapping, hashing
like the i64 with the same bits, and a JSON integer on the way out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import toolmesh.plugins.rune as rune_plugin
from toolmesh import Mesh, Settings
from toolmesh.plugins.rune.lang import RuneError, RuneRuntimeError, RuneSyntaxError, compile_source, to_json
from toolmesh.plugins.rune.lang.std_u64 import U64
from toolmesh.plugins.rune.lang.values import NONE, Option, Result
from toolmesh.testing import running_node

U64_MAX = 2**64 - 1
I64_MAX = 2**63 - 1


def u(n: int) -> U64:
    return U64(n)


def run(body: str) -> Any:
    return compile_source(f"fn main() {{ {body} }}", "u64.rn").call("main", raw=True)


def same(value: Any, expected: Any) -> bool:
    """Equal and of the same Rune type (a ``u64`` is never an ``i64``), inside Option/Result/tuples too."""
    if type(value) is not type(expected):
        return False
    if isinstance(expected, Option):
        return value.is_some == expected.is_some and (not expected.is_some or same(value.value, expected.value))
    if isinstance(expected, Result):
        return value.is_ok == expected.is_ok and same(value.value, expected.value)
    if isinstance(expected, (tuple, list)):
        return len(value) == len(expected) and all(same(a, b) for a, b in zip(value, expected))
    return bool(value == expected)


def some(v: Any) -> Option:
    return Option(True, v)


VALUES = [
    # literals and constants
    ("5u64", u(5)),
    ("0xffu64", u(255)),
    ("255u8", u(255)),  # upstream: every unsigned suffix makes a u64
    ("-0u64", u(0)),
    ("18446744073709551615u64", u(U64_MAX)),
    ("u64::MAX", u(U64_MAX)),
    ("u64::MIN", u(0)),
    ("std::u64::MAX - 1", u(U64_MAX - 1)),
    # arithmetic takes the left operand's type
    ("5u64 + 3", u(8)),
    ("3 + 5u64", 8),
    ("5u64 * 4u64", u(20)),
    ("7u64 / 2", u(3)),
    ("7u64 % 4", u(3)),
    ("-7 / 2u64", -3),
    ("u64::MAX - u64::MAX", u(0)),
    ("let x = 5u64; x += 1; x", u(6)),
    ("let x = 5u64; x -= 5; x", u(0)),
    ("let v = [1u64]; v[0] += 2; v[0]", u(3)),
    # bitwise and shifts
    ("!0u64", u(U64_MAX)),
    ("0xf0u64 | 0x0f", u(0xFF)),
    ("0xffu64 & 0x0f", u(0x0F)),
    ("0xffu64 ^ 1", u(0xFE)),
    ("1u64 << 63", u(2**63)),
    ("u64::MAX >> 60", u(15)),
    ("3u64 << 63", u(2**63)),  # bits shifted out are lost, as Rust's `checked_shl`
    ("1 << 3u64", 8),
    # comparisons convert the right operand to the left one's type
    ("5u64 == 5", True),
    ("5u64 != 5", False),
    ("5 == 5u64", True),
    ("u64::MAX > 5", True),
    ("2u64 < 10", True),
    ("5u64 >= 5u64", True),
    ("Some(5u64) == Some(5)", True),
    ("[1u64, 2u64] == [1, 2]", True),
    ("5u64.eq(5)", True),  # the method takes a u64 argument, which converts
    ("std::ops::eq(5u64, 5u64)", True),
    ("std::ops::partial_eq(5u64, 5)", True),
    ("std::ops::partial_cmp(5u64, 10u64) == Some(std::cmp::Ordering::Less)", True),
    ("std::ops::cmp(10u64, 5u64) == std::cmp::Ordering::Greater", True),
    ("let v = [3u64, 1u64, 2u64]; v.sort(); v", [u(1), u(2), u(3)]),
    ("match 5u64 { 5 => 1, 5u64 => 2, _ => 3 }", 2),  # an i64 pattern never matches a u64
    ("match 5 { 5u64 => 1, _ => 2 }", 2),
    ("match 5u64 { 0u64..=9u64 => 1, _ => 2 }", 1),
    ("match b'c' { b'a'..=b'z' => 1, _ => 2 }", 1),
    ("match 0u64 { -0u64 => 1, _ => 2 }", 1),
    ("const M = u64::MAX - 1; M", u(U64_MAX - 1)),
    ("5u64 is u64", True),
    ("5 is u64", False),
    ("5u64 is i64", False),
    # methods
    ("5u64.checked_sub(10)", NONE),
    ("(u64::MIN + 2).checked_sub(1)", some(u(1))),
    ("(u64::MAX - 2).checked_add(3)", NONE),
    ("u64::MAX.checked_mul(2)", NONE),
    ("1u64.checked_div(0)", NONE),
    ("5u64.checked_rem(2)", some(u(1))),
    ("u64::MAX.wrapping_add(2)", u(1)),
    ("0u64.wrapping_sub(1)", u(U64_MAX)),
    ("u64::MAX.wrapping_mul(3)", u(U64_MAX - 2)),
    ("100u64.wrapping_rem(7)", u(2)),
    ("13u64.saturating_sub(127)", u(0)),
    ("u64::MAX.saturating_add(127)", u(U64_MAX)),
    ("u64::MAX.saturating_mul(10)", u(U64_MAX)),
    ("2u64.saturating_pow(64)", u(U64_MAX)),
    ("2u64.pow(64)", u(0)),  # wraps, as upstream's `pow`
    ("3u64.pow(4)", u(81)),
    ("1u64.max(2)", u(2)),
    ("u64::min(7u64, 3)", u(3)),
    ("10u64.to::<f64>()", 10.0),
    ("u64::MAX.to_string()", str(U64_MAX)),
    ("let a = 5u64; let c = a.clone(); a += 1; (a, c)", (u(6), u(5))),
    # parse
    ('u64::parse("18446744073709551615")', Result(True, u(U64_MAX))),
    ('"+7".parse::<u64>()', Result(True, u(7))),
    ('"18446744073709551616".parse::<u64>()', Result(False, "number too large to fit in target type")),
    ('"-1".parse::<u64>()', Result(False, "invalid digit found in string")),
    ('"-0".parse::<u64>()', Result(False, "invalid digit found in string")),
    ('"".parse::<u64>()', Result(False, "cannot parse integer from empty string")),
    # `as`: wrapping between the integers, saturating from floats
    ("-1 as u64", u(U64_MAX)),
    ("u64::MAX as i64", -1),
    ("(1 << 62) as u64 * 2", u(2**63)),
    ("9223372036854775808u64 as i64", -(2**63)),
    ("u64::MAX as f64", 18446744073709551615.0),
    ("-3.5 as u64", u(0)),
    ("3.9 as u64", u(3)),
    ("1e30 as u64", u(U64_MAX)),
    ("(0.0 / 0.0) as u64", u(0)),
    ("5u64 as u64", u(5)),
    ("true as u64", u(1)),
    # display and debug print no suffix, formats take unsigned radixes
    ('format!("{} {:?} {:x} {:#b} {:>4}|", u64::MAX, 5u64, u64::MAX, 5u64, 7u64)',
     f"{U64_MAX} 5 ffffffffffffffff 0b101    7|"),
    ("`${u64::MAX}`", str(U64_MAX)),
    # ranges: an i64 start converts a u64 end
    ("let s = 0; for i in 0..3u64 { s += i; } s", 3),
    ("let s = 0u64; for i in 0u64..4 { s += i * 2; } s", u(12)),
    ("let a = 3; let v = []; for i in (a as u64)..=4 { v.push(i); } v", [u(3), u(4)]),
    ("(0u64..3).iter().collect::<Vec>()", [u(0), u(1), u(2)]),
    ("(0..3u64).iter().collect::<Vec>()", [0, 1, 2]),
    ("(5u64..).iter().take(2).collect::<Vec>()", [u(5), u(6)]),
    ("let r = 1u64..=3; let s = 0u64; for x in r { s += x; } s", u(6)),
    ("(0u64..4).iter().map(|x| x * 2).sum::<u64>()", u(12)),
    ("(0..).iter().size_hint()", (u(U64_MAX), NONE)),
    ("[1, 2].iter().size_hint() == (2, Some(2))", True),
    ('String::from_utf8(Bytes::from_vec([240u8, 159u8, 146u8, 150u8])).unwrap() == "\\u{1f496}"', True),
    # bytes are u64 values, and a u64 indexes a vector
    ("b'a'", u(97)),
    ("b\"ab\"[1]", u(98)),
    ("Bytes::from_vec([1, 2]).into_vec()", [u(1), u(2)]),
    ("let n = 0; for b in b\"ab\" { match b { b'a' => n += 1, _ => n += 10 } } n", 11),
    ("[10, 20, 30][2u64]", 30),
    ("let v = [1, 2, 3]; v[1u64 + 1] = 9; v", [1, 2, 9]),
    ("std::any::type_name_of_val(5u64)", "::std::u64"),
    # hashing: as the i64 with the same bits; distinct keys otherwise
    ("std::ops::hash(5u64) == std::ops::hash(5)", True),
    ("let m = std::collections::HashMap::new(); m.insert(5u64, 1); m.insert(6, 2); m.get(5u64)", some(1)),
    ("let m = std::collections::HashMap::new(); m.insert(5u64, 1); m.get(5u64 + 0)", some(1)),
    ("let s = std::collections::HashSet::new(); s.insert([1u64, 2u64]); s.contains([1u64, 2u64])", True),
    ("let m = std::collections::HashMap::new(); m.insert(7u64, 0); let k = []; for (key, _) in m { k.push(key); } k",
     [u(7)]),
]


@pytest.mark.parametrize(("body", "expected"), VALUES, ids=[v[0] for v in VALUES])
def test_u64_values(body: str, expected: Any) -> None:
    value = run(body)
    assert same(value, expected), (value, type(value).__name__)


ERRORS = [
    ("0u64 - 1", RuneRuntimeError, "integer underflow in `-` on `u64`"),
    ("u64::MAX + 1", RuneRuntimeError, "integer overflow in `+` on `u64`"),
    ("let x = u64::MAX; x += 1; x", RuneRuntimeError, "integer overflow in `+` on `u64`"),
    ("let x = 0u64; x -= 1; x", RuneRuntimeError, "integer underflow in `-` on `u64`"),
    ("(1u64 << 63) * 2", RuneRuntimeError, "integer overflow in `*` on `u64`"),
    ("1u64 / 0", RuneRuntimeError, "division by zero"),
    ("1u64 % 0", RuneRuntimeError, "division by zero"),
    ("5u64.wrapping_div(0)", RuneRuntimeError, "division by zero"),
    ("1u64 << 64", RuneRuntimeError, "integer overflow in `<<` on `u64`"),
    ("1u64 >> 64", RuneRuntimeError, "integer underflow in `>>` on `u64`"),
    ("1u64 << -1", RuneRuntimeError, "failed to convert value `-1` to integer `u64`"),
    # a right operand that does not fit the left one's type
    ("5u64 + -1", RuneRuntimeError, "failed to convert value `-1` to integer `u64`"),
    ("1 + u64::MAX", RuneRuntimeError, "failed to convert value `18446744073709551615` to integer `i64`"),
    ("5u64 == -1", RuneRuntimeError, "failed to convert value `-1` to integer `u64`"),
    ("0 < u64::MAX", RuneRuntimeError, "to integer `i64`"),
    ("5u64.checked_add(-1)", RuneRuntimeError, "failed to convert value `-1` to integer `u64`"),
    ("2u64.pow(1.5)", RuneRuntimeError, "`u64::pow` takes an integer argument, not `f64`"),
    ("2u64.pow(4294967296)", RuneRuntimeError, "to integer `u32`"),
    ("u64::MIN == -9223372036854775808", RuneRuntimeError, "to integer `u64`"),  # upstream's doc example
    # no mixing with floats or other types
    ("5u64 + 1.0", RuneRuntimeError, "unsupported operation `u64 + f64`"),
    ("1.0 * 5u64", RuneRuntimeError, "unsupported operation `f64 * u64`"),
    ('5u64 + "a"', RuneRuntimeError, "unsupported operation `u64 + String`"),
    ("5u64 == 5.0", RuneRuntimeError, "cannot compare `u64` with `f64`"),
    ("let x = 5u64; -x", RuneRuntimeError, "unsupported operation `-u64`"),
    # total equality and order never mix u64 and i64
    ("std::ops::eq(5u64, 5)", RuneRuntimeError, "unsupported binary operation `eq` on `u64` and `i64`"),
    ("std::ops::cmp(5, 5u64)", RuneRuntimeError, "unsupported binary operation `cmp` on `i64` and `u64`"),
    # keys with the same bits hash alike, and their total equality fails, as upstream
    ("let m = std::collections::HashMap::new(); m.insert(5u64, 1); m.insert(5, 2)", RuneRuntimeError,
     "unsupported binary operation `eq` on `u64` and `i64`"),
    ("let m = std::collections::HashMap::new(); m.insert(-1, 1); m.get(u64::MAX)", RuneRuntimeError,
     "the keys 18446744073709551615u64 and -1 hash alike"),
    ("let s = std::collections::HashSet::new(); s.insert((1, 2)); s.contains((1u64, 2))", RuneRuntimeError,
     "hash alike"),
    # literals out of range are compile errors
    ("-5u64", RuneSyntaxError, "Unsigned number literal out of bounds `0` to `18446744073709551615`"),
    ("18446744073709551616u64", RuneSyntaxError, "out of bounds `0` to `18446744073709551615`"),
    ("256u8", RuneSyntaxError, "Unsigned number literal out of bounds `0` to `255`"),
    ("match 5u64 { -5u64 => 1, _ => 2 }", RuneSyntaxError, "Unsigned number literal out of bounds"),
    ("u64::BITS", RuneError, "missing item `u64::BITS`"),  # not in upstream's std::u64 at 54fe7cb8
    ('"a" as u64', RuneRuntimeError, "cannot cast `String` to `u64`"),
    ("let a = 2u64; for i in a..3 { }", RuneRuntimeError, "cannot iterate a range starting at the u64 `2`"),
    ("(0u64..-1).iter().count()", RuneRuntimeError, "failed to convert value `-1` to integer `u64`"),
]


@pytest.mark.parametrize(("body", "error", "fragment"), ERRORS, ids=[e[0] for e in ERRORS])
def test_u64_errors(body: str, error: type[RuneError], fragment: str) -> None:
    with pytest.raises(error) as caught:
        run(body)
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    ("source", "args", "expected"),
    [
        # inferred-int code never takes a u64 for an i64: `a + 1` has the type of `a`
        ("fn f(a) { let t = a + 1; t * 2 }", [u(5)], u(12)),
        ("fn f(a) { let t = a + 1; t * 2 }", [5], 12),
        ("fn f(a) { let s = 0; for i in 0..3 { s += a - 1; } s }", [u(4)], 9),
        ("fn f(a) { let s = a; for i in 0..3 { s = s * 2; } s }", [u(2**60)], u(2**63)),  # past i64::MAX
        ("fn f(n) { if n < 2 { n } else { f(n - 1) + f(n - 2) } }", [u(10)], u(55)),
        ("fn f(n) { if n < 2 { n } else { f(n - 1) + f(n - 2) } }", [10], 55),
        ("fn f(x) { (x as u64) - 1 }", [1], u(0)),
        ("fn f(x) { let y = x as u64; y + y }", [-1], "overflow"),
        ("fn f(n) { let s = 0u64; for i in 0..n { s += i; } s }", [4], u(6)),
    ],
)
def test_u64_through_specialised_code(source: str, args: list[Any], expected: Any) -> None:
    unit = compile_source(source, "f.rn")
    if expected == "overflow":
        with pytest.raises(RuneRuntimeError, match="integer overflow in `\\+` on `u64`"):
            unit.call("f", *args, raw=True)
        return
    assert same(unit.call("f", *args, raw=True), expected)


def test_a_u64_leaves_a_script_as_a_json_integer() -> None:
    data = to_json(run("#{max: u64::MAX, list: [1u64, 2], pair: (0u64, -1)}"))
    assert json.dumps(data) == f'{{"max": {U64_MAX}, "list": [1, 2], "pair": [0, -1]}}'
    assert type(data["max"]) is int  # a plain integer outside the script


TOOLS = """
#[param(name = "n", type = "integer", desc = "n")]
#[tool(desc = "unsigned arithmetic")]
pub fn unsigned(n) { #{max: u64::MAX, wrapped: (n as u64).wrapping_sub(1), left: u64::MAX - (n as u64)} }

#[param(name = "n", type = "integer", desc = "n")]
#[tool(desc = "underflows for n > 1")]
pub fn underflow(n) { 1u64 - (n as u64) }
"""


@pytest.mark.anyio
@pytest.mark.usefixtures("no_blocking_calls")
async def test_u64_results_and_errors_over_a_real_node(toolmesh_settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "unsigned.rn").write_text(TOOLS)
    node = running_node(
        toolmesh_settings, sources=[str(tmp_path)], plugins=[rune_plugin], load_entrypoints=False
    )
    async with node, Mesh(settings=toolmesh_settings) as mesh:
        ok = await mesh.call("rune_unsigned", {"n": 0})
        assert ok.error is None, ok
        assert ok.structured_content == {"max": U64_MAX, "wrapped": U64_MAX, "left": U64_MAX}
        assert str(U64_MAX) in ok.content[0].text
        failed = await mesh.call("rune_underflow", {"n": 2})
        assert failed.error is not None and failed.error.code == "execution_failed"
        assert "integer underflow in `-` on `u64`" in failed.error.message
        again = await mesh.call("rune_unsigned", {"n": 5})  # the node still answers
        assert again.structured_content == {"max": U64_MAX, "wrapped": 4, "left": U64_MAX - 5}
