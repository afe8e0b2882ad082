"""Recursive-descent / Pratt parser producing the AST in ``nodes``."""

from __future__ import annotations

from . import nodes as n
from .item_parser import ItemParser
from .lexer import tokenize
from .macro_paths import macro_name
from .std_u64 import U64, negative_literal_error
from .stringify import stringify_tokens
from .tokens import Token

_BINARY = {
    "||": 3,
    "&&": 4,
    "==": 5,
    "!=": 5,
    "<": 5,
    ">": 5,
    "<=": 5,
    ">=": 5,
    "|": 6,
    "^": 7,
    "&": 8,
    "<<": 9,
    ">>": 9,
    "+": 10,
    "-": 10,
    "*": 11,
    "/": 11,
    "%": 11,
}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "^=", "&=", "|=", "<<=", ">>="}
_BLOCK_LIKE = (n.If, n.While, n.Loop, n.For, n.Match, n.Block, n.Select)
_POSTFIX = frozenset(("?", "(", "[", "."))
_MACRO_CLOSE = {"(": ")", "[": "]", "{": "}"}
_LITERALS = frozenset(("int", "float", "str", "char", "byte", "bytes"))


def _is_callable(e: n.Node, starts_statement: bool) -> bool:
    """Whether `(` or `[` after ``e`` calls or indexes it (upstream's ``Expr::is_callable``)."""
    if isinstance(e, (n.While, n.For)):
        return False
    if isinstance(e, (n.Loop, n.If, n.Match, n.Select)) or (isinstance(e, n.Block) and not e.is_async):
        return not starts_statement
    return True


class Parser(ItemParser):
    def __init__(self, source: str, filename: str) -> None:
        super().__init__(source, filename, tokenize(source, filename))
        self.no_struct = False
        self.statement_starts: set[int] = set()

    def block(self, is_async: bool = False) -> n.Block:
        t = self.expect("{")
        saved, self.no_struct = self.no_struct, False
        stmts: list[n.Node] = []
        tail = None
        toks = self.toks
        while toks[self.i].key != "}":
            if toks[self.i].kind == "eof":
                raise self.error("expected `}`, found end of file")
            s = self.statement()
            if isinstance(s, (n.ExprStmt, n.Let, n.Item)):
                stmts.append(s)
            elif toks[self.i].key == "}":
                tail = s
            else:
                stmts.append(n.ExprStmt(s.line, s.col, s))
        self.i += 1
        self.no_struct = saved
        if (
            tail is None
            and stmts
            and isinstance(stmts[-1], n.ExprStmt)
            and isinstance(stmts[-1].expr, _BLOCK_LIKE)
            and toks[self.i - 2].key != ";"
        ):
            # `if c { a } else { b }` as the last statement yields its value.
            tail = stmts[-1].expr
            stmts.pop()
        return n.Block(t.line, t.column, stmts, tail, is_async)

    def expr(self, min_prec: int = 0) -> n.Node:
        t = self.toks[self.i]
        left = self.range_or_binary(min_prec)
        if min_prec <= 1 and self.toks[self.i].key in _ASSIGN:
            op = self.toks[self.i].value
            self.i += 1
            value = self.expr(1)
            return n.Assign(t.line, t.column, op, left, value)
        return left

    def range_or_binary(self, min_prec: int) -> n.Node:
        t = self.toks[self.i]
        if min_prec <= 2 and (t.key == ".." or t.key == "..="):
            inclusive = t.key == "..="
            self.i += 1
            end = None if self.range_end_absent() else self.binary(3)
            return n.Range(t.line, t.column, None, end, inclusive)
        left = self.binary(max(min_prec, 3))
        if min_prec <= 2 and self.toks[self.i].key in ("..", "..="):
            inclusive = self.tok.value == "..="
            self.i += 1
            end = None if self.range_end_absent() else self.binary(3)
            return n.Range(t.line, t.column, left, end, inclusive)
        return left

    def range_end_absent(self) -> bool:
        t = self.tok
        return (
            t.kind == "eof"
            or (t.kind == "punct" and t.value in (")", "]", "}", ",", ";"))
            or (self.no_struct and t.is_("punct", "{"))
        )

    def binary(self, min_prec: int) -> n.Node:
        left = self.unary()
        toks = self.toks
        while True:
            t = toks[self.i]
            key = t.key
            if (key == "as" or key == "is") and min_prec <= 12:
                self.i += 1
                if t.value == "as":
                    left = n.Cast(t.line, t.column, left, "::".join(self.path_names()))
                else:
                    negate = self.eat("not")
                    left = n.Is(t.line, t.column, left, self.path_names(), negate)
                continue
            prec = _BINARY.get(key)
            if prec is None or prec < min_prec:
                return left
            self.i += 1
            right = self.binary(prec + 1)
            left = n.Binary(t.line, t.column, t.value, left, right)

    def unary(self) -> n.Node:
        t = self.toks[self.i]
        if t.key in ("-", "!", "&", "*"):
            self.i += 1
            operand = self.unary()
            if t.value in ("&", "*"):
                return operand  # references are transparent in Rune
            if t.value == "-" and isinstance(operand, n.Lit) and type(operand.value) in (int, float):
                return n.Lit(t.line, t.column, -operand.value)
            if t.value == "-" and isinstance(operand, n.Lit) and type(operand.value) is U64:
                problem = negative_literal_error(operand.value)
                if problem is not None:
                    raise self.error(problem, t)
                return operand
            return n.Unary(t.line, t.column, t.value, operand)
        if t.key == "&&":
            self.i += 1
            return self.unary()
        start = self.i
        e = self.primary()
        if self.toks[self.i].key not in _POSTFIX:
            return e
        return self.postfix(e, start in self.statement_starts)

    def call_args(self, close: str = ")") -> list[n.Node]:
        args = []
        saved, self.no_struct = self.no_struct, False
        while self.toks[self.i].key != close:
            args.append(self.expr())
            if not self.eat(","):
                break
        self.expect(close)
        self.no_struct = saved
        return args

    def postfix(self, e: n.Node, starts_statement: bool = False) -> n.Node:
        """The calls, indexes, fields, `?` and `.await` after ``e``.

        As upstream, `(` and `[` do not apply to a `while` or `for` loop, nor to the other
        block-like expressions when ``e`` starts a statement, so `for x in v {} [a, b]` is a
        loop and then an array."""
        while True:
            t = self.toks[self.i]
            if t.key not in _POSTFIX:
                return e
            if (t.key == "(" or t.key == "[") and not _is_callable(e, starts_statement):
                return e
            if self.eat("?"):
                e = n.Try(t.line, t.column, e)
            elif self.eat("("):
                e = n.Call(t.line, t.column, e, self.call_args())
            elif self.eat("["):
                saved, self.no_struct = self.no_struct, False
                idx = self.expr()
                self.no_struct = saved
                self.expect("]")
                e = n.Index(t.line, t.column, e, idx)
            elif self.eat("."):
                nt = self.tok
                if self.eat("await"):
                    e = n.Await(nt.line, nt.column, e)
                elif nt.kind == "int":
                    self.i += 1
                    e = n.Field(nt.line, nt.column, e, nt.value)
                elif nt.kind == "float":
                    # `x.0.1` lexes the index pair as a float.
                    self.i += 1
                    a, b = str(self.source_text(nt)).split(".")
                    e = n.Field(nt.line, nt.column, n.Field(nt.line, nt.column, e, int(a)), int(b))
                else:
                    name = self.ident()
                    if self.at("::") and self.peek().is_("punct", "<"):
                        self.i += 1
                        first = self.peek()
                        self.skip_generics()
                        if first.kind == "ident" and first.value != "_":
                            name = f"{name}::{first.value}"  # `parse::<f64>()`: the target type
                    if self.eat("("):
                        e = n.MethodCall(nt.line, nt.column, e, name, self.call_args())
                    else:
                        e = n.Field(nt.line, nt.column, e, name)
            else:
                return e

    def source_text(self, tok: Token) -> str:
        lines = self.source.splitlines()
        line = lines[tok.line - 1][tok.column - 1 :]
        end = 0
        while end < len(line) and (line[end].isdigit() or line[end] == "."):
            end += 1
        return line[:end]

    def skip_generics(self) -> None:
        self.expect("<")
        depth = 1
        while depth > 0:
            if self.tok.kind == "eof":
                raise self.error("unclosed `<` of a generic argument list")
            # `Vec<Vec<_>>` ends with one `>>` token
            depth += self.at("<") - self.at(">") - 2 * self.at(">>")
            self.i += 1

    def primary(self) -> n.Node:
        t = self.toks[self.i]
        k = t.kind
        if t.key == "#" and self.peek().key == "[" and self.toks[self.i + 2].value == "builtin":
            # `#[builtin] format!(value, width = ..)`: what upstream's `format!` expands to
            self.i += 2
            while not self.at("]"):
                self.i += 1
            self.i += 1
            return self.primary()
        if k == "ident":
            if t.value == "move" and (self.peek().is_("punct", "|") or self.peek().is_("punct", "||")):
                self.i += 1
                moved = self.closure(False)
                moved.is_move = True
                return moved
            return self.path_expr()
        if k in _LITERALS:
            self.i += 1
            value = t.value
            if k == "char":
                value = n.Lit(t.line, t.column, None)
                value.value = n.CharValue(t.value)
                return value
            if k == "bytes":
                return n.Lit(t.line, t.column, n.BytesValue(t.value))
            return n.Lit(t.line, t.column, value)
        if k == "template":
            self.i += 1
            parts: list = []
            for kind, part in t.value:
                if kind == "lit":
                    parts.append(part)
                else:
                    src, line, col = part
                    sub = Parser(src, self.filename)
                    for tok in sub.toks:
                        if tok.line == 1:
                            tok.column += col - 1
                        tok.line += line - 1
                    sub.source = self.source
                    parts.append(sub.expr())
            return n.Template(t.line, t.column, parts)
        if k == "label":
            self.i += 1
            self.expect(":")
            e = self.primary()
            if not isinstance(e, (n.While, n.Loop, n.For, n.Block)):
                raise self.error("labels are only allowed on loops", t)
            if isinstance(e, n.Block):
                # `'a: { ... }` runs once; `break 'a value` leaves it early.
                body = n.Block(e.line, e.col, [], n.Break(e.line, e.col, t.value, e))
                return n.Loop(t.line, t.column, body, t.value)
            e.label = t.value
            return e
        if k == "punct":
            v = t.value
            if v == "(":
                self.i += 1
                saved, self.no_struct = self.no_struct, False
                if self.eat(")"):
                    self.no_struct = saved
                    return n.TupleLit(t.line, t.column, [])
                first = self.expr()
                if self.eat(")"):
                    self.no_struct = saved
                    return first
                items = [first]
                while self.eat(","):
                    if self.at(")"):
                        break
                    items.append(self.expr())
                self.expect(")")
                self.no_struct = saved
                return n.TupleLit(t.line, t.column, items)
            if v == "[":
                self.i += 1
                return n.VecLit(t.line, t.column, self.call_args("]"))
            if v == "#" and self.peek().is_("punct", "{"):
                self.i += 2
                return n.ObjectLit(t.line, t.column, None, self.object_fields())
            if v == "{":
                return self.block()
            if v in ("|", "||"):
                return self.closure(False)
        if k == "kw":
            v = t.value
            if v in ("true", "false"):
                self.i += 1
                return n.Lit(t.line, t.column, v == "true")
            if v == "if":
                return self.if_expr()
            if v == "while":
                self.i += 1
                cond = self.condition()
                return n.While(t.line, t.column, cond, self.block(), None)
            if v == "loop":
                self.i += 1
                return n.Loop(t.line, t.column, self.block(), None)
            if v == "for":
                self.i += 1
                pat = self.pattern()
                self.expect("in")
                saved, self.no_struct = self.no_struct, True
                it = self.expr()
                self.no_struct = saved
                return n.For(t.line, t.column, pat, it, self.block(), None)
            if v == "match":
                return self.match_expr()
            if v == "break":
                self.i += 1
                label = None
                if self.tok.kind == "label":
                    label = self.tok.value
                    self.i += 1
                value = None if self.expr_end() else self.expr()
                return n.Break(t.line, t.column, label, value)
            if v == "continue":
                self.i += 1
                label = None
                if self.tok.kind == "label":
                    label = self.tok.value
                    self.i += 1
                return n.Continue(t.line, t.column, label)
            if v == "return":
                self.i += 1
                return n.Return(t.line, t.column, None if self.expr_end() else self.expr())
            if v == "yield":
                self.i += 1
                return n.Yield(t.line, t.column, None if self.expr_end() else self.expr())
            if v == "async":
                self.i += 1
                if self.at("|") or self.at("||"):
                    return self.closure(True)
                self.eat("move")
                return self.block(is_async=True)
            if v == "select":
                return self.select_expr()
            if v == "const" and self.peek().is_("punct", "{"):
                self.i += 1
                return self.block()  # `const { ... }` is evaluated like a block
            if v in ("self", "Self", "crate", "super"):
                return self.path_expr()
        found = t.value if k != "eof" else "end of file"
        raise self.error(f"expected expression, found `{found}`")

    def expr_end(self) -> bool:
        t = self.tok
        return t.kind == "eof" or (t.kind == "punct" and t.value in (";", "}", ")", "]", ","))

    def path_expr(self) -> n.Node:
        t = self.toks[self.i]
        names = [self.ident()]
        key = self.toks[self.i].key
        if key != "::" and key != "!" and key != "{":
            return n.Path(t.line, t.column, names)
        while self.at("::"):
            self.i += 1
            if self.at("<"):
                first = self.peek()
                self.skip_generics()
                if names[-1] == "collect" and first.kind == "ident" and first.value in ("Object", "String"):
                    names[-1] = f"collect::{first.value}"
                continue
            names.append(self.ident())
        if self.at("!") and self.peek().key in _MACRO_CLOSE:
            close = _MACRO_CLOSE[self.peek().key]
            self.i += 2
            name = macro_name(names)
            if name == "stringify":  # its tokens need not form expressions
                text, self.i = stringify_tokens(self.source, self.toks, self.i, close)
                self.expect(close)
                return n.Lit(t.line, t.column, text)
            return n.Macro(t.line, t.column, name, self.call_args(close), close == "}")
        if self.at("{") and not self.no_struct and (names[-1][:1].isupper()):
            self.i += 1
            return n.ObjectLit(t.line, t.column, names, self.object_fields())
        return n.Path(t.line, t.column, names)

    def object_fields(self) -> list[tuple[str, n.Node]]:
        fields = []
        saved, self.no_struct = self.no_struct, False
        while not self.at("}"):
            ft = self.tok
            if ft.kind == "str":
                key = ft.value
                self.i += 1
            else:
                key = self.ident()
            if self.eat(":"):
                value = self.expr()
            else:
                value = n.Path(ft.line, ft.column, [key])
            fields.append((key, value))
            if not self.eat(","):
                break
        self.expect("}")
        self.no_struct = saved
        return fields

    def closure(self, is_async: bool) -> n.Closure:
        t = self.tok
        params: list[n.Node] = []
        if not self.eat("||"):
            self.expect("|")
            while not self.at("|"):
                params.append(self.single_pattern())
                if self.eat(":"):
                    self.type_expr()
                if not self.eat(","):
                    break
            self.expect("|")
        body = self.expr()
        return n.Closure(t.line, t.column, params, body, is_async)

    def condition(self) -> n.Node:
        saved, self.no_struct = self.no_struct, True
        t = self.toks[self.i]
        if self.eat("let"):
            pat = self.pattern()
            self.expect("=")
            cond: n.Node = n.LetCond(t.line, t.column, pat, self.expr())
        else:
            cond = self.expr()
        self.no_struct = saved
        return cond

    def if_expr(self) -> n.If:
        t = self.expect("if")
        cond = self.condition()
        then = self.block()
        otherwise = None
        if self.eat("else"):
            otherwise = self.if_expr() if self.at("if") else self.block()
        return n.If(t.line, t.column, cond, then, otherwise)

    def match_expr(self) -> n.Match:
        t = self.expect("match")
        saved, self.no_struct = self.no_struct, True
        subject = self.expr()
        self.no_struct = saved
        self.expect("{")
        arms = []
        while not self.at("}"):
            at = self.tok
            pat = self.pattern()
            guard = self.expr() if self.eat("if") else None
            self.expect("=>")
            body = self.expr()
            arms.append(n.MatchArm(at.line, at.column, pat, guard, body))
            if not self.eat(",") and not isinstance(body, _BLOCK_LIKE) and not self.at("}"):
                raise self.error(f"expected `,`, found `{self.tok.value}`")
        self.expect("}")
        return n.Match(t.line, t.column, subject, arms)

    def select_expr(self) -> n.Select:
        t = self.expect("select")
        self.expect("{")
        arms = []
        default = None
        while not self.at("}"):
            if self.tok.is_("ident", "default"):
                self.i += 1
                self.expect("=>")
                default = self.expr()
            else:
                pat = self.pattern()
                self.expect("=")
                fut = self.expr()
                self.expect("=>")
                arms.append((pat, fut, self.expr()))
            self.eat(",")
        self.expect("}")
        return n.Select(t.line, t.column, arms, default)


def parse(source: str, filename: str = "<script>") -> n.File:
    """Parse a whole Rune file; raises RuneSyntaxError with a caret snippet on bad input."""
    return Parser(source, filename).parse_file()
