"""Name resolution of item paths (``a::b::C``) through modules, types, ``use`` and ``const``."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from . import nodes as n
from . import std_methods
from .errors import RuneError, RuneRuntimeError
from .values import Instance, Module, TypeInfo

UNRESOLVED = object()  # what the compiler gets for a path it leaves to run time


class NotReady(Exception):
    """A ``const`` without a literal value was looked up at compile time."""


class _Static(threading.local):
    active = False


_STATIC = _Static()


@contextlib.contextmanager
def static_resolution() -> Iterator[None]:
    """Resolve paths for the compiler: consts are not evaluated (``NotReady``)."""
    _STATIC.active = True
    try:
        yield
    finally:
        _STATIC.active = False


class LazyUse:
    """A ``use`` import, resolved on first access so declaration order does not matter."""

    def __init__(self, decl: n.UseDecl, module: Module) -> None:
        self.decl, self.module = decl, module

    def resolve(self) -> Any:
        return resolve_path(self.module, self.decl.path, None, skip_use=self)


class LazyConst:
    """A ``const`` item: ``fn`` is its compiled initializer, run on first use. A literal
    initializer is known at once, so the compiler can inline it."""

    def __init__(self, value: n.Node) -> None:
        self.fn: Any = None
        self.done = False
        self.value: Any = None
        if isinstance(value, n.Unary) and value.op == "-" and isinstance(value.operand, n.Lit):
            value = (
                n.Lit(value.line, value.col, -value.operand.value)
                if type(value.operand.value) in (int, float)
                else value
            )
        if isinstance(value, n.Lit) and type(value.value) in (int, float, str, bool):
            self.done, self.value = True, value.value

    def resolve(self) -> Any:
        if not self.done:
            if self.fn is None or _STATIC.active:
                raise NotReady
            from .limits import STATE

            self.value = self.fn(STATE.run)
            self.done = True
        return self.value


class Static:
    """A ``static`` item: one mutable slot per compiled unit, shared by every call into it.
    ``fn`` is its compiled initializer (None without one), run by the first read of the slot
    while it is still empty; an assignment fills the slot without running it."""

    __slots__ = ("fn", "full", "name", "value")

    def __init__(self, name: str) -> None:
        self.name = name
        self.fn: Any = None
        self.full = False
        self.value: Any = None

    def read(self) -> Any:
        if not self.full:
            if self.fn is None:
                raise RuneRuntimeError(f"reading uninitialized static `{self.name}`")
            from .limits import STATE

            self.value = self.fn(STATE.run)
            self.full = True
        return self.value

    def write(self, value: Any) -> None:
        self.value, self.full = value, True


class LazyPath:
    """An item path the compiler could not resolve (yet): resolved and cached when evaluated,
    so a missing item is a runtime error at the place it is used."""

    __slots__ = ("cache", "module", "names", "self_type")

    def __init__(self, module: Module, names: list[str], self_type: TypeInfo | None) -> None:
        self.module, self.names, self.self_type = module, names, self_type
        self.cache: list = []

    def __call__(self) -> Any:
        if self.cache:
            value = self.cache[0]
        else:
            value = resolve_path(self.module, self.names, self.self_type)
            if not isinstance(value, RuneError):
                self.cache.append(value)
        return value.read() if type(value) is Static else value  # a static's slot may change


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
        if (
            (nv is _MISSING or nv is None)
            and (isinstance(v, dict) or (isinstance(v, Module) and v.name in _BUILTIN_TYPE_MODULES))
            and _has_builtin_method(v, name)
        ):
            nv = std_methods.method_as_function(name)
        if nv is _MISSING or nv is None:
            raise RuneRuntimeError(f"missing item `{'::'.join(names)}`")
        v = nv
    if isinstance(v, TypeInfo) and v.kind == "unit" and v.enum_name is not None:
        return v.unit_value
    if isinstance(v, TypeInfo) and v.kind == "unit" and len(names) >= 1 and not v.methods.get("__ctor__"):
        return v.unit_value
    return v


def _has_builtin_method(namespace: Any, name: str) -> bool:
    from .std_modules import has_builtin_method

    return has_builtin_method(namespace, name)


def _root_of(module: Module) -> Module:
    while "crate" in module.items and module.items["crate"] is not module:
        module = module.items["crate"]
    return module
