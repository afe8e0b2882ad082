"""Name resolution of item paths (``a::b::C``) through modules, types, ``use`` and ``const``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import nodes as n
from . import std_methods
from .errors import RuneRuntimeError
from .scope import FnScope
from .values import Instance, Module, TypeInfo

if TYPE_CHECKING:
    from .compiler import Compiler


class LazyUse:
    """A ``use`` import, resolved on first access so declaration order does not matter."""

    def __init__(self, compiler: Compiler, decl: n.UseDecl, module: Module) -> None:
        self.compiler, self.decl, self.module = compiler, decl, module

    def resolve(self) -> Any:
        return resolve_path(self.module, self.decl.path, None, skip_use=self)


class LazyConst:
    def __init__(self, compiler: Compiler, decl: n.ConstDecl, module: Module) -> None:
        saved = compiler.module, compiler.scope
        compiler.module, compiler.scope = module, FnScope("const")
        self.code = compiler.expr(decl.value)
        self.scope = compiler.scope
        compiler.module, compiler.scope = saved
        self.done = False
        self.value = None

    def resolve(self) -> Any:
        if not self.done:
            self.value = self.code([None] * self.scope.nslots)
            self.done = True
        return self.value


def _lookup(module: Module, name: str, skip: Any = None) -> Any:
    from .std_modules import PRELUDE, ROOTS

    v = module.items.get(name, _MISSING)
    if v is skip:
        v = _MISSING
    if v is _MISSING:
        for glob in module.items.get("*globs", ()):
            base = glob.resolve()
            inner = (
                base.items.get(name, _MISSING)
                if isinstance(base, Module)
                else (base.variants.get(name, _MISSING) if isinstance(base, TypeInfo) else _MISSING)
            )
            if inner is not _MISSING:
                v = inner
                break
    if v is _MISSING:
        v = PRELUDE.get(name, _MISSING)
    if v is _MISSING:
        v = ROOTS.get(name, _MISSING)
    if isinstance(v, (LazyUse, LazyConst)):
        v = v.resolve()
    return v


_MISSING = object()
_BUILTIN_TYPE_MODULES = frozenset(
    {"i64", "u64", "f64", "char", "string", "vec", "object", "option", "result"}
)


def resolve_path(module: Module, names: list[str], self_type: TypeInfo | None, skip_use: Any = None) -> Any:
    """Find the value a path names: locals were handled by the compiler, this walks items."""
    first = names[0]
    if first == "Self":
        if self_type is None:
            raise RuneRuntimeError("`Self` used outside of an impl block")
        v: Any = self_type
    elif first == "crate":
        v = _root_of(module)
    elif first == "self" and len(names) > 1:
        v = module
    else:
        v = _lookup(module, first, skip_use)
        if v is _MISSING:
            raise RuneRuntimeError(f"missing item `{'::'.join(names)}`")
    for name in names[1:]:
        if isinstance(v, Instance) and v.type.kind == "unit":
            v = v.type
        if isinstance(v, Module):
            nv = _lookup(v, name) if name != "super" else v.items.get("super", _MISSING)
        elif isinstance(v, TypeInfo):
            nv = v.variants.get(name, _MISSING)
            if nv is _MISSING:
                nv = v.methods.get(name, _MISSING)
            if nv is _MISSING:
                nv = std_methods.type_function(v, name)
        else:
            nv = std_methods.static_function(v, name)
        if (nv is _MISSING or nv is None) and (
            isinstance(v, dict) or (isinstance(v, Module) and v.name in _BUILTIN_TYPE_MODULES)
        ):
            nv = std_methods.method_as_function(name)
        if nv is _MISSING or nv is None:
            raise RuneRuntimeError(f"missing item `{'::'.join(names)}`")
        v = nv
    if isinstance(v, TypeInfo) and v.kind == "unit" and v.enum_name is not None:
        return v.unit_value  # type: ignore[attr-defined]
    if isinstance(v, TypeInfo) and v.kind == "unit" and len(names) >= 1 and not v.methods.get("__ctor__"):
        return v.unit_value  # type: ignore[attr-defined]
    return v


def _root_of(module: Module) -> Module:
    while "crate" in module.items and module.items["crate"] is not module:
        module = module.items["crate"]
    return module
