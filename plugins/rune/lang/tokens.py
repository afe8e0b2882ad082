"""Token kinds and the token record produced by the lexer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KEYWORDS = frozenset(
    [
        "as",
        "async",
        "await",
        "break",
        "const",
        "continue",
        "crate",
        "else",
        "enum",
        "false",
        "fn",
        "for",
        "if",
        "impl",
        "in",
        "is",
        "let",
        "loop",
        "match",
        "mod",
        "not",
        "pub",
        "return",
        "select",
        "self",
        "Self",
        "struct",
        "super",
        "true",
        "use",
        "while",
        "yield",
    ]
)

# Keywords that may start a path (`self.x`, `Self::new`, `crate::f`, `super::g`).
PATH_KEYWORDS = frozenset(("self", "Self", "crate", "super"))

# Longest first so the lexer can match greedily.
PUNCTUATION = sorted(
    [
        "<<=",
        ">>=",
        "...",
        "..=",
        "::",
        "->",
        "=>",
        "==",
        "!=",
        "<=",
        ">=",
        "&&",
        "||",
        "+=",
        "-=",
        "*=",
        "/=",
        "%=",
        "^=",
        "&=",
        "|=",
        "<<",
        ">>",
        "..",
        "+",
        "-",
        "*",
        "/",
        "%",
        "^",
        "!",
        "&",
        "|",
        "=",
        "<",
        ">",
        "@",
        ".",
        ",",
        ";",
        ":",
        "#",
        "$",
        "?",
        "~",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
    ],
    key=len,
    reverse=True,
)


@dataclass(slots=True)
class Token:
    """A lexed token: ``kind`` is 'ident', 'kw', 'int', 'float', 'str', 'char', 'byte',
    'bytes', 'template', 'label', 'doc', 'innerdoc', 'punct' or 'eof'.

    ``key`` is the value of punctuation and keywords and the kind of every other token, so the
    parser tests "is this `{`" with one comparison (no kind name is a keyword or punctuation)."""

    kind: str
    value: Any
    line: int
    column: int
    key: str

    def is_(self, kind: str, value: Any = None) -> bool:
        return self.kind == kind and (value is None or self.value == value)


def token(kind: str, value: Any, line: int, column: int) -> Token:
    """A token with its ``key`` derived from ``kind`` and ``value``."""
    return Token(kind, value, line, column, value if kind == "punct" or kind == "kw" else kind)
