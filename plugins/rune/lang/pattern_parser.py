"""Parsing of match, let and parameter patterns."""

from __future__ import annotations

from typing import Any

from . import nodes as n
from .cursor import TokenCursor
from .std_u64 import U64, negative_literal_error
from .tokens import PATH_KEYWORDS, Token


class PatternParser(TokenCursor):
    """The grammar layer of ``Parser`` for patterns, read through the token cursor."""

    def pattern(self) -> n.Node:
        t = self.tok
        first = self.single_pattern()
        if self.at("|"):
            options = [first]
            while self.eat("|"):
                options.append(self.single_pattern())
            return n.POr(t.line, t.column, options)
        return first

    def literal_value(self) -> Any:
        t = self.tok
        neg = self.eat("-")
        t = self.tok
        if t.kind in ("int", "float"):
            self.i += 1
            if neg and type(t.value) is U64:  # `-5u64` is out of range, `-0u64` is 0
                problem = negative_literal_error(t.value)
                if problem is not None:
                    raise self.error(problem, t)
                return t.value
            return -t.value if neg else t.value
        if neg:
            raise self.error("expected number after `-` in pattern")
        if t.kind == "char":
            self.i += 1
            return n.CharValue(t.value)
        if t.kind == "byte":
            self.i += 1
            return t.value
        if t.kind == "str":
            self.i += 1
            return t.value
        raise self.error("expected literal")

    def single_pattern(self) -> n.Node:
        t = self.toks[self.i]
        k = t.kind
        if k == "ident" or t.key in PATH_KEYWORDS:
            return self.path_pattern(t)
        if k in ("int", "float", "char", "byte", "str") or t.is_("punct", "-"):
            value = self.literal_value()
            if self.at("..") or self.at("..="):
                inclusive = self.tok.value == "..="
                self.i += 1
                end = (
                    None
                    if (self.at(")") or self.at("]") or self.at(",") or self.at("=>"))
                    else self.literal_value()
                )
                return n.PRange(t.line, t.column, value, end, inclusive)
            return n.PLit(t.line, t.column, value)
        if k == "bytes":
            self.i += 1
            return n.PLit(t.line, t.column, n.BytesValue(t.value))
        if t.is_("kw", "true") or t.is_("kw", "false"):
            self.i += 1
            return n.PLit(t.line, t.column, t.value == "true")
        if t.is_("punct", ".."):
            self.i += 1
            return n.PRest(t.line, t.column)
        if t.is_("punct", "("):
            self.i += 1
            items, rest = self.pattern_items(")")
            if len(items) == 1 and not rest and not self.toks[self.i - 2].is_("punct", ","):
                return items[0]
            return n.PTuple(t.line, t.column, None, items, rest)
        if t.is_("punct", "["):
            self.i += 1
            items, rest = self.pattern_items("]")
            return n.PVec(t.line, t.column, items, rest)
        if t.is_("punct", "#") and self.peek().is_("punct", "{"):
            self.i += 2
            fields, rest = self.pattern_fields()
            return n.PObject(t.line, t.column, None, fields, rest)
        raise self.error(f"expected pattern, found `{t.value if k != 'eof' else 'end of file'}`")

    def path_pattern(self, t: Token) -> n.Node:
        """A pattern starting with a name: `_`, a binding or a path with optional fields."""
        k = t.kind
        if t.value == "_" and k == "ident":
            self.i += 1
            return n.PWild(t.line, t.column)
        if t.value == "mut" and k == "ident":
            self.i += 1
            return self.single_pattern()
        names = self.path_names()
        if self.at("("):
            self.i += 1
            items, rest = self.pattern_items(")")
            return n.PTuple(t.line, t.column, names, items, rest)
        if self.at("{"):
            self.i += 1
            fields, rest = self.pattern_fields()
            return n.PObject(t.line, t.column, names, fields, rest)
        if len(names) == 1 and not names[0][:1].isupper() and names[0] not in ("Self", "None"):
            return n.PBind(t.line, t.column, names[0])
        return n.PPath(t.line, t.column, names)

    def pattern_items(self, close: str) -> tuple[list[n.Node], bool]:
        items: list[n.Node] = []
        rest = False
        while not self.at(close):
            p = self.pattern()
            if isinstance(p, n.PRest):
                rest = True
            else:
                items.append(p)
            if not self.eat(","):
                break
        self.expect(close)
        return items, rest

    def pattern_fields(self) -> tuple[list[tuple[str, n.Node]], bool]:
        fields = []
        rest = False
        while not self.at("}"):
            ft = self.tok
            if self.eat(".."):
                rest = True
            else:
                if ft.kind == "str":
                    self.i += 1
                    key = ft.value
                else:
                    key = self.ident()
                pat = self.pattern() if self.eat(":") else n.PBind(ft.line, ft.column, key)
                fields.append((key, pat))
            if not self.eat(","):
                break
        self.expect("}")
        return fields, rest
