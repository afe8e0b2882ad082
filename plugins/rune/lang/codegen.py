"""Translate the Rune AST into Python ``ast`` modules compiled once into code objects (one per
function, at its first call: see ``codegen_items``).

Every Rune function becomes a Python function ``def F(_s, *params)`` taking the run state
(budget) first; Rune locals are Python locals (one name per ``let``, so shadowing is exact);
closures are built by module-level factories whose parameters are the captured values (Rune
closures copy what they capture); generators are Python generators. Operators get inline fast
paths guarded by ``type(x) is int`` with i64 range checks and call the checked helpers of
``runtime`` only on the slow path. Expression statements are flattened: ``expr`` returns a
Python expression and may first emit statements into ``self.out``.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

from . import nodes as n
from .codegen_base import Clone, Pending
from .codegen_calls import CallsGen
from .codegen_control import ControlGen
from .codegen_fusion import FusionGen
from .codegen_items import ItemsGen
from .codegen_ops import OpsGen
from .codegen_patterns import PatternGen
from .codegen_sharing import share_operands
from .emit import is_simple
from .errors import RuneCompileError, RuneError
from .limits import INLINE_APPEND
from .macros import MacroGen
from .narrowing import NarrowGen
from .numtypes import Facts
from .resolve import UNRESOLVED, LazyPath, NotReady, Static, resolve_path, static_resolution
from .scope import FnCtx
from .specialize import CloneGen
from .std_modules import is_std_namespace
from .std_u64 import U64
from .ticks import plain, ticks_at_entry
from .values import Char, Function, Module, TypeInfo


class CodeGen(ItemsGen, OpsGen, CallsGen, ControlGen, NarrowGen, FusionGen, PatternGen, MacroGen, CloneGen):
    def __init__(self, filename: str, root: Module) -> None:
        super().__init__()
        self.filename = filename
        self.root = root
        self.module = root
        self.self_type: TypeInfo | None = None
        self.ctx = FnCtx(None, {})
        self.pending: list[Pending] = []
        self.defs: list[ast.stmt] = []
        self.consts: dict[str, Any] = {}
        self.const_names: dict[int, str] = {}
        self.declared: dict[int, Pending[n.FnDecl]] = {}  # id(Function) -> its declaration
        self.clones: dict[str, Clone | None] = {}  # Python name of a function -> its clone
        self.inferring: list[list[str]] = []  # clones decided under each assumption being checked
        self.walked: dict[int, tuple[n.Node, Facts]] = {}  # id(function body) -> its walk
        self.frames: dict[str, str] = {}  # Python function name -> Rune function name
        self.bindings: list[tuple[Function, str]] = []  # closure values to bind after exec
        self.bound = 0
        self.stubbed = 0
        self.codefile = ""
        self.ns: dict[str, Any] = {}
        self.lock = threading.RLock()

    def error(self, message: str, node: n.Node) -> RuneCompileError:
        return RuneCompileError(message, self.filename, node.line, node.col)

    def k(self, value: Any) -> ast.Name:
        """A module-level constant holding ``value``."""
        name = self.const_names.get(id(value))
        if name is None:
            name = self.fresh("k")
            self.consts[name] = value
            self.const_names[id(value)] = name
        return self.N(name)

    def generate(self, p: Pending, clone: Clone | None = None) -> None:
        """Append the defs of the function (or const initializer) ``p`` declares, or of its
        integer ``clone``, to ``self.defs``."""
        self.module, self.self_type = p.module, p.self_type
        self.at(p.decl.line, p.decl.col)
        self.ctx = FnCtx(None, {})
        decl = p.decl
        if isinstance(decl, (n.ConstDecl, n.StaticDecl)):
            assert decl.value is not None  # a static without a value has nothing to generate
            self.defs.extend(self.function([], decl.value, p.pyname, p.display, False))
        elif clone is not None:
            ints = {decl.params[i].name for i in clone.params}
            self.defs.extend(self.function(decl.params, decl.body, clone.pyname, p.display, False, ints, True))
        else:
            defs = self.function(decl.params, decl.body, p.pyname, p.display, decl.is_async, quick=True)
            generic = defs[0]
            assert isinstance(generic, ast.FunctionDef)
            params = [a.arg for a in generic.args.args[1:]]
            if not self.ctx.entry_tick:
                # The value of the function, called by host code, ticks first (see ``ticks``).
                entry: list[ast.stmt] = []
                saved = self.into(entry)
                self.budget()
                self.ret(self.call(p.pyname, self.N("_s"), *(self.N(a) for a in params)))
                self.out = saved
                defs.append(self.fndef(p.pyname + "_entry", ["_s", *params], entry))
            clone = self.clone_of(p)
            if clone is not None:
                generic.body.insert(0, self.dispatch(p, clone, params))
            self.defs.extend(defs)

    def function(
        self,
        params: list[n.Node],
        body: n.Node,
        pyname: str,
        display: str,
        is_async: bool,
        ints: set[str] | frozenset[str] = frozenset(),
        quick: bool = False,
    ) -> list[ast.stmt]:
        """Python defs of one Rune function in the current ``self.ctx``: its body and, for async
        functions and generators, the wrapper that returns a Future / Generator / Stream.
        Parameters named in ``ints`` are declared ints (see ``specialize``); ``quick``: only Rune
        code calls ``pyname`` directly, so its budget tick may move into branches (``ticks``)."""
        facts = self.facts(body)
        local = facts.rebound | {p.name for p in params if isinstance(p, n.PBind)}
        numeric = facts.solve(dict.fromkeys(ints, int), self.calls_typer(local))
        self.ctx.numeric, self.ctx.reassigned, gen = numeric, facts.assigned, facts.generator
        self.ctx.operands = facts.operands
        inner = pyname if not (gen or is_async) else pyname + "_body"
        self.frames[inner] = display
        names = []
        stmts: list[ast.stmt] = []
        saved = self.into(stmts)
        self.ctx.entry_tick = not quick or gen or is_async or ticks_at_entry(body)
        if self.ctx.entry_tick:
            self.budget()
        for p in params:
            if isinstance(p, n.PBind) and p.name in ints:
                names.append(self.declare(p.name, int))
            elif isinstance(p, n.PBind):
                names.append(self.declare(p.name))
                if p.name not in facts.assigned and facts.operands.get(p.name, 0) > 1:
                    self.ctx.flaggable.add(names[-1])
            else:
                arg = self.fresh("a")
                names.append(arg)
                self.let_pattern(p, self.N(arg), "argument did not match the parameter pattern")
        if params and isinstance(params[0], n.PBind) and params[0].name == "self":
            self.bind_self_fields(names[0], facts)
        self.tail_return(body)
        self.out = saved
        # `p_int = type(p) is int` once at entry for parameters tested more than once.
        for param, flag in self.ctx.flags.items():
            stmts.insert(
                int(self.ctx.entry_tick),
                ast.Assign(
                    [ast.Name(flag, ast.Store(), **self.pos)], self.type_is(self.N(param), "int"), **self.pos
                ),
            )
        defs: list[ast.stmt] = [self.fndef(inner, ["_s", *names], stmts)]
        if gen or is_async:
            args: list[ast.expr] = [self.N("_s"), *(self.N(a) for a in names)]
            if gen:
                wrap = "_Stream" if is_async else "_Generator"
                value = self.call(wrap, self.call(inner, *args))
            else:
                value = self.call("_Future", self.N(inner), self.N("_s"), self.tuple_(args[1:]))
            defs.append(self.fndef(pyname, ["_s", *names], [ast.Return(value, **self.pos)]))
        return defs

    def bind_self_fields(self, py: str, facts: Facts) -> None:
        """In a method of a named struct, read ``self``'s field list once: ``self.x`` is then
        ``sv[i]`` (``sv`` is None if ``self`` is another value, which takes the checked path)."""
        t = self.self_type
        if t is None or t.kind != "named" or "self" in facts.assigned or "self" in facts.rebound:
            return
        values = py + "_v"
        own = self.and_(self.type_is(self.N(py), "_Instance"), self.is_(self.attr(self.N(py), "type"), self.k(t)))
        self.assign(values, self.ifexp(own, self.attr(self.N(py), "values"), self.K(None)))
        self.ctx.self_fields = (py, values, t.slots)

    # --- scopes ---------------------------------------------------------------------------

    def declare(self, name: str, kind: type | None = None, py: str | None = None) -> str:
        py = py or self.fresh(name)
        self.ctx.blocks[-1][name] = py
        kind = kind or self.ctx.numeric.get(name)
        if kind is not None:
            self.ctx.types[py] = kind
        return py

    def lookup(self, name: str, ctx: FnCtx | None = None) -> str | None:
        ctx = ctx or self.ctx
        for block in reversed(ctx.blocks):
            if name in block:
                return block[name]
        if ctx.parent is not None:
            outer = self.lookup(name, ctx.parent)
            if outer is not None:
                ctx.captures[outer] = outer
                ctx.blocks[0][name] = outer
                kind = ctx.parent.types.get(outer)
                if kind is not None and name not in ctx.reassigned:
                    ctx.types[outer] = kind  # a copy the closure never reassigns
                return outer
        return None

    def cache_type(self, name: str, py: str) -> None:
        """``x_t = type(x)`` right after ``let x`` when ``x`` is never reassigned, its type is
        not known statically and the generated code tests it more than once (operators, field
        access, indexing): each test then reads a local instead of calling ``type``."""
        if name in self.ctx.reassigned or py in self.ctx.types or self.ctx.operands.get(name, 0) < 2:
            return
        cache = py + "_t"
        self.assign(cache, self.call("type", self.N(py)))
        self.ctx.typecache[py] = cache

    def type_of(self, v: ast.expr) -> ast.expr:
        if type(v) is ast.Name and v.id in self.ctx.typecache:
            return self.N(self.ctx.typecache[v.id])
        return self.call("type", v)

    def push(self) -> None:
        self.ctx.blocks.append({})

    def pop(self) -> None:
        self.ctx.blocks.pop()

    # --- statements -----------------------------------------------------------------------

    def stmts_of(self, b: n.Block) -> list[n.Node]:
        """Declare a block's items in a block-local module; returns its statements."""
        items: list[n.Node] = [s for s in b.stmts if isinstance(s, n.Item)]
        if items:
            local = Module("<block>", dict(self.module.items))
            self.declare_items(items, local)
            self.module = local
        return [s for s in b.stmts if not isinstance(s, n.Item)]

    def block(self, b: n.Block, want: bool = True) -> ast.expr:
        if b.is_async:
            return self.async_block(b)
        saved_module = self.module
        self.push()
        narrowed = self.stmts(self.stmts_of(b))
        v = self.expr(b.tail, want) if b.tail is not None else self.K(None)
        self.restore_bounds(narrowed)
        self.pop()
        self.module = saved_module
        return v

    def stmt(self, s: n.Node) -> None:
        old = self.at(s.line, s.col)
        if isinstance(s, n.Let) and isinstance(s.pattern, n.PBind):
            if s.value is None:
                self.assign(self.declare(s.pattern.name), self.K(None))
            else:
                py = self.fresh(s.pattern.name)  # bound after the value: `let x = x + 1`
                self.value_into(py, s.value)
                self.declare(s.pattern.name, py=py)
                self.cache_type(s.pattern.name, py)
        elif isinstance(s, n.Let):
            value = self.expr(s.value) if s.value is not None else self.K(None)
            if isinstance(s.pattern, n.PWild):
                self.expr_stmt(value)
            else:
                self.let_pattern(s.pattern, self.simple(value), "let pattern did not match")
        else:
            e = s.expr if isinstance(s, n.ExprStmt) else s
            self.expr_stmt(self.expr(e, want=False))
        self.pos = old

    def tail_return(self, e: n.Node) -> None:
        """Emit ``return <e>``, pushing the return into the branches of blocks and ifs."""
        old = self.at(e.line, e.col)
        if isinstance(e, n.Block) and not e.is_async:
            saved_module = self.module
            self.push()
            narrowed = self.stmts(self.stmts_of(e))
            if e.tail is not None:
                self.tail_return(e.tail)
            self.restore_bounds(narrowed)
            self.pop()
            self.module = saved_module
        elif isinstance(e, n.If):
            self.push()
            test = self.cond(e.cond)
            then: list[ast.stmt] = []
            saved, narrowed = self.into(then), self.narrow(e.cond, True)
            self.branch_return(e.then)
            self.out = saved
            self.restore_bounds(narrowed)
            self.pop()
            other: list[ast.stmt] = []
            if e.otherwise is not None:
                saved, narrowed = self.into(other), self.narrow(e.cond, False)
                self.branch_return(e.otherwise)
                self.out = saved
                self.restore_bounds(narrowed)
            self.if_(test, then, other)
        else:
            v = self.expr(e)
            if not (type(v) is ast.Constant and v.value is None):
                self.ret(v)
        self.pos = old

    def branch_return(self, e: n.Node) -> None:
        """``tail_return`` of a branch; in a function without its entry tick, a branch that can
        call or loop takes the tick first (``else if`` passes it on to its own branches)."""
        if self.ctx.entry_tick or type(e) is n.If or plain(e):
            self.tail_return(e)
            return
        self.budget()
        self.ctx.entry_tick = True  # the branch's own `if`s need no further ticks
        self.tail_return(e)
        self.ctx.entry_tick = False

    # --- expressions ----------------------------------------------------------------------

    def expr(self, e: n.Node, want: bool = True) -> ast.expr:
        old = self.at(e.line, e.col)
        method = getattr(self, "x_" + type(e).__name__, None)
        if method is None:
            raise self.error(f"unsupported expression {type(e).__name__}", e)
        v = method(e, want)
        self.pos = old
        return v

    def exprs(self, nodes: list[n.Node]) -> list[ast.expr]:
        """Compile operands left to right; earlier values are spilled into temporaries when a
        later operand emits statements, so evaluation order is kept."""
        vals: list[ast.expr] = []
        for node in nodes:
            mark = len(self.out)
            v = self.expr(node)
            if len(self.out) > mark and any(not is_simple(p) for p in vals):
                new = self.out[mark:]
                del self.out[mark:]
                vals = [self.simple(p) for p in vals]
                self.out.extend(new)
            vals.append(v)
        return vals

    def x_Lit(self, e: n.Lit, want: bool) -> ast.expr:
        v = e.value
        if type(v) is n.CharValue:
            return self.k(Char(v))
        if type(v) is n.BytesValue:
            return self.call("_Bytes", self.k(bytes(v)))
        if type(v) is U64:
            return self.k(v)  # not a Python constant: a `u64` object
        return self.K(v)

    def x_Template(self, e: n.Template, want: bool) -> ast.expr:
        parts: list[ast.expr | str] = []
        vals = self.exprs([p for p in e.parts if not isinstance(p, str)])
        it = iter(vals)
        nodes = iter([p for p in e.parts if not isinstance(p, str)])
        for p in e.parts:
            if isinstance(p, str):
                parts.append(p)
                continue
            v, node = next(it), next(nodes)
            kind = self.static_type(node)
            if kind is int:
                parts.append(ast.FormattedValue(v, -1, None, **self.pos))  # a few digits: not measured
            else:
                parts.append(v if kind is str else self.call("_display", v))
        return self.joined(parts)

    def joined(self, parts: list[ast.expr | str]) -> ast.expr:
        """An f-string of text pieces (``str``), strings (expressions) and ready ``FormattedValue``
        parts; when the strings are long together, ``_allocate_text`` accounts for the result
        before it is built (see ``limits``)."""
        measured = [
            self.simple(p) for p in parts if isinstance(p, ast.expr) and type(p) is not ast.FormattedValue
        ]
        it = iter(measured)
        values: list[ast.expr] = []
        for p in parts:
            if isinstance(p, str):
                values.append(self.K(p))
            elif type(p) is ast.FormattedValue:
                values.append(p)
            else:
                values.append(ast.FormattedValue(next(it), -1, None, **self.pos))
        if measured:
            fixed = sum(len(p) for p in parts if isinstance(p, str))
            total = ast.BinOp(self.call("len", measured[0]), ast.Add(), self.K(fixed), **self.pos)
            for v in measured[1:]:
                total = ast.BinOp(total, ast.Add(), self.call("len", v), **self.pos)
            long = self.compare(total, [ast.Gt()], [self.K(INLINE_APPEND)])
            self.if_(long, [ast.Expr(self.call("_allocate_text", self.K(fixed), *measured), **self.pos)])
        return ast.JoinedStr(values, **self.pos) if values else self.K("")

    def x_Path(self, e: n.Path, want: bool) -> ast.expr:
        if len(e.names) == 1:
            py = self.lookup(e.names[0])
            if py is not None:
                return self.N(py)
        value = self.static(e.names)
        if value is UNRESOLVED and len(e.names) > 1 and self.static(e.names[:-1]) is not UNRESOLVED:
            owner = self.static(e.names[:-1])
            if is_std_namespace(owner):  # built-in items are all known now: `f64::PI`, `i64::FOO`
                path = "::".join(e.names)
                raise self.error(f"missing item `{path}`: `{'::'.join(e.names[:-1])}` has no `{e.names[-1]}`", e)
        if value is UNRESOLVED:
            return self.call(self.k(LazyPath(self.module, e.names, self.self_type)))
        if type(value) is Static:
            return self.call(self.attr(self.k(value), "read"))
        if type(value) in (int, float, str, bool) or value is None:
            return self.K(value)
        return self.k(value)

    def static(self, names: list[str]) -> Any:
        """Resolve an item path now, or ``UNRESOLVED`` to resolve it when evaluated."""
        with static_resolution():
            try:
                return resolve_path(self.module, names, self.self_type)
            except (RuneError, NotReady):
                return UNRESOLVED

    def x_TupleLit(self, e: n.TupleLit, want: bool) -> ast.expr:
        if not e.items:
            return self.K(None)
        return self.tuple_(share_operands(self, e.items, self.exprs(e.items)))

    def x_VecLit(self, e: n.VecLit, want: bool) -> ast.expr:
        return ast.List(share_operands(self, e.items, self.exprs(e.items)), ast.Load(), **self.pos)

    def x_ObjectLit(self, e: n.ObjectLit, want: bool) -> ast.expr:
        keys = [k for k, _ in e.fields]
        vals = share_operands(self, [v for _, v in e.fields], self.exprs([v for _, v in e.fields]))
        if e.path is None:
            return ast.Dict([self.K(k) for k in keys], vals, **self.pos)
        t = self.static(e.path)
        if (
            isinstance(t, TypeInfo)
            and t.kind == "named"
            and sorted(keys) == sorted(t.fields)
            and len(set(keys)) == len(keys)
        ):
            vals = [self.simple(v) for v in vals] if keys != t.fields else vals
            by_key = dict(zip(keys, vals))
            items = ast.List([by_key[f] for f in t.fields], ast.Load(), **self.pos)
            return self.call("_Instance", self.k(t), items)
        target = (
            self.k(t)
            if t is not UNRESOLVED
            else self.call(self.k(LazyPath(self.module, e.path, self.self_type)))
        )
        return self.call(
            "_new_struct",
            target,
            self.K("::".join(e.path)),
            ast.Dict([self.K(k) for k in keys], vals, **self.pos),
        )

    def x_Block(self, e: n.Block, want: bool) -> ast.expr:
        return self.block(e, want)

    def x_Range(self, e: n.Range, want: bool) -> ast.expr:
        start, end = self.exprs([e.start or n.Lit(e.line, e.col, None), e.end or n.Lit(e.line, e.col, None)])
        return self.call("_RangeValue", start, end, self.K(e.inclusive))

    def x_Cast(self, e: n.Cast, want: bool) -> ast.expr:
        return self.call("_cast", self.expr(e.operand), self.K(e.type_name))

    def x_Is(self, e: n.Is, want: bool) -> ast.expr:
        v = self.expr(e.operand)
        target = self.static(e.type_path)
        resolver = (
            self.k(LazyPath(self.module, e.type_path, self.self_type))
            if target is UNRESOLVED
            else self.k(_Const(target))
        )
        test = self.call("_is_type", v, self.K(e.type_path[-1]), resolver)
        return self.not_(test) if e.negate else test


class _Const:
    """A resolver that returns a value found at compile time."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self) -> Any:
        return self.value
