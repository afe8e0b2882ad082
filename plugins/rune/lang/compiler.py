"""Compile the AST into a tree of Python closures ``(env) -> value``.

Each function gets a flat list of local slots resolved at compile time; operators call the
checked helpers of ``runtime``; positions are attached to errors as they unwind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import nodes as n
from . import std_methods
from .compile_control import ControlCompiler
from .control import ReturnSignal
from .errors import RuneCompileError, RuneError, RuneRuntimeError
from .functions import make_function, sequence
from .patterns import compile_pattern
from .resolve import LazyConst, LazyUse, resolve_path
from .runtime import BINARY_OPS, display, op_neg, op_not, truthy, type_name
from .scope import FnScope
from .values import Bytes, Char, Function, Future, Instance, Module, Option, RangeValue, Result, TypeInfo

Code = Callable[[list], Any]


def _positioned(e: RuneError, file: str, line: int, col: int) -> None:
    if not e.line:
        e.file, e.line, e.column = file, line, col
        e.cur = (line, col)


class Compiler(ControlCompiler):
    def __init__(self, filename: str, root: Module) -> None:
        self.filename = filename
        self.root = root
        self.module = root
        self.scope = FnScope("main")
        self.self_type: TypeInfo | None = None

    # --- helpers -----------------------------------------------------------------------

    def error(self, message: str, node: n.Node) -> RuneCompileError:
        return RuneCompileError(message, self.filename, node.line, node.col)

    def literal_value(self, v: Any) -> Any:
        if type(v) is n.CharValue:
            return Char(v)
        if type(v) is n.BytesValue:
            return Bytes(v)
        return v

    # --- items -------------------------------------------------------------------------

    def declare_items(self, items: list[n.Node], module: Module) -> list[n.Node]:
        """Register items of a module; returns the remaining (statement) nodes."""
        rest = []
        saved = self.module
        self.module = module
        for item in items:
            if isinstance(item, n.FnDecl):
                module.items[item.name] = self.function(item, None)
            elif isinstance(item, n.StructDecl):
                module.items[item.name] = _type_from_decl(item, None)
            elif isinstance(item, n.EnumDecl):
                enum = TypeInfo(item.name, "enum", [])
                for v in item.variants:
                    enum.variants[v.name] = _type_from_decl(v, item.name)
                module.items[item.name] = enum
            elif isinstance(item, n.ModDecl) and item.name:
                sub = Module(item.name, {"super": module, "crate": self.root})
                module.items[item.name] = sub
                leftovers = self.declare_items(item.items, sub)
                if leftovers:
                    raise self.error("modules may only contain items", leftovers[0])
            elif isinstance(item, n.ModDecl):  # grouped `use a::{b, c}`
                for u in item.items:
                    module.items[u.name] = LazyUse(self, u, module)
            elif isinstance(item, n.UseDecl):
                if item.glob:
                    module.items.setdefault("*globs", []).append(LazyUse(self, item, module))
                else:
                    module.items[item.name] = LazyUse(self, item, module)
            elif isinstance(item, n.ConstDecl):
                module.items[item.name] = LazyConst(self, item, module)
            elif isinstance(item, n.ImplDecl):
                continue  # bound below, once every type of the module is declared
            else:
                rest.append(item)
        for item in items:
            if isinstance(item, n.ImplDecl):
                try:
                    target = resolve_path(module, item.name.split("::"), None)
                except RuneError:
                    target = None
                if isinstance(target, Instance):
                    target = target.type  # a unit struct resolves to its only value
                if not isinstance(target, TypeInfo):
                    raise self.error(f"cannot implement unknown type `{item.name}`", item)
                self.self_type = target
                for fn in item.fns:
                    target.methods[fn.name] = self.function(fn, target)
                self.self_type = None
        self.module = saved
        return rest

    def function(self, decl: n.FnDecl, owner: TypeInfo | None) -> Function:
        outer = self.scope
        self.scope = FnScope(decl.name)
        binders = [compile_pattern(self, p) for p in decl.params]
        body = self.block(decl.body)
        nslots_ref = self.scope
        self.scope = outer
        name = f"{owner.name}::{decl.name}" if owner else decl.name
        fn = make_function(name, self.filename, binders, body, nslots_ref, decl.is_async, decl)
        return fn

    # --- statements --------------------------------------------------------------------

    def block(self, b: n.Block) -> Code:
        self.scope.push()
        items = [s for s in b.stmts if isinstance(s, n.Item)]
        if items:
            local = Module("<block>", dict(self.module.items))
            self.declare_items(items, local)
            saved, self.module = self.module, local
        stmts = [self.stmt(s) for s in b.stmts if not isinstance(s, n.Item)]
        tail = self.expr(b.tail) if b.tail is not None else None
        if items:
            self.module = saved
        self.scope.pop()
        if b.is_async:
            inner = sequence(stmts, tail)
            return lambda env: Future(lambda: inner(env))
        return sequence(stmts, tail)

    def stmt(self, s: n.Node) -> Code:
        if isinstance(s, n.Let):
            value = self.expr(s.value) if s.value is not None else (lambda env: None)
            if isinstance(s.pattern, n.PBind):
                slot = self.scope.declare(s.pattern.name)

                def let(env: list) -> None:
                    env[slot] = value(env)

                return let
            matcher = compile_pattern(self, s.pattern)
            file, line, col = self.filename, s.line, s.col

            def let_pattern(env: list) -> None:
                if not matcher(env, value(env)):
                    raise RuneRuntimeError("let pattern did not match", file, line, col)

            return let_pattern
        if isinstance(s, n.ExprStmt):
            return self.expr(s.expr)
        return self.expr(s)

    # --- expressions -------------------------------------------------------------------

    def expr(self, e: n.Node) -> Code:
        method = getattr(self, "x_" + type(e).__name__, None)
        if method is None:
            raise self.error(f"unsupported expression {type(e).__name__}", e)
        return method(e)

    def x_Lit(self, e: n.Lit) -> Code:
        v = self.literal_value(e.value)
        if type(v) is Bytes:
            return lambda env: Bytes(v)
        return lambda env: v

    def x_Template(self, e: n.Template) -> Code:
        parts = [(lambda env, s=p: s) if isinstance(p, str) else self.expr(p) for p in e.parts]
        return lambda env: "".join([display(p(env)) for p in parts])

    def x_Path(self, e: n.Path) -> Code:
        if len(e.names) == 1:
            name = e.names[0]
            slot = self.scope.lookup(name)
            if slot is not None:
                return lambda env: env[slot]
        resolve = self.static_path(e.names, e)
        return lambda env: resolve()

    def static_path(self, names: list[str], node: n.Node) -> Callable[[], Any]:
        """Resolve a path lazily (items may be declared after use) and cache the result."""
        module = self.module
        self_type = self.self_type
        file, line, col = self.filename, node.line, node.col
        cache: list = []

        def resolve() -> Any:
            if cache:
                return cache[0]
            try:
                value = resolve_path(module, names, self_type)
            except RuneError as err:
                _positioned(err, file, line, col)
                raise
            cache.append(value)
            return value

        return resolve

    def x_TupleLit(self, e: n.TupleLit) -> Code:
        if not e.items:
            return lambda env: None
        items = [self.expr(i) for i in e.items]
        return lambda env: tuple([i(env) for i in items])

    def x_VecLit(self, e: n.VecLit) -> Code:
        items = [self.expr(i) for i in e.items]
        return lambda env: [i(env) for i in items]

    def x_ObjectLit(self, e: n.ObjectLit) -> Code:
        fields = [(k, self.expr(v)) for k, v in e.fields]
        if e.path is None:
            return lambda env: {k: v(env) for k, v in fields}
        resolve = self.static_path(e.path, e)
        file, line, col = self.filename, e.line, e.col

        def struct(env: list) -> Instance:
            t = resolve()
            if not isinstance(t, TypeInfo) or t.kind != "named":
                raise RuneRuntimeError(
                    f"`{'::'.join(e.path)}` is not a struct with named fields", file, line, col
                )
            given = {k: v(env) for k, v in fields}
            missing = [f for f in t.fields if f not in given]
            extra = [k for k in given if k not in t.fields]
            if missing or extra:
                what = f"missing field `{missing[0]}`" if missing else f"unknown field `{extra[0]}`"
                raise RuneRuntimeError(f"{what} in `{t.full_name}`", file, line, col)
            return Instance(t, [given[f] for f in t.fields])

        return struct

    def x_Unary(self, e: n.Unary) -> Code:
        operand = self.expr(e.operand)
        op = op_neg if e.op == "-" else op_not
        file, line, col = self.filename, e.line, e.col

        def unary(env: list) -> Any:
            try:
                return op(operand(env))
            except RuneError as err:
                _positioned(err, file, line, col)
                raise

        return unary

    def x_Binary(self, e: n.Binary) -> Code:
        left, right = self.expr(e.left), self.expr(e.right)
        if e.op == "&&":
            return lambda env: truthy(left(env)) and truthy(right(env))
        if e.op == "||":
            return lambda env: truthy(left(env)) or truthy(right(env))
        op = BINARY_OPS[e.op]
        file, line, col = self.filename, e.line, e.col
        if e.op == "+":

            def add(env: list) -> Any:
                a = left(env)
                b = right(env)
                if type(a) is int and type(b) is int:
                    r = a + b
                    if -9223372036854775808 <= r <= 9223372036854775807:
                        return r
                try:
                    return op(a, b)
                except RuneError as err:
                    _positioned(err, file, line, col)
                    raise

            return add
        if e.op == "<":

            def lt(env: list) -> Any:
                a = left(env)
                b = right(env)
                if type(a) is int and type(b) is int:
                    return a < b
                try:
                    return op(a, b)
                except RuneError as err:
                    _positioned(err, file, line, col)
                    raise

            return lt

        def binary(env: list) -> Any:
            try:
                return op(left(env), right(env))
            except RuneError as err:
                _positioned(err, file, line, col)
                raise

        return binary

    def x_Assign(self, e: n.Assign) -> Code:
        value = self.expr(e.value)
        if e.op != "=":
            op = BINARY_OPS[e.op[:-1]]
            current = self.expr(e.target)
            plain = value
            file, line, col = self.filename, e.line, e.col

            def value(env: list) -> Any:
                try:
                    return op(current(env), plain(env))
                except RuneError as err:
                    _positioned(err, file, line, col)
                    raise

        store = self.store(e.target)

        def assign(env: list) -> None:
            store(env, value(env))

        return assign

    def store(self, t: n.Node) -> Callable[[list, Any], None]:
        file, line, col = self.filename, t.line, t.col
        if isinstance(t, n.Path) and len(t.names) == 1:
            slot = self.scope.lookup(t.names[0])
            if slot is None:
                raise self.error(f"cannot assign to unknown variable `{t.names[0]}`", t)

            def set_local(env: list, v: Any) -> None:
                env[slot] = v

            return set_local
        if isinstance(t, n.Index):
            target, index = self.expr(t.target), self.expr(t.index)

            def set_index(env: list, v: Any) -> None:
                obj, key = target(env), index(env)
                try:
                    std_methods.set_index(obj, key, v)
                except RuneError as err:
                    _positioned(err, file, line, col)
                    raise

            return set_index
        if isinstance(t, n.Field):
            target = self.expr(t.target)
            name = t.name
            try:
                parent_store = self.store(t.target) if type(name) is int else None
            except RuneCompileError:
                parent_store = None

            def set_field(env: list, v: Any) -> None:
                obj = target(env)
                if type(obj) is tuple and parent_store is not None and 0 <= name < len(obj):
                    # Tuples are Python tuples; rebuild and store back into their place.
                    parent_store(env, obj[:name] + (v,) + obj[name + 1 :])
                    return
                try:
                    std_methods.set_field(obj, name, v)
                except RuneError as err:
                    _positioned(err, file, line, col)
                    raise

            return set_field
        if isinstance(t, n.TupleLit):
            stores = [self.store(i) for i in t.items]

            def set_tuple(env: list, v: Any) -> None:
                for s, x in zip(stores, v):
                    s(env, x)

            return set_tuple
        raise self.error("invalid assignment target", t)

    def x_Index(self, e: n.Index) -> Code:
        target, index = self.expr(e.target), self.expr(e.index)
        file, line, col = self.filename, e.line, e.col
        get = std_methods.get_index

        def index_(env: list) -> Any:
            obj = target(env)
            key = index(env)
            if type(obj) is list and type(key) is int and 0 <= key < len(obj):
                return obj[key]
            try:
                return get(obj, key)
            except RuneError as err:
                _positioned(err, file, line, col)
                raise

        return index_

    def x_Field(self, e: n.Field) -> Code:
        target = self.expr(e.target)
        name = e.name
        file, line, col = self.filename, e.line, e.col
        get = std_methods.get_field

        def field(env: list) -> Any:
            try:
                return get(target(env), name)
            except RuneError as err:
                _positioned(err, file, line, col)
                raise

        return field

    def x_Call(self, e: n.Call) -> Code:
        func = self.expr(e.func)
        args = [self.expr(a) for a in e.args]
        file, line, col = self.filename, e.func.line, e.func.col

        def call(env: list) -> Any:
            f = func(env)
            try:
                if type(f) is Function:
                    return f.call(*[a(env) for a in args])
                if callable(f) and not isinstance(f, (Module,)):
                    if isinstance(f, TypeInfo) and f.kind != "tuple":
                        raise RuneRuntimeError(f"`{f.full_name}` is not callable")
                    return f(*[a(env) for a in args])
                raise RuneRuntimeError(f"`{type_name(f)}` is not a function")
            except RuneError as err:
                if not err.line:
                    err.file, err.line, err.column = file, line, col
                err.cur = (line, col)
                raise

        return call

    def x_MethodCall(self, e: n.MethodCall) -> Code:
        receiver = self.expr(e.receiver)
        args = [self.expr(a) for a in e.args]
        name = e.name
        file, line, col = self.filename, e.line, e.col
        invoke = std_methods.call_method
        write_back = None
        if name in std_methods.STRING_MUTATORS and isinstance(e.receiver, (n.Path, n.Field, n.Index)):
            try:
                write_back = self.store(e.receiver)
            except RuneCompileError:
                write_back = None

        def method(env: list) -> Any:
            obj = receiver(env)
            try:
                if write_back is not None and type(obj) is str:
                    new, result = std_methods.mutate_string(obj, name, [a(env) for a in args])
                    write_back(env, new)
                    return result
                return invoke(obj, name, [a(env) for a in args])
            except RuneError as err:
                if not err.line:
                    err.file, err.line, err.column = file, line, col
                err.cur = (line, col)
                raise

        return method

    def x_Try(self, e: n.Try) -> Code:
        operand = self.expr(e.operand)
        file, line, col = self.filename, e.line, e.col

        def try_(env: list) -> Any:
            v = operand(env)
            t = type(v)
            if t is Result:
                if v.is_ok:
                    return v.value
                raise ReturnSignal(v)
            if t is Option:
                if v.is_some:
                    return v.value
                raise ReturnSignal(v)
            raise RuneRuntimeError(f"`?` needs an Option or Result, found `{type_name(v)}`", file, line, col)

        return try_

    def x_Await(self, e: n.Await) -> Code:
        operand = self.expr(e.operand)
        from .asyncio_bridge import await_value

        return lambda env: await_value(operand(env))

    def x_Block(self, e: n.Block) -> Code:
        return self.block(e)

    def x_Closure(self, e: n.Closure) -> Code:
        outer = self.scope
        inner = FnScope("closure", parent=outer)
        self.scope = inner
        binders = [compile_pattern(self, p) for p in e.params]
        body = self.expr(e.body)
        self.scope = outer
        file = self.filename
        captures = inner.captures

        def closure(env: list) -> Function:
            captured = [(dst, env[src]) for src, dst in captures]
            return make_function("closure", file, binders, body, inner, e.is_async, e, captured)

        return closure

    def x_Range(self, e: n.Range) -> Code:
        start = self.expr(e.start) if e.start is not None else (lambda env: None)
        end = self.expr(e.end) if e.end is not None else (lambda env: None)
        inclusive = e.inclusive
        return lambda env: RangeValue(start(env), end(env), inclusive)

    def x_Cast(self, e: n.Cast) -> Code:
        operand = self.expr(e.operand)
        target = e.type_name
        file, line, col = self.filename, e.line, e.col

        def cast(env: list) -> Any:
            try:
                return std_methods.cast(operand(env), target)
            except RuneError as err:
                _positioned(err, file, line, col)
                raise

        return cast

    def x_Is(self, e: n.Is) -> Code:
        operand = self.expr(e.operand)
        names, negate = e.type_path, e.negate
        resolve = self.static_path(names, e)

        def is_(env: list) -> bool:
            v = operand(env)
            r = std_methods.is_type(v, names[-1], resolve)
            return r != negate

        return is_

    def x_Macro(self, e: n.Macro) -> Code:
        from .macros import compile_macro

        return compile_macro(self, e)


def _type_from_decl(d: n.StructDecl, enum_name: str | None) -> TypeInfo:
    t = TypeInfo(d.name, d.kind, list(d.fields), enum_name)
    if d.kind == "unit":
        t.unit_value = Instance(t, [])  # type: ignore[attr-defined]
    return t
