"""Struct fields and methods on their inline paths (`self.x` in a method, a method called on
an instance, tuple-variant patterns) behave as through the runtime helpers."""

from __future__ import annotations

import pytest
from toolmesh.plugins.rune.lang import RuneBudgetExceeded, RuneRuntimeError, compile_source

TAPE = """
struct Tape { pos, tape }
impl Tape {
    fn new() { Tape { pos: 0, tape: [0] } }
    fn get(self) { self.tape[self.pos] }
    fn inc(self, x) { self.tape[self.pos] = (self.tape[self.pos] + x) % 256; }
    fn mov(self, x) { self.pos += x; while self.pos >= self.tape.len() { self.tape.push(0); } }
    fn missing(self) { self.nope }
}
struct Other { pos, tape }
impl Other { fn get(self) { self.tape[self.pos] + 100 } }
enum Op { Inc(v), Pair(a, b), Stop }
"""


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "let t = Tape::new(); t.inc(5); t.mov(2); t.inc(-1); [t.pos, t.tape]",
            [2, [5, 0, -1]],
        ),  # Rune's % truncates
        ("let t = Tape::new(); t.inc(3); t.get()", 3),
        # `self` of another type or an object: the checked path reads the same fields.
        ("Tape::get(Other { pos: 1, tape: [7, 8] })", 8),
        ("Tape::get(#{pos: 0, tape: [9]})", 9),
        ("let o = Other { pos: 0, tape: [1] }; o.get()", 101),  # the method of `Other`
        ("let v = [1, 2].iter().map(|x| x * 2).collect::<Vec>(); v.len()", 2),  # a std method
        ("match Op::Inc(4) { Op::Pair(a, b) => a + b, Op::Inc(v) => v, _ => 0 }", 4),
        ("match Op::Pair(1, 2) { Op::Inc(v) => v, Op::Pair(a, ..) => a, _ => 0 }", 1),
        ("match Op::Stop { Op::Inc(v) => v, Op::Stop => -1, _ => 0 }", -1),
    ],
)
def test_struct_paths(body: str, expected: object) -> None:
    assert compile_source(TAPE + f"fn main() {{ {body} }}", "s.rn").call("main") == expected


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("Tape::new().missing()", "has no field `nope`"),
        ("let t = Tape::new(); t.pos = -1; t.get()", "index"),
        ("let t = Tape::new(); t.pos = 4; t.get()", "index"),
        ("let t = Tape::new(); t.tape = #{}; t.get()", "missing key 0"),
        ("Tape::get(5)", "has no field"),
        ("let t = Tape::new(); t.nothing()", "missing method `nothing`"),
        ("let t = Tape::new(); t.inc(2.5)", "`i64 + f64`"),
    ],
)
def test_struct_errors(body: str, fragment: str) -> None:
    with pytest.raises(RuneRuntimeError) as info:
        compile_source(TAPE + f"fn main() {{ {body} }}", "s.rn").call("main")
    assert fragment in info.value.message


def test_methods_called_from_rune_loops_still_spend_the_budget() -> None:
    unit = compile_source(TAPE + "fn main() { let t = Tape::new(); loop { t.get(); } }", "s.rn")
    with pytest.raises(RuneBudgetExceeded):
        unit.call("main", budget=10_000)
