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
    'bytes', 'template', 'label', 'doc', 'innerdoc', 'punct' or 'eof'."""

    kind: str
    value: Any
    line: int
    column: int

    def is_(self, kind: str, value: Any = None) -> bool:
        return self.kind == kind and (value is None or self.value == value)
