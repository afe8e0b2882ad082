"""Time the same programs in Rune (toolmesh.plugins.rune.lang) and CPython; print the ratio table.

Usage: python bench/rune_vs_python.py [UPSTREAM_RUNE_CHECKOUT]
The upstream benches (crates/rune/benches/*.rn) are read from the checkout when given. Each
program and its twin run alternately, ``ROUNDS`` times, and the best time of each is kept."""

from __future__ import annotations

import io
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rune_collection_programs import PYTHON as COLLECTION_PYTHON  # beside this file
from rune_collection_programs import RUNE as COLLECTION_RUNE
from toolmesh.plugins.rune.lang import RuneError, compile_source
from toolmesh.plugins.rune.lang.values import Function, Instance, TypeInfo

RUNE = {
    "fib(27)": "fn fib(n) { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } } fn main() { fib(27) }",
    "nested loops": """fn main() { let s = 0; for i in 0..300 { for j in 0..300 { s += (i * j) % 7; } } s }""",
    "string building": """fn main() { let s = String::new(); for i in 0..20000 { s.push_str(`${i},`); } s.len() }""",
    "vec/object": """fn main() {
        let v = []; let o = #{};
        for i in 0..20000 { v.push(i * 2); o[`k${i % 100}`] = i; }
        let t = 0; for x in v { t += x; } t + o.len() }""",
    "iterator pipeline": """fn main() {
        let k = 3;
        (0..50000).iter().map(|x| x * k).filter(|x| x % 2 == 0).map(|x| x + 1).sum() }""",
}


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def nested() -> int:
    s = 0
    for i in range(300):
        for j in range(300):
            s += (i * j) % 7
    return s


def strings() -> int:
    s = ""
    for i in range(20000):
        s += f"{i},"
    return len(s)


def vecobj() -> int:
    v: list[int] = []
    o: dict[str, int] = {}
    for i in range(20000):
        v.append(i * 2)
        o[f"k{i % 100}"] = i
    return sum(v) + len(o)


def pipeline() -> int:
    k = 3
    return sum(x + 1 for x in (x * k for x in range(50000)) if x % 2 == 0)


def primes() -> int:
    limit = 10_000
    mask = [True] * limit
    mask[0] = mask[1] = False
    total = 0
    for p in range(2, limit):
        if mask[p]:
            total += 1
            i = 2 * p
            while i < limit:
                mask[i] = False
                i += p
    return total


PI = 3.141592653589793
SOLAR_MASS = 4.0 * PI * PI
DAYS_PER_YEAR = 365.24


def _bodies() -> list[dict[str, float]]:
    def body(x: float, y: float, z: float, vx: float, vy: float, vz: float, mass: float) -> dict[str, float]:
        d = DAYS_PER_YEAR
        return {"x": x, "y": y, "z": z, "vx": vx * d, "vy": vy * d, "vz": vz * d, "mass": mass * SOLAR_MASS}

    return [
        {"x": 0.0, "y": 0.0, "z": 0.0, "vx": 0.0, "vy": 0.0, "vz": 0.0, "mass": SOLAR_MASS},
        body(4.84143144246472090e00, -1.16032004402742839e00, -1.03622044471123109e-01,
             1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
             9.54791938424326609e-04),
        body(8.34336671824457987e00, 4.12479856412430479e00, -4.03523417114321381e-01,
             -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
             2.85885980666130812e-04),
        body(1.28943695621391310e01, -1.51111514016986312e01, -2.23307578892655734e-01,
             2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
             4.36624404335156298e-05),
        body(1.53796971148509165e01, -2.59193146099879641e01, 1.79258772950371181e-01,
             2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
             5.15138902046611451e-05),
    ]  # fmt: skip


def _advance(bodies: list[dict[str, float]], dt: float) -> None:
    for i in range(len(bodies)):
        bi = bodies[i]
        bix, biy, biz, bimass = bi["x"], bi["y"], bi["z"], bi["mass"]
        bivx, bivy, bivz = bi["vx"], bi["vy"], bi["vz"]
        for j in range(i + 1, len(bodies)):
            bj = bodies[j]
            dx, dy, dz = bix - bj["x"], biy - bj["y"], biz - bj["z"]
            mag = math.sqrt(dx * dx + dy * dy + dz * dz)
            mag = dt / (mag * mag * mag)
            bm = bj["mass"] * mag
            bivx -= dx * bm
            bivy -= dy * bm
            bivz -= dz * bm
            bm = bimass * mag
            bj["vx"] += dx * bm
            bj["vy"] += dy * bm
            bj["vz"] += dz * bm
        bi["vx"], bi["vy"], bi["vz"] = bivx, bivy, bivz
        bi["x"] = bix + dt * bivx
        bi["y"] = biy + dt * bivy
        bi["z"] = biz + dt * bivz


def _energy(bodies: list[dict[str, float]]) -> float:
    e = 0.0
    for i in range(len(bodies)):
        bi = bodies[i]
        vx, vy, vz, bim = bi["vx"], bi["vy"], bi["vz"], bi["mass"]
        e += 0.5 * bim * (vx * vx + vy * vy + vz * vz)
        for j in range(i + 1, len(bodies)):
            bj = bodies[j]
            dx, dy, dz = bi["x"] - bj["x"], bi["y"] - bj["y"], bi["z"] - bj["z"]
            e -= (bim * bj["mass"]) / math.sqrt(dx * dx + dy * dy + dz * dz)
    return e


def nbodies() -> float:
    bodies = _bodies()
    px = sum(b["vx"] * b["mass"] for b in bodies)
    py = sum(b["vy"] * b["mass"] for b in bodies)
    pz = sum(b["vz"] * b["mass"] for b in bodies)
    bodies[0]["vx"], bodies[0]["vy"], bodies[0]["vz"] = -px / SOLAR_MASS, -py / SOLAR_MASS, -pz / SOLAR_MASS
    for _ in range(20000):
        _advance(bodies, 0.01)
    return _energy(bodies)


@dataclass(slots=True)
class _Inc:
    v: int


@dataclass(slots=True)
class _Move:
    v: int


@dataclass(slots=True)
class _Loop:
    ops: list[Any]


class _Print:
    pass


class _Input:
    pass


class _Tape:
    __slots__ = ("pos", "tape")

    def __init__(self) -> None:
        self.pos = 0
        self.tape = [0]

    def get(self) -> int:
        return self.tape[self.pos]

    def inc(self, x: int) -> None:
        self.tape[self.pos] = (self.tape[self.pos] + x) % 256

    def mov(self, x: int) -> None:
        self.pos += x
        while self.pos >= len(self.tape):
            self.tape.append(0)

    def set(self, v: int) -> None:
        self.tape[self.pos] = v


def _bf_run(program: list[Any], tape: _Tape, out: io.StringIO) -> None:
    for op in program:
        match op:
            case _Inc(x):
                tape.inc(x)
            case _Move(x):
                tape.mov(x)
            case _Loop(body):
                while tape.get() != 0:
                    _bf_run(body, tape, out)
            case _Print():
                out.write(chr(tape.get()))
            case _Input():
                tape.set(0)


def _bf_parse(it: Any) -> list[Any]:
    ops: list[Any] = []
    for c in it:
        match c:
            case "+":
                op: Any = _Inc(1)
            case "-":
                op = _Inc(-1)
            case ">":
                op = _Move(1)
            case "<":
                op = _Move(-1)
            case ".":
                op = _Print()
            case "[":
                op = _Loop(_bf_parse(it))
            case ",":
                op = _Input()
            case "]":
                break
            case _:
                continue
        ops.append(op)
    return ops


HELLO_BF = "++++++++[>++++[>++>+++>+++>+<<<<-]>+>+>->>+[<]<-]>>.>---.+++++++..+++.>>.<-.<.+++.------.--------.>>+.>++."


def bf_hello_world() -> str:
    """The twin of bf.rn: the enum's variants are classes matched by class patterns, the Tape
    a class with methods; parser and interpreter are recursive, as in the Rune program."""
    out = io.StringIO()
    _bf_run(_bf_parse(iter(HELLO_BF)), _Tape(), out)
    return out.getvalue()


PYTHON: dict[str, Callable[[], Any]] = {
    "fib(27)": lambda: fib(27),
    "nested loops": nested,
    "string building": strings,
    "vec/object": vecobj,
    "iterator pipeline": pipeline,
}
RUNE.update(COLLECTION_RUNE)
PYTHON.update(COLLECTION_PYTHON)


# Rune semantics the fast paths must keep, checked in the same run as the timings: each
# program must fail with the given message fragment.
SEMANTICS = [
    ("fn main() { let x = 9223372036854775807; x + 1 }", "integer overflow"),
    ("fn f(n) { if n < 2 { n } else { n * 2 } } fn main() { f(9223372036854775807) }", "integer overflow"),
    ("fn main() { let s = 0; for i in 0..3 { s += i * 4611686018427387904; } s }", "integer overflow"),
    ("fn main() { 1 + 1.0 }", "`i64 + f64`"),
    ("fn main() { let a = 2.0; let b = 1; a * b }", "`f64 * i64`"),
    ("fn main() { 1 == 1.0 }", "cannot compare"),
    ('fn main() { 1 < "a" }', "cannot compare"),
    ("fn main() { loop {} }", "timeout"),
    ("fn f(n) { f(n + 1) } fn main() { f(0) }", "recursion limit"),
]


def check_semantics() -> None:
    for src, fragment in SEMANTICS:
        unit = compile_source(src, "semantics.rn")
        unit.compile_all()
        try:
            unit.call("main", budget=100_000)
        except RuneError as err:
            assert fragment in str(err), (src, str(err))
        else:
            raise AssertionError(f"no error: {src}")
    assert compile_source("fn main() { [1, (2, 3)] == [1, (2, 3)] }").call("main") is True
    print(f"semantics: {len(SEMANTICS) + 1} checks passed (overflow, int/float mixing, equality, limits)")


def best_of(f: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = f()
        best = min(best, time.perf_counter() - start)
    return best, value


ROUNDS = 5
"""Rounds of a program and its twin, run alternately: the best of each is kept. On a shared
machine a burst of other load then slows both sides of a round, not one side of the table."""


def paired(rune: Callable[[], Any], twin: Callable[[], Any]) -> tuple[float, Any, float, Any]:
    """Best times (and last values) of ``rune`` and ``twin`` over ``ROUNDS`` alternating rounds."""
    rt = pt = float("inf")
    rv = pv = None
    for _ in range(ROUNDS):
        t, rv = best_of(rune, 1)
        rt = min(rt, t)
        t, pv = best_of(twin, 1)
        pt = min(pt, t)
    return rt, rv, pt, pv


def _bencher() -> Instance:
    t = TypeInfo("Bencher", "unit", [])
    t.methods["iter"] = Function("iter", lambda self, f: f())
    return Instance(t, [])


def upstream_benches(root: Path) -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    """The ``#[bench]`` functions of crates/rune/benches, each run with a bencher that calls its
    closure once and returning what it printed, beside its CPython twin."""
    benches = root / "crates" / "rune" / "benches"
    out = []
    for file, fn, twin in [
        ("primes.rn", "primes", primes),
        ("nbodies.rn", "nbodies", nbodies),
        ("bf.rn", "bf_hello_world", bf_hello_world),
    ]:
        path = benches / file
        unit = compile_source(path.read_text(), str(path))
        unit.compile_all()  # code generation is timed by compile_time(), not by the runs

        def run(u: Any = unit, name: str = fn) -> str:
            printed = io.StringIO()
            u.call(name, _bencher(), raw=True, stdout=printed)
            return printed.getvalue()

        out.append((f"{file}:{fn}", run, twin))
    return out


def compile_time(full: bool) -> float:
    """Best of 20: ``compile_source`` of a 200-line script (functions are generated at their
    first call), or with ``compile_all`` (every function generated and compiled)."""
    body = "\n".join(
        f"fn f{i}(a, b) {{\n    let x = a + b * {i};\n    if x > 10 {{ x - 1 }} else {{ x + 1 }}\n}}"
        for i in range(50)
    )
    assert body.count("\n") + 1 >= 200
    best = float("inf")
    for _ in range(20):
        start = time.perf_counter()
        unit = compile_source(body, "big.rn")
        if full:
            unit.compile_all()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    check_semantics()
    rows = []
    for name, src in RUNE.items():
        try:
            unit = compile_source(src, f"{name}.rn")
            unit.compile_all()
            unit.call("main", budget=10**9, max_depth=10_000)
        except RuneError as err:  # an older tree without the feature the program needs
            print(f"{name}: not runnable here ({str(err).splitlines()[0]})")
            continue
        rt, rv, pt, pv = paired(lambda u=unit: u.call("main", budget=10**9, max_depth=10_000), PYTHON[name])
        assert rv == pv, (name, rv, pv)  # both implementations must agree
        rows.append((name, rt, pt))
    if len(sys.argv) > 1 and (Path(sys.argv[1]) / "crates").is_dir():
        for name, run, twin in upstream_benches(Path(sys.argv[1])):
            rt, printed, pt, pv = paired(run, twin)
            assert not isinstance(pv, str) or printed == pv, (name, printed, pv)  # bf prints
            rows.append((name, rt, pt))
    else:
        print("upstream checkout not given or not found: skipping crates/rune/benches/*.rn")
    print(f"{'program':32} {'rune ms':>10} {'python ms':>10} {'ratio':>7}")
    for name, rt, pt in rows:
        print(f"{name:32} {rt * 1000:10.1f} {pt * 1000:10.1f} {rt / pt:7.1f}")
    print(f"compile time, 200-line script: {compile_time(False) * 1000:.2f} ms")
    print(f"  with every function generated (compile_all): {compile_time(True) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
