"""Code generation of calls: direct calls of functions known at compile time (to their integer
clone when the arguments allow, see ``specialize``), calls of values, method calls with inline
paths for `len`, `push`, `push_str` and float methods, closures and async blocks."""

from __future__ import annotations

import ast
import math
from typing import Any

from . import nodes as n
from . import std_methods
from .codegen_base import CodeGenBase
from .codegen_collections import fast_method
from .codegen_items import unready
from .codegen_sharing import (
    KEYED_METHODS,
    READING_METHODS,
    native_reads_text,
    share_local,
    share_operands,
    text_operand,
)
from .limits import INLINE_APPEND, ITEM_BLOCK, MAX_LENGTH
from .resolve import UNRESOLVED
from .scope import FnCtx
from .values import Function, Module, TypeInfo

# Float methods called inline on floats: the namespace binds these names to the functions of
# the f64 method table.
_FLOAT_METHODS = {"sqrt": "_f_sqrt", "abs": "_f_abs"}


class CallsGen(CodeGenBase):
    """Mixin of ``CodeGen`` for calls, method calls and closures."""

    def x_Call(self, e: n.Call, want: bool) -> ast.expr:
        old = self.at(e.func.line, e.func.col)
        func = e.func
        target: Any = UNRESOLVED
        if isinstance(func, n.Path) and not (len(func.names) == 1 and self.lookup(func.names[0])):
            target = self.static(func.names)
        if target is UNRESOLVED:
            vals = [self.simple(v) for v in self.exprs([func, *e.args])]
            f, args = vals[0], share_operands(self, e.args, vals[1:])
            v: ast.expr = self.ifexp(
                self.type_is(f, "_Function"),
                self.call(self.attr(f, "fn"), self.N("_s"), *args),
                self.call("_call_value", f, *args),
            )
            self.pos = old
            return v
        reads_text = native_reads_text(target)
        args = self.exprs(e.args)
        args = [text_operand(self, a) for a in args] if reads_text else share_operands(self, e.args, args)
        p = self.declared.get(id(target)) if type(target) is Function else None
        if p is not None:
            arity = len(p.decl.params)
            clone = self.clone_call(e, self.static_type)
            if arity != len(args):
                v = self.call("_arity", self.K(target.name), self.K(arity), self.K(len(args)))
            else:
                v = self.call(clone.pyname if clone else p.pyname, self.N("_s"), *args)
        elif isinstance(target, TypeInfo) and target.kind != "tuple":
            v = self.call("_not_callable", self.k(target))
        elif callable(target) and not isinstance(target, Module):
            v = self.call(self.k(target), *args)
        else:
            v = self.call("_call_value", self.k(target), *args)
        self.pos = old
        return v

    def x_MethodCall(self, e: n.MethodCall, want: bool) -> ast.expr:
        fused = self.fused_chain(e)
        if fused is not None:
            return fused
        vals = self.exprs([e.receiver, *e.args])
        obj, args = self.simple(vals[0]), vals[1:]
        if e.name not in READING_METHODS:  # the method may keep its arguments
            args = share_operands(self, e.args, args, 1 if e.name in KEYED_METHODS else 0)
        kind = self.static_type(e.receiver)
        place = isinstance(e.receiver, (n.Path, n.Field, n.Index))
        if e.name in std_methods.STRING_MUTATORS and place and kind in (None, str):
            return self.string_mutator(e, obj, [self.simple(a) for a in args])
        return self.method(obj, e.name, args, kind, unused=not want)

    def method(
        self, obj: ast.expr, name: str, args: list[ast.expr], kind: type | None = None, unused: bool = False
    ) -> ast.expr:
        """``obj.name(args)`` for a simple ``obj`` of static type ``kind``: inline paths for
        `len` and for `push` on vectors (and collections: ``unused`` when the value is not)."""
        if name == "len" and not args:
            if kind is str:  # a String's length is in UTF-8 bytes
                return self.call("len", self.call(self.attr(obj, "encode")))
            fast: ast.expr = self.call("len", obj)
            if kind in (list, dict):
                return fast
            slow = self.call("_invoke", self.N("_s"), obj, self.K(name))
            return self.ifexp(self.type_is(obj, "list"), fast, slow)
        if name == "push" and len(args) == 1:
            arg = self.simple(args[0])
            # inline into a small vector; a big one grows through `_push`, which accounts for
            # each new block of items (``limits.grow``)
            room = self.compare(self.call("len", obj), [ast.Lt()], [self.K(ITEM_BLOCK)])
            test = room if kind is list else self.and_(self.type_is(obj, "list"), room)
            return self.ifexp(
                test,
                self.call(self.attr(obj, "append"), arg),
                self.call("_push", self.N("_s"), obj, arg),
            )
        if name in _FLOAT_METHODS and not args and kind in (float, None):
            fast = self.call(_FLOAT_METHODS[name], obj)
            if name == "sqrt":  # NaN below zero, as in Rust (`math.sqrt` raises)
                fast = self.ifexp(self.compare(obj, [ast.GtE()], [self.K(0.0)]), fast, self.k(math.nan))
            if kind is float:
                return fast
            return self.ifexp(
                self.type_is(obj, "float"), fast, self.call("_invoke", self.N("_s"), obj, self.K(name))
            )
        collection = fast_method(self, obj, name, args, unused) if kind is None else None
        if collection is not None:  # a HashMap, HashSet or VecDeque method
            return collection
        if kind is None and name not in std_methods.STRING_MUTATORS:
            return self.struct_method(obj, name, args)
        return self.call("_invoke", self.N("_s"), obj, self.K(name), *args)

    def struct_method(self, obj: ast.expr, name: str, args: list[ast.expr]) -> ast.expr:
        """``obj.name(args)`` calling a method of a struct's own ``impl`` inline (what ``_invoke``
        does first; a call site in Rune code, so the method's ``direct`` code), everything else
        through ``_invoke``."""
        args = [self.simple(a) for a in args]
        methods = self.attr(self.attr(obj, "type"), "methods")
        found = self.tmp(
            self.ifexp(
                self.type_is(obj, "_Instance"), self.call(self.attr(methods, "get"), self.K(name)), self.K(None)
            )
        )
        return self.ifexp(
            self.type_is(found, "_Function"),
            self.call(self.attr(found, "direct"), self.N("_s"), obj, *args),
            self.call("_invoke", self.N("_s"), obj, self.K(name), *args),
        )

    def string_mutator(self, e: n.MethodCall, obj: ast.expr, args: list[ast.expr]) -> ast.expr:
        """Strings are values here: ``s.push_str(x)`` stores the new string back into ``s``."""
        result = self.fresh("m")
        new = self.fresh("s")
        general: list[ast.stmt] = []
        saved = self.into(general)
        then: list[ast.stmt] = []
        self.into(then)
        unpack = ast.Tuple(
            [ast.Name(new, ast.Store(), **self.pos), ast.Name(result, ast.Store(), **self.pos)],
            ast.Store(),
            **self.pos,
        )
        listed = ast.List(args, ast.Load(), **self.pos)
        self.emit(ast.Assign([unpack], self.call("_mutate_string", obj, self.K(e.name), listed), **self.pos))
        self.store(e.receiver, self.N(new))
        other: list[ast.stmt] = []
        self.into(other)
        self.assign(result, self.method(obj, e.name, args))
        self.out = general
        if e.name == "push" and len(args) == 1:
            # A vector's `push` (far more common than a string's) is tested first.
            by_kind: list[ast.stmt] = []
            self.into(by_kind)
            self.if_(self.type_is(obj, "str"), then, other)
            appended: list[ast.stmt] = []
            self.into(appended)
            self.emit(ast.Expr(self.call(self.attr(obj, "append"), args[0]), **self.pos))
            self.assign(result, self.K(None))
            self.out = general
            room = self.compare(self.call("len", obj), [ast.Lt()], [self.K(ITEM_BLOCK)])
            self.if_(self.and_(self.type_is(obj, "list"), room), appended, by_kind)
        else:
            self.if_(self.type_is(obj, "str"), then, other)
        self.out = saved
        if (
            e.name == "push_str"
            and len(args) == 1
            and type(obj) is ast.Name
            and self.lookup_local(e.receiver) == obj.id
        ):
            # `s = s + x` on the variable itself: CPython appends in place.  Only small appends
            # to strings well below the cap: the others are checked before they are built.
            fast: list[ast.stmt] = []
            self.into(fast)
            self.assign(obj.id, self.binop(obj, ast.Add(), args[0]))
            self.assign(result, self.K(None))
            self.out = saved
            small = self.compare(self.call("len", args[0]), [ast.Lt()], [self.K(INLINE_APPEND)])
            roomy = self.compare(self.call("len", obj), [ast.Lt()], [self.K(MAX_LENGTH - INLINE_APPEND)])
            both_str = self.and_(self.type_is(obj, "str"), self.type_is(args[0], "str"), small, roomy)
            self.if_(both_str, fast, general)
        else:
            self.out.extend(general)
        return self.N(result)

    def lookup_local(self, e: n.Node) -> str | None:
        if isinstance(e, n.Path) and len(e.names) == 1:
            return self.lookup(e.names[0])
        return None

    def x_Await(self, e: n.Await, want: bool) -> ast.expr:
        return self.call("_await", self.expr(e.operand))

    def x_Closure(self, e: n.Closure, want: bool) -> ast.expr:
        return self.closure(e.params, e.body, e.is_async, "closure", e.is_move)

    def async_block(self, b: n.Block) -> ast.expr:
        inner = n.Block(b.line, b.col, b.stmts, b.tail, False)
        fn = self.closure([], inner, False, "async block")
        return self.call("_Future", self.attr(fn, "fn"), self.N("_s"))

    def closure(
        self, params: list[n.Node], body: n.Node, is_async: bool, display: str, is_move: bool = False
    ) -> ast.expr:
        """A factory at module level takes the captured values and returns the closure's code;
        captures assigned inside the closure are copied into locals at each call."""
        outer = self.ctx
        self.ctx = FnCtx(outer, {})
        self.ctx.loops = []
        pyname = self.fresh("closure")
        defs = self.function(params, body, pyname, display, is_async)
        ctx = self.ctx
        self.ctx = outer
        captured = list(ctx.captures)
        body_tail = body.tail if isinstance(body, n.Block) and not body.stmts else body
        returns_bool = body_tail is not None and self.is_bool(body_tail) and not is_async
        if not captured:
            self.defs.extend(defs)
            fn = Function(display, call=unready, is_async=is_async, returns_bool=returns_bool)
            self.bindings.append((fn, pyname))
            return self.k(fn)
        factory = self.fresh("make")
        for name in captured:
            if self.ctx.types.get(name) not in (int, float, list, dict):
                share_local(self, name)
        fparams = []
        for name in captured:
            if name in ctx.assigned:
                fparams.append(name + "_c")
                body_def = defs[0]
                assert isinstance(body_def, ast.FunctionDef)
                body_def.body.insert(0, self.assignment(name, self.N(name + "_c")))
            else:
                fparams.append(name)
        self.defs.append(self.fndef(factory, fparams, [*defs, ast.Return(self.N(pyname), **self.pos)]))
        return self.call(
            "_Function",
            self.K(display),
            self.K(None),
            self.K(is_async),
            self.call(factory, *(self.call("_take", self.N(c)) if is_move else self.N(c) for c in captured)),
            self.K(returns_bool),
        )
