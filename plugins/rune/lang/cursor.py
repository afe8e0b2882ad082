"""Token-level reading for the parser: the current token, lookahead and tests of the next token."""

from __future__ import annotations

from .errors import RuneSyntaxError
from .tokens import PATH_KEYWORDS, Token


class TokenCursor:
    """A position ``i`` in the token list ``toks`` of ``source``; tests compare token ``key``s,
    so "is the next token `{`" is one comparison."""

    def __init__(self, source: str, filename: str, toks: list[Token]) -> None:
        self.source = source
        self.filename = filename
        self.toks = toks
        self.i = 0

    @property
    def tok(self) -> Token:
        """The current token."""
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        """The token ``k`` places ahead (the final eof token past the end)."""
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def error(self, message: str, tok: Token | None = None) -> RuneSyntaxError:
        """A syntax error at ``tok`` (the current token by default), to raise."""
        tok = tok or self.tok
        return RuneSyntaxError(message, self.filename, tok.line, tok.column, self.source)

    def at(self, value: str) -> bool:
        """Whether the current token is the punctuation or keyword ``value``."""
        return self.toks[self.i].key == value

    def eat(self, value: str) -> bool:
        """Skip the current token if it is the punctuation or keyword ``value``."""
        if self.toks[self.i].key == value:
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> Token:
        """Consume the punctuation or keyword ``value`` or raise a syntax error."""
        t = self.toks[self.i]
        if t.key != value:
            found = t.value if t.kind != "eof" else "end of file"
            raise self.error(f"expected `{value}`, found `{found}`")
        self.i += 1
        return t

    def ident(self) -> str:
        """Consume an identifier (or `self`, `Self`, `crate`, `super`) and return its name."""
        t = self.toks[self.i]
        if t.key == "ident" or t.key in PATH_KEYWORDS:
            self.i += 1
            return t.value
        found = t.value if t.kind != "eof" else "end of file"
        raise self.error(f"expected identifier, found `{found}`")

    def path_names(self) -> list[str]:
        """Consume a path ``a::b::c``; returns its names."""
        names = [self.ident()]
        while self.at("::") and (self.peek().kind == "ident" or self.peek().kind == "kw"):
            self.i += 1
            names.append(self.ident())
        return names
