"""Code generation of items: declaration of functions, types, modules, ``use`` and ``const``,
and the lazy materialization of function bodies.

``compile_source`` only parses and declares; each function is generated and compiled (with the
closures and nested items it contains) on its first call, through a stub installed under its
Python name in the unit's namespace. A compile error in a body surfaces at that first call, or
at once with ``compile_all``."""

from __future__ import annotations

import ast
from typing import Any

from . import nodes as n
from .codegen_base import Clone, CodeGenBase, Pending
from .errors import RuneError
from .namespace import helpers
from .resolve import LazyConst, LazyUse, Static, resolve_path
from .values import Function, Instance, Module, TypeInfo, _with_run

_NAMED_ITEMS = (n.FnDecl, n.StructDecl, n.EnumDecl, n.ModDecl, n.ConstDecl, n.StaticDecl)
"""Items that define a name in their module; upstream Rune rejects a name defined twice."""


class ItemsGen(CodeGenBase):
    """Mixin of ``CodeGen`` for items and materialization."""

    def declare_items(self, items: list[n.Node], module: Module) -> list[n.Node]:
        """Register the items of a module (code comes later); returns the statement nodes."""
        rest = []
        saved = self.module
        self.module = module
        defined: dict[str, n.Node] = {}
        for item in items:
            if isinstance(item, _NAMED_ITEMS) and item.name:
                first = defined.setdefault(item.name, item)
                if first is not item:
                    raise self.error(f"`{item.name}` is defined twice in this module (first at line {first.line}); rename one of them", item)
            if isinstance(item, n.FnDecl):
                module.items[item.name] = self.declare_fn(item, None)
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
                    assert isinstance(u, n.UseDecl)  # the parser groups only uses
                    module.items[u.name] = LazyUse(u, module)
            elif isinstance(item, n.UseDecl):
                if item.glob:
                    module.items.setdefault("*globs", []).append(LazyUse(item, module))
                else:
                    module.items[item.name] = LazyUse(item, module)
            elif isinstance(item, n.ConstDecl):
                const = LazyConst(item.value)
                p = Pending(item, module, None, self.fresh("C"), item.name)
                p.target = const
                self.pending.append(p)
                module.items[item.name] = const
            elif isinstance(item, n.StaticDecl):
                static = Static(item.name)
                if item.value is not None:
                    p = Pending(item, module, None, self.fresh("S"), item.name)
                    p.target = static
                    self.pending.append(p)
                module.items[item.name] = static
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
                for fn in item.fns:
                    target.methods[fn.name] = self.declare_fn(fn, target)
        self.module = saved
        return rest

    def declare_fn(self, decl: n.FnDecl, owner: TypeInfo | None) -> Function:
        display = f"{owner.name}::{decl.name}" if owner else decl.name
        p = Pending(decl, self.module, owner, self.fresh("F_" + decl.name), display)
        fn = Function(display, call=unready, is_async=decl.is_async)
        p.target = fn
        self.declared[id(fn)] = p
        self.pending.append(p)
        return fn

    # --- lazy materialization -------------------------------------------------------------

    def build(self, codefile: str) -> dict[str, Any]:
        """Create the unit's namespace with a stub for every declared item."""
        self.codefile = codefile
        self.ns = helpers()
        self.install_stubs()
        return self.ns

    def install_stubs(self) -> None:
        for p in self.pending[self.stubbed :]:
            stub = self.stub(p)
            if isinstance(p.target, (LazyConst, Static)):
                p.target.fn = stub
            else:
                self.ns[p.pyname] = stub
                p.target.fn = p.target.direct = stub
                p.target.call = _with_run(stub)
        self.stubbed = len(self.pending)

    def stub(self, p: Pending, clone: Clone | None = None) -> Any:
        """A stand-in that generates the function of ``p`` (or its ``clone``) at its first
        call, then calls it."""

        def first_call(run: Any, *args: Any) -> Any:
            return self.materialize(p, clone)(run, *args)

        return first_call

    def compile_all(self) -> None:
        i = 0
        while i < len(self.pending):
            self.materialize(self.pending[i])
            i += 1

    def materialize(self, p: Pending, clone: Clone | None = None) -> Any:
        """Generate, compile and bind the code of ``p`` (or of its ``clone``); returns its
        Python function."""
        name = p.pyname if clone is None else clone.pyname
        with self.lock:
            if not (p.done if clone is None else clone.done):
                self.defs = []
                saved = (self.module, self.self_type, self.ctx, self.pos)
                try:
                    self.generate(p, clone)
                finally:
                    self.module, self.self_type, self.ctx, self.pos = saved
                code = compile(ast.Module(body=self.defs, type_ignores=[]), self.codefile, "exec")
                # Constants move to the namespace once (which keeps them alive for
                # ``const_names``), not at every later function.
                self.ns.update(self.consts)
                self.consts.clear()
                exec(code, self.ns)  # noqa: S102 - our own generated code, restricted globals
                for fn, pyname in self.bindings[self.bound :]:
                    fn.fn = fn.direct = self.ns[pyname]
                    fn.call = _with_run(fn.fn)
                self.bound = len(self.bindings)
                self.install_stubs()  # items declared in the body just generated
                if clone is not None:
                    clone.done = True
                else:
                    p.done = True
                    # Host code calls the entry that ticks, when there is one (see ``ticks``).
                    p.target.fn = self.ns.get(name + "_entry", self.ns[name])
                    if isinstance(p.target, Function):
                        p.target.direct = self.ns[name]
                        p.target.call = _with_run(p.target.fn)
            return self.ns[name] if clone is not None else p.target.fn


def unready(*args: Any) -> Any:
    raise RuntimeError("function called before its unit was compiled")


def _type_from_decl(d: n.StructDecl, enum_name: str | None) -> TypeInfo:
    t = TypeInfo(d.name, d.kind, list(d.fields), enum_name)
    if d.kind == "unit":
        t.unit_value = Instance(t, [])
    return t
