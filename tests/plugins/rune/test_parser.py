import pytest
from toolmesh.plugins.rune.lang import RuneSyntaxError, compile_source
from toolmesh.plugins.rune.lang import nodes as n
from toolmesh.plugins.rune.lang.parser import parse


def test_precedence() -> None:
    (stmt,) = parse("1 + 2 * 3").items
    assert isinstance(stmt, n.Binary) and stmt.op == "+"
    assert isinstance(stmt.right, n.Binary) and stmt.right.op == "*"


def test_items_keep_attributes_and_docs() -> None:
    src = """//! File docs.
/// Search the web.
/// Second line.
#[tool(desc = "search", version = "1.0.0", tags = ["x", "y"])]
#[param(name = "q", type = "string", required = false)]
pub fn search(q) { q }
"""
    file = parse(src)
    assert file.docs == ["File docs."]
    (fn,) = file.items
    assert isinstance(fn, n.FnDecl) and fn.public
    assert fn.docs == ["Search the web.", "Second line."]
    tool, param = fn.attrs
    assert tool.path == "tool" and tool.args == {"desc": "search", "version": "1.0.0", "tags": ["x", "y"]}
    assert param.args["required"] is False


def test_unit_exposes_function_metadata() -> None:
    unit = compile_source("#[test]\nfn t() {}\n/// add\npub async fn add(a, b) { a + b }", "m.rn")
    assert unit.tests() == ["t"]
    info = unit.functions["add"]
    assert info.params == ["a", "b"] and info.is_async and info.docs == ["add"] and info.public


@pytest.mark.parametrize(
    "src",
    [
        "struct Unit;",
        "struct T(a, b);",
        "enum E { A, B(x), C { y } }",
        "mod m { pub fn f() {} }",
        "use std::cmp::Ordering;",
        "const X = 1 + 2;",
        "fn f(a, b) -> i64 { a }",
        "let f = |a, b| a + b;",
        "let x = match 1 { 0..=5 if true => 1, [a, ..] => 2, #{a, ..} => 3, _ => 4 };",
        "if let Some(x) = y { x } else { 0 }",
        "let x = async { 1 };",
    ],
)
def test_parses(src: str) -> None:
    parse(src)


@pytest.mark.parametrize(
    ("src", "line", "col", "fragment"),
    [
        ("fn main() {\n  let x = ;\n}", 2, 11, "expected expression"),
        ("fn main() { 1 + }", 1, 17, "expected expression"),
        ("fn main( {", 1, 10, "expected"),
        ("let x = 1\nlet y = 2;", 2, 1, "expected `;`"),
    ],
)
def test_syntax_errors_have_positions_and_caret(src: str, line: int, col: int, fragment: str) -> None:
    with pytest.raises(RuneSyntaxError) as info:
        parse(src, "bad.rn")
    err = info.value
    assert (err.file, err.line, err.column) == ("bad.rn", line, col)
    assert fragment in err.message
    caret_line = err.snippet.splitlines()[-1]
    assert caret_line == " " * (col - 1) + "^"
    assert "bad.rn:" in str(err)
