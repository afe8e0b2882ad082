"""Parsing of items: functions, structs, enums, impls, modules, uses, consts and attributes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import nodes as n
from .pattern_parser import PatternParser

if TYPE_CHECKING:
    from .tokens import Token

_BLOCK_LIKE = (n.If, n.While, n.Loop, n.For, n.Match, n.Block, n.Select)
# Keys of the tokens that may start an item (or its attributes): a statement starting with any
# other token is a `let` or an expression.
_ITEM_START = frozenset(("doc", "#", "pub", "fn", "async", "const", "struct", "enum", "impl", "mod", "use"))


class ItemParser(PatternParser):
    """The grammar layer of ``Parser`` for items and statements, built on the patterns."""

    statement_starts: set[int]
    """Token positions where an expression statement starts (set by ``Parser``)."""

    if TYPE_CHECKING:
        # Expressions and blocks: the layer above, ``Parser``.
        def expr(self, min_prec: int = 0) -> n.Node: ...
        def block(self, is_async: bool = False) -> n.Block: ...

    def parse_file(self) -> n.File:
        docs: list[str] = []
        while self.tok.kind == "innerdoc":
            docs.append(self.tok.value)
            self.i += 1
        items = self.item_list(end=None)
        return n.File(1, 1, items, docs)

    def item_list(self, end: str | None) -> list[n.Node]:
        out: list[n.Node] = []
        while not (self.tok.kind == "eof" if end is None else self.at(end)):
            if self.tok.kind == "eof":
                raise self.error(f"expected `{end}`, found end of file")
            if self.tok.kind == "innerdoc":
                self.i += 1
                continue
            out.append(self.statement(top=True))
        return out

    def attributes(self) -> tuple[list[n.Attribute], list[str]]:
        attrs: list[n.Attribute] = []
        docs: list[str] = []
        while True:
            if self.tok.kind == "doc":
                docs.append(self.tok.value)
                self.i += 1
            elif self.at("#") and self.peek().is_("punct", "["):
                t = self.tok
                self.i += 2
                path = self.ident()
                while self.eat("::"):
                    path += "::" + self.ident()
                attr = n.Attribute(t.line, t.column, path)
                if self.eat("("):
                    while not self.at(")"):
                        if self.tok.kind == "ident" and self.peek().is_("punct", "="):
                            key = self.ident()
                            self.expect("=")
                            attr.args[key] = self.attr_value()
                        elif self.tok.kind == "ident" and not self.peek().is_("punct", "::"):
                            attr.args[self.ident()] = True
                        else:
                            attr.positional.append(self.attr_value())
                        if not self.eat(","):
                            break
                    self.expect(")")
                self.expect("]")
                attrs.append(attr)
            else:
                return attrs, docs

    def attr_value(self) -> Any:
        t = self.tok
        if self.eat("["):
            values = []
            while not self.at("]"):
                values.append(self.attr_value())
                if not self.eat(","):
                    break
            self.expect("]")
            return values
        if self.eat("-") and self.tok.kind in ("int", "float"):
            self.i += 1
            return -self.toks[self.i - 1].value
        if t.kind in ("str", "int", "float", "char"):
            self.i += 1
            return t.value
        if t.kind == "kw" and t.value in ("true", "false"):
            self.i += 1
            return t.value == "true"
        if t.kind == "ident":
            return "::".join(self.path_names())
        raise self.error("expected attribute value")

    def statement(self, top: bool = False) -> n.Node:
        t = self.toks[self.i]
        if t.key not in _ITEM_START and t.value != "static":
            return self.simple_statement(t)
        attrs, docs = self.attributes()
        t = self.tok
        public = False
        if self.at("pub"):
            public = True
            self.i += 1
            if self.eat("("):
                while not self.eat(")"):
                    self.i += 1
        item: n.Item
        if (
            self.at("fn")
            or (self.at("async") and self.peek().is_("kw", "fn"))
            or (self.at("const") and self.peek().is_("kw", "fn"))
        ):
            if self.at("const"):
                self.i += 1
            item = self.fn_decl()
        elif self.at("struct"):
            item = self.struct_decl()
        elif self.at("enum"):
            item = self.enum_decl()
        elif self.at("impl"):
            item = self.impl_decl()
        elif self.at("mod"):
            self.i += 1
            name = self.ident()
            if self.eat(";"):
                raise self.error("file modules are not supported; use an inline `mod name { ... }`", t)
            self.expect("{")
            item = n.ModDecl(t.line, t.column, name, self.item_list("}"))
            self.expect("}")
        elif self.at("use"):
            self.i += 1
            item = self.use_decl(t)
        elif self.tok.kind == "ident" and self.tok.value == "static" and self.peek().kind == "ident":
            self.i += 1
            name = self.ident()
            if self.eat(":"):
                self.type_expr()
            value = self.expr() if self.eat("=") else None
            item = n.StaticDecl(t.line, t.column, name, value)
            self.expect(";")
        elif self.at("const") and not self.peek().is_("punct", "{"):
            self.i += 1
            name = self.ident()
            if self.eat(":"):
                self.type_expr()
            self.expect("=")
            item = n.ConstDecl(t.line, t.column, name, self.expr())
            self.expect(";")
        else:
            return self.simple_statement(t)
        item.attrs, item.docs, item.public = attrs, docs, public
        return item

    def simple_statement(self, t: Token) -> n.Node:
        """A `let`, an expression statement or a tail expression starting at ``t``."""
        if self.toks[self.i].key == "let":
            self.i += 1
            pat = self.pattern()
            if isinstance(pat, n.PPath) and len(pat.names) == 1 and pat.names[0] != "None":
                pat = n.PBind(pat.line, pat.col, pat.names[0])
            if self.eat(":"):
                self.type_expr()
            value = self.expr() if self.eat("=") else None
            self.expect(";")
            return n.Let(t.line, t.column, pat, value)
        if self.eat(";"):
            return n.ExprStmt(t.line, t.column, n.TupleLit(t.line, t.column, []))
        self.statement_starts.add(self.i)  # a block-like expression here ends the statement
        e = self.expr()
        if self.eat(";"):
            return n.ExprStmt(t.line, t.column, e)
        if self.at("}") or self.tok.kind == "eof":
            return e  # tail expression
        if isinstance(e, _BLOCK_LIKE) or (isinstance(e, n.Macro) and e.braced):
            return n.ExprStmt(t.line, t.column, e)
        raise self.error(f"expected `;`, found `{self.tok.value}`")

    def use_decl(self, t: Token) -> n.Item:
        names = [self.ident()]
        while self.eat("::"):
            if self.eat("*"):
                self.expect(";")
                return n.UseDecl(t.line, t.column, names[-1], names, None, glob=True)
            if self.at("{"):
                self.i += 1
                group: list[n.Node] = []
                while not self.at("}"):
                    sub = [self.ident()]
                    while self.eat("::"):
                        sub.append(self.ident())
                    alias = self.ident() if self.eat("as") else None
                    group.append(n.UseDecl(t.line, t.column, alias or sub[-1], names + sub, alias))
                    if not self.eat(","):
                        break
                self.expect("}")
                self.expect(";")
                return n.ModDecl(t.line, t.column, "", group)  # a flat group of uses
            names.append(self.ident())
        alias = self.ident() if self.eat("as") else None
        self.expect(";")
        return n.UseDecl(t.line, t.column, alias or names[-1], names, alias)

    def type_expr(self) -> None:
        """Skip a type annotation; Rune is dynamically typed."""
        if self.eat("("):
            while not self.eat(")"):
                self.type_expr()
                self.eat(",")
            return
        if self.eat("["):
            self.type_expr()
            self.expect("]")
            return
        if self.eat("fn"):
            self.expect("(")
            while not self.eat(")"):
                self.type_expr()
                self.eat(",")
            if self.eat("->"):
                self.type_expr()
            return
        self.path_names()
        if self.eat("<"):
            depth = 1
            while depth:
                depth += self.at("<") - self.at(">")
                if self.at(">>"):
                    depth -= 2
                self.i += 1

    def fn_decl(self) -> n.FnDecl:
        t = self.tok
        is_async = self.eat("async")
        self.expect("fn")
        name = self.ident()
        self.expect("(")
        params: list[n.Node] = []
        has_self = False
        while not self.at(")"):
            if self.at("self"):
                self.i += 1
                has_self = True
                params.append(n.PBind(t.line, t.column, "self"))
            else:
                self.eat("mut")
                params.append(self.pattern())
                if self.eat(":"):
                    self.type_expr()
            if not self.eat(","):
                break
        self.expect(")")
        if self.eat("->"):
            self.type_expr()
        body = self.block()
        return n.FnDecl(t.line, t.column, name, params, body, is_async, has_self)

    def struct_body(self, t: Token, name: str) -> n.StructDecl:
        if self.eat("{"):
            fields = []
            while not self.at("}"):
                self.attributes()
                self.eat("pub")
                fields.append(self.ident())
                if self.eat(":"):
                    self.type_expr()
                if not self.eat(","):
                    break
            self.expect("}")
            return n.StructDecl(t.line, t.column, name, "named", fields)
        if self.eat("("):
            fields = []
            while not self.at(")"):
                self.eat("pub")
                self.type_expr()
                fields.append(str(len(fields)))
                if not self.eat(","):
                    break
            self.expect(")")
            return n.StructDecl(t.line, t.column, name, "tuple", fields)
        return n.StructDecl(t.line, t.column, name, "unit", [])

    def struct_decl(self) -> n.StructDecl:
        t = self.expect("struct")
        decl = self.struct_body(t, self.ident())
        if decl.kind != "named":
            self.eat(";")
        return decl

    def enum_decl(self) -> n.EnumDecl:
        t = self.expect("enum")
        name = self.ident()
        self.expect("{")
        variants = []
        while not self.at("}"):
            self.attributes()
            vt = self.tok
            variants.append(self.struct_body(vt, self.ident()))
            if not self.eat(","):
                break
        self.expect("}")
        return n.EnumDecl(t.line, t.column, name, variants)

    def impl_decl(self) -> n.ImplDecl:
        t = self.expect("impl")
        path = self.path_names()
        self.expect("{")
        fns = []
        while not self.at("}"):
            attrs, docs = self.attributes()
            public = self.eat("pub")
            fn = self.fn_decl()
            fn.attrs, fn.docs, fn.public = attrs, docs, public
            fns.append(fn)
        self.expect("}")
        return n.ImplDecl(t.line, t.column, "::".join(path), fns)
