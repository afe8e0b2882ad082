"""Tokens at the boundary between the lexer's regex path and its general path."""

import pytest
from toolmesh.plugins.rune.lang.lexer import tokenize


def tokens(src: str) -> list[tuple[str, object]]:
    return [(t.kind, t.value) for t in tokenize(src)[:-1]]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        ("1..2", [("int", 1), ("punct", ".."), ("int", 2)]),
        ("1..=2", [("int", 1), ("punct", "..="), ("int", 2)]),
        ("1.5..2", [("float", 1.5), ("punct", ".."), ("int", 2)]),
        ("x.0.1", [("ident", "x"), ("punct", "."), ("float", 0.1)]),
        ("1.x", [("int", 1), ("punct", "."), ("ident", "x")]),
        ("7u8 2.0f64 1e3", [("int", 7), ("float", 2.0), ("float", 1000.0)]),
        ('b"ab" br', [("bytes", b"ab"), ("ident", "br")]),
        ('r#"a"#', [("str", "a")]),
        ("r#x", [("ident", "r"), ("punct", "#"), ("ident", "x")]),
        ('"a\\"b" "c"', [("str", 'a"b'), ("str", "c")]),
        (
            "a/b a/=b",
            [("ident", "a"), ("punct", "/"), ("ident", "b")]
            + [("ident", "a"), ("punct", "/="), ("ident", "b")],
        ),
        ("a<<=b>>c", [("ident", "a"), ("punct", "<<="), ("ident", "b"), ("punct", ">>"), ("ident", "c")]),
        ("//// not doc\n/// doc", [("doc", "doc")]),
        ("é1", [("ident", "é1")]),
    ],
)
def test_boundary_tokens(src: str, expected: list) -> None:
    assert tokens(src) == expected


def test_positions_after_multiline_tokens() -> None:
    src = 'let s = "a\nb";\n/* x\n y */ z `t\n${q}`\n  w'
    positions = {t.value if isinstance(t.value, str) else t.kind: (t.line, t.column) for t in tokenize(src)}
    assert positions["z"] == (4, 7)
    assert positions["template"] == (4, 9)
    assert positions["w"] == (6, 3)


def test_keys() -> None:
    """Punctuation and keywords are keyed by their text, every other token by its kind."""
    keys = [t.key for t in tokenize('fn f(x) { x + 1 } "s"')]
    assert keys == ["fn", "ident", "(", "ident", ")", "{", "ident", "+", "int", "}", "str", "eof"]
