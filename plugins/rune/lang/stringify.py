"""``stringify!(tokens)``: the text of a macro's tokens, as upstream's ``MacroContext::stringify``
writes it (each token's source text, one space apart: ``stringify!(a+b)`` is ``"a + b"``)."""

from __future__ import annotations

from .tokens import Token

_OPEN = {"(": ")", "[": "]", "{": "}"}


def _offsets(source: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(source):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def stringify_tokens(source: str, toks: list[Token], start: int, close: str) -> tuple[str, int]:
    """The text of ``toks[start:]`` up to the unmatched ``close``, and the index of that token."""
    line_starts = _offsets(source)
    depth = 0
    end = start
    while True:
        key = toks[end].key
        if key == "eof":
            return "", end
        if depth == 0 and key == close:
            break
        depth += key in _OPEN
        depth -= key in _OPEN.values()
        end += 1

    def offset(tok: Token) -> int:
        return line_starts[tok.line - 1] + tok.column - 1

    texts = [source[offset(toks[i]) : offset(toks[i + 1])].strip() for i in range(start, end)]
    return " ".join(texts), end
