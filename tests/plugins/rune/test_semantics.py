"""Table of Rune programs and the output/result each must produce."""

import pytest

PROGRAMS = [
    # literals and formatting
    ("literals", 'println!("{} {} {} {} {}", 1, 2.5, true, \'c\', "s");', "1 2.5 true c s\n", None),
    ("debug fmt", 'println!("{:?} {:?} {:?}", "s", \'c\', [1, (2, 3)]);', "\"s\" 'c' [1, (2, 3)]\n", None),
    ("float display", 'println!("{} {}", 1.0, 0.1 + 0.2);', "1.0 0.30000000000000004\n", None),
    ("template", "let x = 3; `x=${x} y=${x * 2}`", "", "x=3 y=6"),
    ("format named", 'let n = 5; format!("{n:>3}|{:<3}|{:.2}", 1, 1.5)', "", "  5|1  |1.50"),
    ("bytes", "let b = b'a'; b", "", 97),
    # let, shadowing, const
    ("shadowing", "let x = 1; let x = x + 1; { let x = 10; } x", "", 2),
    ("const", "const N = 2 * 21; fn f() { N } f()", "", 42),
    # arithmetic
    ("int division truncates", "(-7 / 2, -7 % 2, 7 / -2)", "", [-3, -1, -3]),
    ("float arithmetic", "7.0 / 2.0", "", 3.5),
    ("bitwise", "(6 & 3, 6 | 3, 6 ^ 3, 1 << 4, -16 >> 2, !0)", "", [2, 7, 5, 16, -4, -1]),
    ("comparison", '(1 < 2, "a" < "b", 2.0 >= 2.0, [1, 2] == [1, 2], 1 != 2)', "", [True] * 5),
    ("logic short-circuit", 'fn boom() { panic!("no") } false && boom()', "", False),
    ("cast", "(3 as f64, 3.9 as i64, 'a' as i64, 97 as char)", "", [3.0, 3, 97, "a"]),
    # control flow
    ("if expression", 'let x = if 1 > 2 { "a" } else if true { "b" } else { "c" }; x', "", "b"),
    ("while", "let i = 0; let s = 0; while i < 5 { s += i; i += 1; } s", "", 10),
    ("loop break value", "let i = 0; let r = loop { i += 1; if i == 4 { break i * 10; } }; r", "", 40),
    ("for range", "let s = 0; for i in 1..=4 { s += i; } s", "", 10),
    ("for vec", "let out = []; for x in [3, 1] { out.push(x * 2); } out", "", [6, 2]),
    (
        "labelled",
        "let n = 0; 'a: for i in 0..5 { for j in 0..5 { if j == 2 { continue 'a; } if i == 3 { break 'a; } n += 1; } } n",
        "",
        6,
    ),
    ("early return", "fn f(x) { if x { return 1; } 2 } (f(true), f(false))", "", [1, 2]),
    # functions and closures
    ("recursion", "fn fib(n) { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } } fib(15)", "", 610),
    ("closure capture copies", "let x = 1; let f = || x; let x = 5; f()", "", 1),
    ("closure args", "let add = |a, b| a + b; add(2, 3)", "", 5),
    ("higher order", "fn apply(f, v) { f(v) } apply(|x| x * x, 7)", "", 49),
    # collections
    ("tuple index", 'let t = (1, "a", 2.0); t.1', "", "a"),
    (
        "vec ops",
        "let v = [1, 2, 3]; v.push(4); v[0] = 9; (v.len(), v[0], v.pop(), v)",
        "",
        [4, 9, {"Some": 4}, [9, 2, 3]],
    ),
    (
        "object",
        'let o = #{a: 1}; o.b = 2; o["c"] = 3; (o.a, o.len(), o.get("z"), o)',
        "",
        [1, 3, {"None": None}, {"a": 1, "b": 2, "c": 3}],
    ),
    (
        "string methods",
        'let s = String::new(); s.push_str("Hi "); s += "there"; (s.len(), s.to_uppercase(), s.contains("the"), s.split(" ").collect::<Vec>())',
        "",
        [8, "HI THERE", True, ["Hi", "there"]],
    ),
    # Option / Result
    (
        "question mark",
        'fn p(s) { let v = s.parse::<i64>()?; Ok(v * 2) } (p("21"), p("x").is_err())',
        "",
        [{"Ok": 42}, True],
    ),
    (
        "option methods",
        "(Some(2).map(|x| x + 1), None.unwrap_or(7), Some(1).is_some())",
        "",
        [{"Some": 3}, 7, True],
    ),
    ("if let", "let o = Some(3); if let Some(x) = o { x } else { 0 }", "", 3),
    # match
    (
        "match literal range",
        'fn m(x) { match x { 0 => "zero", 1..=9 => "digit", _ => "big" } } [m(0), m(5), m(50)]',
        "",
        ["zero", "digit", "big"],
    ),
    (
        "match tuple vec object",
        "fn m(x) { match x { (a, 2) => a, [1, b, ..] => b, #{k: v, ..} => v, _ => -1 } } [m((7, 2)), m([1, 8, 9]), m(#{k: 5, z: 0}), m(3)]",
        "",
        [7, 8, 5, -1],
    ),
    (
        "match guard",
        'fn m(x) { match x { n if n < 0 => "neg", n => "pos" } } (m(-1), m(1))',
        "",
        ["neg", "pos"],
    ),
    ("match or", "match 3 { 1 | 3 => true, _ => false }", "", True),
    # types
    (
        "struct impl",
        "struct P { x, y } impl P { fn new(x, y) { Self { x, y } } fn sum(self) { self.x + self.y } } let p = P::new(1, 2); p.x = 5; p.sum()",
        "",
        7,
    ),
    ("tuple struct", "struct T(a, b); let t = T(1, 2); t.0 + t.1", "", 3),
    ("unit struct", "struct U; impl U { fn v(self) { 1 } } U.v()", "", 1),
    (
        "enum match",
        "enum S { C(r), Sq { s }, E } fn a(x) { match x { S::C(r) => r * 3, S::Sq { s } => s * s, S::E => 0 } } [a(S::C(2)), a(S::Sq { s: 3 }), a(S::E)]",
        "",
        [6, 9, 0],
    ),
    ("modules", "mod m { pub fn f() { inner::g() } mod inner { pub fn g() { 4 } } } use m::f; f()", "", 4),
    ("debug struct", 'struct P { x } println!("{:?}", P { x: 1 });', "P { x: 1 }\n", None),
    # iterators
    ("iterator pipeline", "(1..10).iter().filter(|x| x % 2 == 0).map(|x| x * x).sum()", "", 120),
    (
        "enumerate zip",
        '["a", "b"].iter().enumerate().map(|(i, s)| `${i}${s}`).collect::<Vec>()',
        "",
        ["0a", "1b"],
    ),
    (
        "zip take skip rev",
        "let a = [1, 2, 3, 4].iter().rev().skip(1).take(2).collect::<Vec>(); let z = [1, 2].iter().zip([3, 4]).collect::<Vec>(); (a, z)",
        "",
        [[3, 2], [[1, 3], [2, 4]]],
    ),
    # chains of map/filter closures ending in sum/count are generated as one loop
    (
        "fused sum",
        "let k = 3; (0..10).iter().map(|x| x * k).filter(|x| x % 2 == 0).map(|x| x + 1).sum()",
        "",
        65,
    ),
    ("fused count", '["a", "bb", "cc"].iter().filter(|s| s.len() == 2).count()', "", 2),
    ("fused floats", "let x = 1; [1.5, 2.5].iter().map(|x| x * 2.0).sum()", "", 8.0),
    ("fused empty", "[].iter().map(|x| x + 1).sum()", "", 0),
    ("fused captures", "let k = 2; let f = |v| v * k; [1, 2].iter().map(|x| f(x) + k).sum()", "", 10),
    (
        "fused over a struct's iter",
        "struct Bag { v } impl Bag { fn iter(self) { self.v.iter() } } Bag { v: [1, 2, 3] }.iter().map(|x| x * x).sum()",
        "",
        14,
    ),
    ("not fused: let in closure", "[1, 2].iter().map(|x| { let y = x * 3; y }).sum()", "", 9),
    ("fold count", "([1, 2, 3].iter().fold(10, |a, x| a + x), (0..5).iter().count())", "", [16, 5]),
    ("sort", "let v = [3, 1, 2]; v.sort(); v", "", [1, 2, 3]),
    # async
    ("async fn", "async fn f(x) { x + 1 } async fn main() { f(1).await + async { 10 }.await }", "", 12),
    ("labelled block", "let v = 0; let out = 'b: { if v == 0 { break 'b 10; } 77 }; out", "", 10),
    ("const block", "const A = 2; const { A * 3 }", "", 6),
    ("tuple field assign", "let t = (1, 2); t.0 = 5; t", "", [5, 2]),
    ("range fields", "let r = 1..4; (r.start, r.end, r.contains(3))", "", [1, 4, True]),
    (
        "method via type path",
        "let v = [3, 1]; Vec::sort(v); (v, i64::max(1, 2), char::to_i64('A'))",
        "",
        [[1, 3], 2, 65],
    ),
    (
        "type_name_of_val",
        '(std::any::type_name_of_val(1), std::any::type_name_of_val("s"))',
        "",
        ["::std::i64", "::std::string::String"],
    ),
    ("collect object", '[("a", 1)].iter().collect::<Object>()', "", {"a": 1}),
    ("no arm matches gives unit", "match 5 { 1 => 2 }", "", None),
    ("unit is tuple", "(() is Tuple, 1 is i64, 1 is not f64)", "", [True, True, True]),
    # statics: one mutable slot per unit
    ("static counter", "static N = 0; fn bump() { N += 1; N } bump(); bump()", "", 2),
    ("static shared value", "static SEEN = []; fn rec(v) { SEEN.push(v); } rec(1); rec(2); SEEN", "", [1, 2]),
    (
        "static in module, assigned first",
        "mod m { pub static W = 4 * 8; pub static E; } m::E = 1; m::W -= 2; (m::W, m::E)",
        "",
        [30, 1],
    ),
    # macros
    ("assert ok", "assert!(1 == 1); assert_eq!([1], [1]); 0", "", 0),
]


@pytest.mark.parametrize(("name", "src", "stdout", "result"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program(rune, name: str, src: str, stdout: str, result: object) -> None:
    out, value = rune(src)
    assert out == stdout
    assert value == result


def test_static_slot_is_per_unit_and_kept_between_calls() -> None:
    from toolmesh.plugins.rune.lang import compile_source

    src = "static N = 10; fn bump() { N += 1; N }"
    first, second = compile_source(src, "a.rn"), compile_source(src, "b.rn")
    assert [first.call("bump"), first.call("bump"), second.call("bump")] == [11, 12, 11]
