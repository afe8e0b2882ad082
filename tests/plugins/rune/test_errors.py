"""Runtime errors carry Rune positions, names of the offending thing and a Rune stack trace."""

import pytest
from toolmesh.plugins.rune.lang import RuneCompileError, RunePanic, RuneRuntimeError, compile_source

ERRORS = [
    (
        "overflow",
        "fn main() {\n  let x = 9223372036854775807;\n  x + 1\n}",
        RuneRuntimeError,
        "integer overflow in `+`",
        3,
        5,
    ),
    (
        "mul overflow",
        "fn main() { (-9223372036854775807 - 1) * -1 }",
        RuneRuntimeError,
        "integer overflow in `*`",
        1,
        40,
    ),
    ("mixed arithmetic", "fn main() {\n  1 + 1.0\n}", RuneRuntimeError, "`i64 + f64`", 2, 5),
    ("mixed equality", "fn main() { 1 == 1.0 }", RuneRuntimeError, "cannot compare `i64` with `f64`", 1, 15),
    ("division by zero", "fn main() { 1 / 0 }", RuneRuntimeError, "division by zero", 1, 15),
    ("index", "fn main() {\n  let v = [1];\n  v[3]\n}", RuneRuntimeError, "index 3 out of bounds", 3, 4),
    ("missing fn", "fn main() { nope() }", RuneRuntimeError, "missing item `nope`", 1, 13),
    ("missing method", "fn main() { 1.frob() }", RuneRuntimeError, "missing method `frob` on `i64`", 1, 15),
    ("missing field", "fn main() { #{a: 1}.b }", RuneRuntimeError, "missing field `b`", 1, 21),
    ("panic", 'fn main() {\n  panic!("boom {}", 1)\n}', RunePanic, "boom 1", 2, 3),
    ("assert_eq", "fn main() { assert_eq!(1, 2) }", RunePanic, "left: 1, right: 2", 1, 13),
    ("unwrap none", "fn main() { None.unwrap() }", RunePanic, "`Option::unwrap()` on a `None`", 1, 18),
    (
        "bool condition",
        "fn main() { if 1 { 2 } }",
        RuneRuntimeError,
        "expected `bool` condition, found `i64`",
        1,
        16,
    ),
    (
        "overflow in a fused pipeline",
        "fn main() {\n  [1, 9223372036854775807].iter()\n    .map(|x| x + 1).sum()\n}",
        RuneRuntimeError,
        "integer overflow in `+`",
        3,
        16,
    ),
    (
        "mixing in a fused pipeline",
        "fn main() { [1.5].iter().map(|x| x + 1).sum() }",
        RuneRuntimeError,
        "`f64 + i64`",
        1,
        36,
    ),
    (
        "non-bool filter in a fused pipeline",
        "fn main() { [1].iter().filter(|x| x).count() }",
        RuneRuntimeError,
        "expected `bool` condition",
        1,
        35,
    ),
    (
        "uninitialized static",
        "static CONFIG;\nfn main() {\n  CONFIG\n}",
        RuneRuntimeError,
        "reading uninitialized static `CONFIG`",
        3,
        3,
    ),
    (
        "arity",
        "fn f(a) { a } fn main() { f(1, 2) }",
        RuneRuntimeError,
        "`f` expects 1 arguments, got 2",
        1,
        27,
    ),
]


@pytest.mark.parametrize(
    ("name", "src", "kind", "fragment", "line", "col"), ERRORS, ids=[e[0] for e in ERRORS]
)
def test_runtime_error(name: str, src: str, kind: type, fragment: str, line: int, col: int) -> None:
    unit = compile_source(src, "err.rn")
    with pytest.raises(kind) as info:
        unit.call("main")
    err = info.value
    assert fragment in err.message
    assert (err.file, err.line, err.column) == ("err.rn", line, col)


def test_panic_has_rune_stack_trace() -> None:
    src = 'fn inner(x) {\n  panic!("bad {}", x)\n}\nfn outer() {\n  inner(7)\n}\nfn main() {\n  outer()\n}\n'
    with pytest.raises(RunePanic) as info:
        compile_source(src, "t.rn").call("main")
    frames = [(f.function, f.line) for f in info.value.trace]
    assert frames == [("inner", 2), ("outer", 5), ("main", 8)]
    text = str(info.value)
    assert "t.rn:2:3: bad 7" in text and "t.rn:5:3 in fn outer" in text


def test_unknown_function_name_from_python() -> None:
    with pytest.raises(RuneRuntimeError, match="missing function `nope`"):
        compile_source("fn main() {}").call("nope")


I64_MAX, I64_MIN = 2**63 - 1, -(2**63)

# The code generator drops overflow checks that a dominating comparison makes impossible
# (`n - 1` in the `else` of `if n < 2`); every case here still has to overflow or fail.
STILL_CHECKED = [
    (
        "lower bound says nothing of +",
        "fn f(n) { if n < 2 { n } else { n + 1 } }",
        I64_MAX,
        "overflow in `+`",
    ),
    ("else of > keeps -", "fn f(n) { if n > -5 { 0 } else { n - 1 } }", I64_MIN, "overflow in `-`"),
    ("early return", "fn f(n) { if n < 0 { return 0; } n * 2 }", I64_MAX, "overflow in `*`"),
    ("|| in else", "fn f(n) { if n < 5 || n > 10 { n - 1 } else { 0 } }", I64_MIN, "overflow in `-`"),
    (
        "reassigned local",
        "fn f(n) { let x = n; if x > 0 { x = -9223372036854775807 - 1; x - 1 } else { 0 } }",
        1,
        "overflow in `-`",
    ),
    ("float operand", "fn f(n) { if n < 2 { n } else { n - 1 } }", 2.5, "cannot compare `f64` with `i64`"),
    (
        "bounded local, product too large",
        "fn f(n) { let k = 4611686018427387904; let s = 0; for i in 0..3 { s = i * k; } s + n }",
        0,
        "overflow in `*`",
    ),
]


@pytest.mark.parametrize(("name", "src", "arg", "fragment"), STILL_CHECKED, ids=[c[0] for c in STILL_CHECKED])
def test_narrowed_arithmetic_is_still_checked(name: str, src: str, arg: object, fragment: str) -> None:
    with pytest.raises(RuneRuntimeError) as info:
        compile_source(src, "n.rn").call("f", arg)
    assert fragment in info.value.message


NARROWED = [
    ("else of <", "fn f(n) { if n < 2 { n } else { n - 1 } }", [(I64_MAX, I64_MAX - 1), (1, 1)]),
    ("early return", "fn f(n) { if n <= 0 { return n; } n - 1 }", [(I64_MIN, I64_MIN), (1, 0)]),
    (
        "negation",
        "fn f(n) { if !(n >= 1) { n + 1 } else { n } }",
        [(I64_MIN, I64_MIN + 1), (I64_MAX, I64_MAX)],
    ),
    ("&& in then", "fn f(n) { if 0 <= n && n < 10 { n * 3 - 1 } else { 0 } }", [(0, -1), (9, 26), (10, 0)]),
]


@pytest.mark.parametrize(("name", "src", "cases"), NARROWED, ids=[c[0] for c in NARROWED])
def test_narrowed_arithmetic_values(name: str, src: str, cases: list[tuple[int, int]]) -> None:
    unit = compile_source(src, "n.rn")
    for arg, expected in cases:
        assert unit.call("f", arg) == expected


DUPLICATES = [
    ("fn", "fn f() { 1 }\nfn f() { 2 }", "f", 2),
    ("struct and fn", "struct Point;\nfn main() {}\nfn Point() {}", "Point", 3),
    ("in a module", "mod m {\n  const A = 1;\n  const A = 2;\n}", "A", 3),
]


@pytest.mark.parametrize(("name", "src", "item", "line"), DUPLICATES, ids=[d[0] for d in DUPLICATES])
def test_a_name_defined_twice_is_a_compile_error(name: str, src: str, item: str, line: int) -> None:
    """As upstream Rune does, a module may define each name once; the error points at the second one."""
    with pytest.raises(RuneCompileError, match=f"`{item}` is defined twice") as info:
        compile_source(src, "dup.rn")
    assert (info.value.file, info.value.line) == ("dup.rn", line)


# A local whose bounds are known (`let i = 0`) and which a nested block, branch, loop or arm
# assigns: after it, the bounds are gone and the check is back.
BIG = "9223372036854775807"
ASSIGNED_INSIDE = [
    f"if true {{ i = {BIG}; }}",
    f"if true {{ i += {BIG}; }}",
    f"let j = 0; while j < 1 {{ i = {BIG}; j += 1; }}",
    f"for x in 0..1 {{ i = {BIG}; }}",
    f"loop {{ i = {BIG}; break; }}",
    f"match 1 {{ 1 => {{ i = {BIG}; }} _ => {{}} }}",
    f"{{ i = {BIG}; }}",
    f"let f = || 1; if f() == 1 {{ i = {BIG} }} else {{ i = 0 }};",
    f"let j = if true {{ i = {BIG}; 1 }} else {{ 2 }};",
]


@pytest.mark.parametrize("stmt", ASSIGNED_INSIDE)
def test_bounds_do_not_outlive_an_inner_assignment(stmt: str) -> None:
    with pytest.raises(RuneRuntimeError, match="integer overflow"):
        compile_source(f"fn main() {{ let i = 0; {stmt} i + 1 }}", "b.rn").call("main")
