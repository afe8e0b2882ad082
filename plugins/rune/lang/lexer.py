"""Turn Rune source text into a list of tokens."""

from __future__ import annotations

import re

from .errors import RuneSyntaxError
from .std_u64 import BYTE_VALUES, unsigned_literal
from .tokens import KEYWORDS, PUNCTUATION, Token, token

_SPACE = re.compile(r"[ \t\r\n]+")
_WORD = re.compile(r"\w+")
_PUNCT = re.compile("|".join(re.escape(p) for p in PUNCTUATION))  # longest first
# First characters of punctuation that start no other token (`/` may open a comment).
_PUNCT_FIRST = frozenset(p[0] for p in PUNCTUATION) - frozenset("/'\"`")

# The common tokens after optional whitespace, one alternative each (``lastgroup`` names
# it). A number followed by a word character or by `.` other than `..` (suffixes, exponents,
# `_`, hex, `1.x`) takes the general path, as do `b'x'`, `r"x"`, strings with escapes, block
# comments and anything not ASCII: the `slow` alternative stops at them (or at the end).
_FAST = re.compile(
    r"[ \t\r\n]*(?:"
    r"(?P<word>(?![br]['\"#])[A-Za-z_]\w*)"
    r"|(?P<punct><<=|>>=|\.\.[.=]?|::|->|=>|&&|\|\||<<|>>|[=!<>+\-*%^&|]=|/(?![/*])=?"
    r"|[-+*%^!&|=<>@.,;:#$?~()\[\]{}])"
    r"|(?P<int>[0-9]+(?!\w|\.(?!\.)))"
    r"|(?P<float>[0-9]+\.[0-9]+(?!\w|\.(?!\.)))"
    r"|(?P<comment>//[^\n]*)"
    r'|(?P<str>"[^"\\\n]*")'  # without escapes or line breaks
    r"|(?P<slow>(?s:.)|\Z)"
    r")"
)

_INT_SUFFIXES = ("i128", "u128", "i64", "u64", "i32", "u32", "i16", "u16", "i8", "u8", "usize", "isize")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"', "`": "`", "$": "$"}


class Lexer:
    """Single-pass lexer; template strings are lexed into a list of literal and source parts."""

    def __init__(self, source: str, filename: str = "<script>") -> None:
        self.src = source
        self.filename = filename
        self.pos = 0
        self.line = 1
        self.col = 1

    def error(self, message: str, line: int | None = None, col: int | None = None) -> RuneSyntaxError:
        return RuneSyntaxError(message, self.filename, line or self.line, col or self.col, self.src)

    def advance(self, n: int = 1) -> str:
        text = self.src[self.pos : self.pos + n]
        for ch in text:
            if ch == "\n":
                self.line += 1
                self.col = 1
            else:
                self.col += 1
        self.pos += n
        return text

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.src[i] if i < len(self.src) else ""

    def tokens(self) -> list[Token]:
        """Lex the whole source: ``_FAST`` recognises the common tokens (ASCII words, plain
        decimal numbers and strings, punctuation, line comments) with the whitespace before
        them in one regex match each; anything else goes through ``next_token`` from there."""
        src = self.src
        out: list[Token] = []
        append = out.append
        pos, line, line_start = 0, 1, 0
        newline = src.find("\n")  # the next newline not yet counted in ``line``
        if newline < 0:
            newline = len(src)
        while True:
            for m in _FAST.finditer(src, pos):
                kind = m.lastgroup
                start, pos = m.span(kind)  # type: ignore[arg-type]  # every alternative is a named group
                text = src[start:pos]
                if start > newline:
                    line += src.count("\n", newline, start)
                    line_start = src.rindex("\n", 0, start) + 1
                    newline = src.find("\n", start)
                    if newline < 0:
                        newline = len(src)
                col = start - line_start + 1
                if kind == "punct":
                    append(Token("punct", text, line, col, text))
                elif kind == "word":
                    if text in KEYWORDS:
                        append(Token("kw", text, line, col, text))
                    else:
                        append(Token("ident", text, line, col, "ident"))
                elif kind == "int":
                    append(Token("int", int(text), line, col, "int"))
                elif kind == "float":
                    append(Token("float", float(text), line, col, "float"))
                elif kind == "str":
                    append(Token("str", text[1:-1], line, col, "str"))
                elif kind == "comment":
                    if text.startswith("///") and not text.startswith("////"):
                        append(Token("doc", text[3:].removeprefix(" "), line, col, "doc"))
                    elif text.startswith("//!"):
                        append(Token("innerdoc", text[3:].removeprefix(" "), line, col, "innerdoc"))
                else:
                    pos = start
                    break
            self.pos, self.line, self.col = pos, line, pos - line_start + 1
            tok = self.next_token()
            if tok is not None:
                append(tok)
                if tok.kind == "eof":
                    return out
            pos, line = self.pos, self.line
            line_start = pos - self.col + 1
            newline = src.find("\n", pos)
            if newline < 0:
                newline = len(src)

    def skip(self, n: int) -> str:
        """Advance over ``n`` characters known to contain no newline."""
        text = self.src[self.pos : self.pos + n]
        self.pos += n
        self.col += n
        return text

    def next_token(self) -> Token | None:
        src = self.src
        space = _SPACE.match(src, self.pos)
        if space is not None:
            text = space.group()
            newlines = text.count("\n")
            if newlines:
                self.line += newlines
                self.col = len(text) - text.rindex("\n")
            else:
                self.col += len(text)
            self.pos = space.end()
        line, col = self.line, self.col
        if self.pos >= len(src):
            return token("eof", None, line, col)
        ch = src[self.pos]
        # Most tokens are words and punctuation: recognise them before the rarer forms.
        if (ch.isalpha() or ch == "_") and not (ch in "br" and self.peek(1) in ("'", '"', "#")):
            word = self.skip(_WORD.match(src, self.pos).end() - self.pos)  # type: ignore[union-attr]  # `ch` starts a word
            return token("kw" if word in KEYWORDS else "ident", word, line, col)
        if ch in _PUNCT_FIRST:
            punct = _PUNCT.match(src, self.pos)
            if punct is not None:
                return token("punct", self.skip(punct.end() - self.pos), line, col)
        if src.startswith("//", self.pos):
            end = src.find("\n", self.pos)
            end = len(src) if end < 0 else end
            text = src[self.pos : end]
            self.advance(end - self.pos)
            if text.startswith("///") and not text.startswith("////"):
                return token("doc", text[3:].removeprefix(" "), line, col)
            if text.startswith("//!"):
                return token("innerdoc", text[3:].removeprefix(" "), line, col)
            return None
        if src.startswith("/*", self.pos):
            depth = 0
            while self.pos < len(src):
                if src.startswith("/*", self.pos):
                    depth += 1
                    self.advance(2)
                elif src.startswith("*/", self.pos):
                    depth -= 1
                    self.advance(2)
                    if depth == 0:
                        return None
                else:
                    self.advance()
            raise self.error("unterminated block comment", line, col)
        if ch.isdigit():
            return self.number(line, col)
        if ch == "b" and self.peek(1) == "'":
            self.advance()
            value = self.char_literal(line, col)
            if ord(value) > 255:
                raise self.error("byte literal out of range", line, col)
            return token("byte", BYTE_VALUES[ord(value)], line, col)  # `b'a'` is a u64 upstream
        if ch == "b" and self.peek(1) == '"':
            self.advance()
            text = self.string_literal('"', line, col)
            return token("bytes", text.encode("latin-1", "replace"), line, col)
        if (
            ch == "r"
            and self.peek(1) != ""
            and self.peek(1) in '"#'
            and (self.peek(1) == '"' or self.peek(2) in ('"', "#"))
        ):
            return self.raw_string(line, col)
        if ch.isalpha() or ch == "_":
            word = self.skip(_WORD.match(src, self.pos).end() - self.pos)  # type: ignore[union-attr]  # `ch` starts a word
            if word in KEYWORDS:
                return token("kw", word, line, col)
            return token("ident", word, line, col)
        if ch == '"':
            return token("str", self.string_literal('"', line, col), line, col)
        if ch == "`":
            return token("template", self.template(line, col), line, col)
        if ch == "'":
            # 'a' is a char literal; 'label is a loop label.
            if self.peek(1) == "\\" or (self.peek(2) == "'" and self.peek(1) != ""):
                return token("char", self.char_literal(line, col), line, col)
            self.advance()
            start = self.pos
            while self.pos < len(src) and (src[self.pos].isalnum() or src[self.pos] == "_"):
                self.advance()
            if start == self.pos:
                raise self.error("expected label or char literal", line, col)
            return token("label", src[start : self.pos], line, col)
        punct = _PUNCT.match(src, self.pos)
        if punct is not None:
            return token("punct", self.skip(punct.end() - self.pos), line, col)
        raise self.error(f"unexpected character {ch!r}", line, col)

    def number(self, line: int, col: int) -> Token:
        src = self.src
        start = self.pos
        if src[self.pos] == "0" and self.peek(1) in ("x", "b", "o"):
            base = {"x": 16, "b": 2, "o": 8}[self.peek(1)]
            self.advance(2)
            digits_start = self.pos
            while self.pos < len(src) and (src[self.pos].isalnum() or src[self.pos] == "_"):
                self.advance()
            text = src[digits_start : self.pos].replace("_", "")
            found = ""
            for suffix in _INT_SUFFIXES:
                # `u` is no hex digit: `0xffu8` ends in a suffix, `0xbeefi8` need not
                if (base != 16 or suffix[0] == "u") and text.endswith(suffix):
                    text, found = text[: -len(suffix)], suffix
                    break
            try:
                value = int(text, base)
            except ValueError:
                raise self.error(f"invalid number literal {src[start : self.pos]!r}", line, col) from None
            return token("int", self.unsigned(value, found, line, col), line, col)
        is_float = False
        while self.pos < len(src) and (src[self.pos].isdigit() or src[self.pos] == "_"):
            self.advance()
        if self.peek() == "." and self.peek(1).isdigit():
            is_float = True
            self.advance()
            while self.pos < len(src) and (src[self.pos].isdigit() or src[self.pos] == "_"):
                self.advance()
        if (
            self.peek() in ("e", "E")
            and (self.peek(1).isdigit() or self.peek(1) in ("+", "-") and self.peek(2).isdigit())
            and self.peek(1) != ""
        ):
            is_float = True
            self.advance(2)
            while self.pos < len(src) and (src[self.pos].isdigit() or src[self.pos] == "_"):
                self.advance()
        text = src[start : self.pos].replace("_", "")
        suffix_start = self.pos
        while self.pos < len(src) and (src[self.pos].isalnum() or src[self.pos] == "_"):
            self.advance()
        suffix = src[suffix_start : self.pos]
        if suffix in ("f64", "f32"):
            is_float = True
        elif suffix not in _INT_SUFFIXES and suffix:
            raise self.error(f"invalid number suffix {suffix!r}", line, col)
        if is_float:
            return token("float", float(text), line, col)
        return token("int", self.unsigned(int(text), suffix, line, col), line, col)

    def unsigned(self, value: int, suffix: str, line: int, col: int) -> int:
        """``value`` as a ``u64`` when ``suffix`` is unsigned (upstream's u8..u64 literals are all
        u64 values), else unchanged; an out-of-range literal is an error."""
        try:
            unsigned = unsigned_literal(value, suffix)
        except ValueError as exc:
            raise self.error(str(exc), line, col) from None
        return value if unsigned is None else unsigned

    def escape(self, line: int, col: int) -> str:
        self.advance()  # backslash
        ch = self.advance()
        if ch in _ESCAPES:
            return _ESCAPES[ch]
        if ch == "x":
            return chr(int(self.advance(2), 16))
        if ch == "u" and self.peek() == "{":
            end = self.src.index("}", self.pos)
            code = self.src[self.pos + 1 : end]
            self.advance(end - self.pos + 1)
            return chr(int(code, 16))
        raise self.error(f"unknown escape \\{ch}", line, col)

    def char_literal(self, line: int, col: int) -> str:
        self.advance()  # opening quote
        if self.peek() == "\\":
            value = self.escape(line, col)
        else:
            value = self.advance()
        if self.peek() != "'":
            raise self.error("unterminated char literal", line, col)
        self.advance()
        return value

    def string_literal(self, quote: str, line: int, col: int) -> str:
        self.advance()
        parts: list[str] = []
        while True:
            ch = self.peek()
            if ch == "":
                raise self.error("unterminated string literal", line, col)
            if ch == quote:
                self.advance()
                return "".join(parts)
            if ch == "\\":
                if self.peek(1) == "\n":
                    self.advance(2)
                    while self.peek() in (" ", "\t", "\n", "\r") and self.peek():
                        self.advance()
                    continue
                parts.append(self.escape(line, col))
            else:
                parts.append(self.advance())

    def raw_string(self, line: int, col: int) -> Token:
        self.advance()  # r
        hashes = 0
        while self.peek() == "#":
            hashes += 1
            self.advance()
        if self.peek() != '"':
            raise self.error("malformed raw string", line, col)
        self.advance()
        end_mark = '"' + "#" * hashes
        end = self.src.find(end_mark, self.pos)
        if end < 0:
            raise self.error("unterminated raw string", line, col)
        text = self.src[self.pos : end]
        self.advance(end - self.pos + len(end_mark))
        return token("str", text, line, col)

    def template(self, line: int, col: int) -> list[tuple[str, object]]:
        """Return parts: ('lit', text) or ('expr', (source, line, col))."""
        self.advance()
        parts: list[tuple[str, object]] = []
        buf: list[str] = []
        while True:
            ch = self.peek()
            if ch == "":
                raise self.error("unterminated template string", line, col)
            if ch == "`":
                self.advance()
                break
            if ch == "\\":
                buf.append(self.escape(line, col))
            elif ch == "$" and self.peek(1) == "{":
                if buf:
                    parts.append(("lit", "".join(buf)))
                    buf = []
                self.advance(2)
                eline, ecol = self.line, self.col
                depth, start = 1, self.pos
                while depth:
                    c = self.peek()
                    if c == "":
                        raise self.error("unterminated template expression", line, col)
                    depth += (c == "{") - (c == "}")
                    self.advance()
                parts.append(("expr", (self.src[start : self.pos - 1], eline, ecol)))
            else:
                buf.append(self.advance())
        if buf:
            parts.append(("lit", "".join(buf)))
        return parts


def tokenize(source: str, filename: str = "<script>") -> list[Token]:
    """Lex ``source`` into tokens ending with an 'eof' token; raises RuneSyntaxError."""
    return Lexer(source, filename).tokens()
