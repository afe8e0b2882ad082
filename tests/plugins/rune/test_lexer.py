import pytest
from toolmesh.plugins.rune.lang import RuneSyntaxError
from toolmesh.plugins.rune.lang.lexer import tokenize


def kinds(src: str) -> list[tuple[str, object]]:
    return [(t.kind, t.value) for t in tokenize(src)[:-1]]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("42", [("int", 42)]),
        ("0xff", [("int", 255)]),
        ("1_000i64", [("int", 1000)]),
        ("1.5", [("float", 1.5)]),
        ("2e3", [("float", 2000.0)]),
        ("'a'", [("char", "a")]),
        ("'\\n'", [("char", "\n")]),
        ("b'a'", [("byte", 97)]),
        ('b"ab"', [("bytes", b"ab")]),
        ('"a\\tb"', [("str", "a\tb")]),
        ('r#"x"y"#', [("str", 'x"y')]),
        ("'outer: loop", [("label", "outer"), ("punct", ":"), ("kw", "loop")]),
        ("a..=b", [("ident", "a"), ("punct", "..="), ("ident", "b")]),
        ("x // comment\ny", [("ident", "x"), ("ident", "y")]),
        ("/* a /* nested */ b */ z", [("ident", "z")]),
        ("/// doc\nfn", [("doc", "doc"), ("kw", "fn")]),
        ("//! inner", [("innerdoc", "inner")]),
    ],
)
def test_tokens(src: str, expected: list) -> None:
    assert kinds(src) == expected


def test_template_parts() -> None:
    (tok,) = tokenize("`a ${x + 1} b`")[:-1]
    assert tok.kind == "template"
    assert tok.value[0] == ("lit", "a ")
    assert tok.value[1][0] == "expr" and tok.value[1][1][0] == "x + 1"


def test_positions() -> None:
    toks = tokenize("a\n  b")
    assert (toks[1].line, toks[1].column) == (2, 3)


@pytest.mark.parametrize("src", ['"open', "'", "`x", "/* open", "1z"])
def test_lex_errors(src: str) -> None:
    with pytest.raises(RuneSyntaxError):
        tokenize(src, "bad.rn")
