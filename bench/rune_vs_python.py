"""Time the same programs in Rune (toolmesh.plugins.rune.lang) and CPython; print the ratio table.

Usage: python bench/rune_vs_python.py [UPSTREAM_RUNE_CHECKOUT]
The upstream benches (crates/rune/benches/*.rn) are read from the checkout when given."""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolmesh.plugins.rune.lang import compile_source
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


PYTHON: dict[str, Callable[[], Any]] = {
    "fib(27)": lambda: fib(27),
    "nested loops": nested,
    "string building": strings,
    "vec/object": vecobj,
    "iterator pipeline": pipeline,
}


def best_of(f: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = f()
        best = min(best, time.perf_counter() - start)
    return best, value


def _bencher() -> Instance:
    t = TypeInfo("Bencher", "unit", [])
    t.methods["iter"] = Function("iter", lambda self, f: f())
    return Instance(t, [])


def upstream_benches(root: Path) -> list[tuple[str, Callable[[], Any], Callable[[], Any] | None]]:
    benches = root / "crates" / "rune" / "benches"
    out = []
    for file, fn, twin in [
        ("primes.rn", "primes", primes),
        ("nbodies.rn", None, None),
        ("bf.rn", None, None),
    ]:
        path = benches / file
        unit = compile_source(path.read_text(), str(path))
        names = [f.name for f in unit.functions.values() if f.attribute("bench")]
        for name in names if fn is None else [fn]:
            out.append(
                (
                    f"{file}:{name}",
                    lambda u=unit, n=name: u.call(n, _bencher(), raw=True, stdout=io.StringIO()),
                    twin,
                )
            )
    return out


def compile_time() -> float:
    body = "\n".join(
        f"fn f{i}(a, b) {{\n    let x = a + b * {i};\n    if x > 10 {{ x - 1 }} else {{ x + 1 }}\n}}"
        for i in range(50)
    )
    assert body.count("\n") + 1 >= 200
    start = time.perf_counter()
    for _ in range(20):
        compile_source(body, "big.rn")
    return (time.perf_counter() - start) / 20


def main() -> None:
    rows = []
    for name, src in RUNE.items():
        unit = compile_source(src, f"{name}.rn")
        rt, rv = best_of(lambda u=unit: u.call("main", budget=10**9, max_depth=10_000))
        pt, pv = best_of(PYTHON[name])
        assert rv == pv, (name, rv, pv)  # both implementations must agree
        rows.append((name, rt, pt))
    if len(sys.argv) > 1 and (Path(sys.argv[1]) / "crates").is_dir():
        for name, run, twin in upstream_benches(Path(sys.argv[1])):
            rt, _ = best_of(run, 1)
            pt = best_of(twin)[0] if twin else None
            rows.append((name, rt, pt))
    else:
        print("upstream checkout not given or not found: skipping crates/rune/benches/*.rn")
    print(f"{'program':32} {'rune ms':>10} {'python ms':>10} {'ratio':>7}")
    for name, rt, pt in rows:
        ratio = f"{rt / pt:7.1f}" if pt else "    n/a"
        pms = f"{pt * 1000:10.1f}" if pt else "       n/a"
        print(f"{name:32} {rt * 1000:10.1f} {pms} {ratio}")
    print(f"compile time, 200-line script: {compile_time() * 1000:.2f} ms")


if __name__ == "__main__":
    main()
