"""The base every mixin of the code generator derives from: the state they share and the methods
one mixin calls on another.

``CodeGen`` (``codegen``) combines the mixins ``ItemsGen``, ``OpsGen``, ``CallsGen``, ...; each
derives from ``CodeGenBase``, so each sees the node builders of ``Emitter``, the state that
``CodeGen.__init__`` creates (declared here, with the records it holds: ``Pending``, ``Clone``)
and, for the type checker, the methods that another mixin or ``CodeGen`` itself defines (declared
here, defined there). The declarations cost nothing when the generator runs. State that a single
mixin reads (``walked``, ``fast_region``) is declared in that mixin instead.

The module imports no mixin, so every mixin imports it and the import graph stays layered."""

from __future__ import annotations

import ast
import threading
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from . import nodes as n
from .emit import Emitter

if TYPE_CHECKING:
    from .errors import RuneCompileError
    from .scope import FnCtx, LoopCtx, Saved
    from .values import Function, Module, TypeInfo

_Decl = TypeVar("_Decl", n.FnDecl, n.ConstDecl | n.StaticDecl)


class Pending(Generic[_Decl]):
    """A declared function, const or static initializer; its code is generated at its first
    use."""

    decl: _Decl

    def __init__(
        self, decl: _Decl, module: Module, self_type: TypeInfo | None, pyname: str, display: str
    ) -> None:
        self.decl, self.module, self.self_type = decl, module, self_type
        self.pyname, self.display = pyname, display
        self.target: Any = None  # the Function or LazyConst to complete after ``exec``
        self.done = False


class Clone:
    """The integer clone of a function: its Python name, the indexes of the parameters it
    declares ``int`` and the type it always returns (None: unknown); see ``specialize``."""

    __slots__ = ("done", "params", "pyname", "returns")

    def __init__(self, pyname: str, params: list[int]) -> None:
        self.pyname, self.params = pyname, params
        self.returns: type | None = None
        self.done = False  # generated (on its first call, like every function)


class CodeGenBase(Emitter):
    """What the mixins of ``CodeGen`` share; see the module docstring."""

    filename: str
    root: Module
    module: Module  # the module whose items are being generated
    self_type: TypeInfo | None  # the type of the `impl` being generated
    ctx: FnCtx  # the Python function being generated
    pending: list[Pending]
    declared: dict[int, Pending[n.FnDecl]]  # id(Function) -> its declaration
    clones: dict[str, Clone | None]
    defs: list[ast.stmt]
    consts: dict[str, Any]
    const_names: dict[int, str]
    inferring: list[list[str]]
    frames: dict[str, str]
    bindings: list[tuple[Function, str]]
    bound: int
    stubbed: int
    codefile: str
    ns: dict[str, Any]
    lock: threading.RLock

    if TYPE_CHECKING:
        # Defined by ``CodeGen``.
        def error(self, message: str, node: n.Node) -> RuneCompileError: ...
        def k(self, value: Any) -> ast.Name: ...
        def generate(self, p: Pending, clone: Clone | None = None) -> None: ...
        def function(
            self,
            params: list[n.Node],
            body: n.Node,
            pyname: str,
            display: str,
            is_async: bool,
            ints: set[str] | frozenset[str] = frozenset(),
            quick: bool = False,
        ) -> list[ast.stmt]: ...
        def declare(self, name: str, kind: type | None = None, py: str | None = None) -> str: ...
        def lookup(self, name: str, ctx: FnCtx | None = None) -> str | None: ...
        def cache_type(self, name: str, py: str) -> None: ...
        def push(self) -> None: ...
        def pop(self) -> None: ...
        def block(self, b: n.Block, want: bool = True) -> ast.expr: ...
        def stmt(self, s: n.Node) -> None: ...
        def expr(self, e: n.Node, want: bool = True) -> ast.expr: ...
        def exprs(self, nodes: list[n.Node]) -> list[ast.expr]: ...
        def joined(self, parts: list[ast.expr | str]) -> ast.expr: ...
        def static(self, names: list[str]) -> Any: ...

        # Defined by ``ItemsGen`` (codegen_items).
        def stub(self, p: Pending, clone: Clone | None = None) -> Any: ...

        # Defined by ``OpsGen`` (codegen_ops).
        def static_type(self, e: n.Node) -> type | None: ...
        def numeric_type(self, e: n.Node) -> type | None: ...
        def is_bool(self, e: n.Node) -> bool: ...
        def arith(
            self, op: str, a: ast.expr, b: ast.expr, ta: type | None, tb: type | None, target: str | None
        ) -> ast.expr: ...
        def bounds_of(self, v: ast.expr) -> tuple[int, int] | None: ...
        def store(self, t: n.Node, value: ast.expr) -> None: ...

        # Defined by ``CallsGen`` (codegen_calls).
        def method(
            self, obj: ast.expr, name: str, args: list[ast.expr], kind: type | None = None, unused: bool = False
        ) -> ast.expr: ...

        # Defined by ``ControlGen`` (codegen_control).
        def cond(self, c: n.Node) -> ast.expr: ...
        def logical(self, e: n.Binary) -> ast.expr: ...
        def range_item_bounds(self, start: ast.expr, end: ast.expr, inclusive: bool) -> tuple[int, int]: ...
        def loop_assigned(self, loop: LoopCtx) -> dict[str, list[n.Node | None]]: ...

        # Defined by ``NarrowGen`` (narrowing) and ``FloatGen`` (codegen_floats).
        def local_py(self, name: str, depth: int | None = None) -> str | None: ...
        def forget(self, py: str) -> None: ...
        def enter_loop(self, *parts: n.Node) -> None: ...
        def narrow(self, c: n.Node, truth: bool, fragile: bool = False) -> Saved: ...
        def restore_bounds(self, saved: Saved) -> None: ...
        def float_typed(self, e: n.Node) -> bool: ...

        # Defined by ``FusionGen`` (codegen_fusion).
        def fused_chain(self, e: n.MethodCall) -> ast.expr | None: ...

        # Defined by ``PatternGen`` (codegen_patterns).
        def let_pattern(self, p: n.Node, v: ast.expr, message: str) -> None: ...
        def pattern(self, p: n.Node, v: ast.expr) -> ast.expr | None: ...

        # Defined by ``CloneGen`` (specialize).
        def call_type(self, e: n.Call) -> type | None: ...
        def clone_call(self, e: n.Call, arg_type: Any, local: set[str] | None = None) -> Clone | None: ...
