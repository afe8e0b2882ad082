"""AST node classes; every node records the Rune line and column it starts at."""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any


class CharValue(str):
    """A char literal's value in the AST, distinct from a one-letter string."""


class BytesValue(bytes):
    """A byte-string literal's value in the AST."""


@dataclass(eq=False)
class Node:
    line: int
    col: int


# --- expressions -------------------------------------------------------------------------


@dataclass(eq=False)
class Lit(Node):
    value: Any


@dataclass(eq=False)
class Template(Node):
    parts: list  # str | Node


@dataclass(eq=False)
class Path(Node):
    names: list[str]


@dataclass(eq=False)
class TupleLit(Node):
    items: list[Node]


@dataclass(eq=False)
class VecLit(Node):
    items: list[Node]


@dataclass(eq=False)
class ObjectLit(Node):
    path: list[str] | None
    fields: list[tuple[str, Node]]


@dataclass(eq=False)
class Unary(Node):
    op: str
    operand: Node


@dataclass(eq=False)
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass(eq=False)
class Assign(Node):
    op: str  # '=' or '+=' ...
    target: Node
    value: Node


@dataclass(eq=False)
class Index(Node):
    target: Node
    index: Node


@dataclass(eq=False)
class Field(Node):
    target: Node
    name: str | int


@dataclass(eq=False)
class Call(Node):
    func: Node
    args: list[Node]


@dataclass(eq=False)
class MethodCall(Node):
    receiver: Node
    name: str
    args: list[Node]


@dataclass(eq=False)
class Try(Node):
    operand: Node


@dataclass(eq=False)
class Await(Node):
    operand: Node


@dataclass(eq=False)
class Block(Node):
    stmts: list[Node]
    tail: Node | None
    is_async: bool = False


@dataclass(eq=False)
class LetCond(Node):
    pattern: Node
    value: Node


@dataclass(eq=False)
class If(Node):
    cond: Node
    then: Block
    otherwise: Node | None


@dataclass(eq=False)
class While(Node):
    cond: Node
    body: Block
    label: str | None


@dataclass(eq=False)
class Loop(Node):
    body: Block
    label: str | None


@dataclass(eq=False)
class For(Node):
    pattern: Node
    iterable: Node
    body: Block
    label: str | None


@dataclass(eq=False)
class Break(Node):
    label: str | None
    value: Node | None


@dataclass(eq=False)
class Continue(Node):
    label: str | None


@dataclass(eq=False)
class Return(Node):
    value: Node | None


@dataclass(eq=False)
class Yield(Node):
    value: Node | None


@dataclass(eq=False)
class Closure(Node):
    params: list[Node]
    body: Node
    is_async: bool = False
    is_move: bool = False  # `move |..| ..`: the captured values are moved into the closure


@dataclass(eq=False)
class MatchArm(Node):
    pattern: Node
    guard: Node | None
    body: Node


@dataclass(eq=False)
class Match(Node):
    subject: Node
    arms: list[MatchArm]


@dataclass(eq=False)
class Range(Node):
    start: Node | None
    end: Node | None
    inclusive: bool


@dataclass(eq=False)
class Macro(Node):
    name: str
    args: list[Node]
    braced: bool = False  # `assert_eq! { a, b }`: a statement that needs no `;`


@dataclass(eq=False)
class Cast(Node):
    operand: Node
    type_name: str


@dataclass(eq=False)
class Is(Node):
    operand: Node
    type_path: list[str]
    negate: bool


@dataclass(eq=False)
class Select(Node):
    arms: list[tuple[Node, Node, Node]]  # (pattern, future, body)
    default: Node | None


# --- statements and items ----------------------------------------------------------------


@dataclass(eq=False)
class Let(Node):
    pattern: Node
    value: Node | None


@dataclass(eq=False)
class ExprStmt(Node):
    expr: Node


@dataclass(eq=False)
class Attribute(Node):
    """A generic ``#[path(args)]`` attribute; args map key to literal, list or True."""

    path: str
    args: dict[str, Any] = field(default_factory=dict)
    positional: list[Any] = field(default_factory=list)


@dataclass(eq=False)
class Item(Node):
    name: str
    attrs: list[Attribute] = field(default_factory=list, kw_only=True)
    docs: list[str] = field(default_factory=list, kw_only=True)
    public: bool = field(default=False, kw_only=True)


@dataclass(eq=False)
class Param(Node):
    pattern: Node


@dataclass(eq=False)
class FnDecl(Item):
    params: list[Node]
    body: Block
    is_async: bool = False
    has_self: bool = False


@dataclass(eq=False)
class StructDecl(Item):
    kind: str  # 'unit' | 'tuple' | 'named'
    fields: list[str]


@dataclass(eq=False)
class EnumDecl(Item):
    variants: list[StructDecl]


@dataclass(eq=False)
class ImplDecl(Item):
    fns: list[FnDecl]


@dataclass(eq=False)
class ModDecl(Item):
    items: list[Node]


@dataclass(eq=False)
class UseDecl(Item):
    path: list[str]
    alias: str | None
    glob: bool = False


@dataclass(eq=False)
class ConstDecl(Item):
    value: Node


@dataclass(eq=False)
class StaticDecl(Item):
    value: Node | None  # None: uninitialized until assigned


@dataclass(eq=False)
class File(Node):
    items: list[Node]
    docs: list[str]


# --- patterns ----------------------------------------------------------------------------


@dataclass(eq=False)
class PWild(Node):
    pass


@dataclass(eq=False)
class PRest(Node):
    pass


@dataclass(eq=False)
class PLit(Node):
    value: Any


@dataclass(eq=False)
class PBind(Node):
    name: str


@dataclass(eq=False)
class PRange(Node):
    start: Any
    end: Any
    inclusive: bool


@dataclass(eq=False)
class PTuple(Node):
    path: list[str] | None
    items: list[Node]
    rest: bool


@dataclass(eq=False)
class PVec(Node):
    items: list[Node]
    rest: bool


@dataclass(eq=False)
class PObject(Node):
    path: list[str] | None
    fields: list[tuple[str, Node]]
    rest: bool


@dataclass(eq=False)
class PPath(Node):
    names: list[str]


@dataclass(eq=False)
class POr(Node):
    options: list[Node]


# Annotations of fields that never hold a node: walks over the tree skip them.
_LEAF_TYPES = frozenset(
    ["bool", "str", "int", "float", "list[str]", "str | None", "list[str] | None", "str | int"]
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type[Node]) -> tuple[str, ...]:
    """Names of the fields of node class ``cls`` that may hold nodes (or lists / tuples of
    them), in declaration order."""
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name
            for f in dataclass_fields(cls)
            if f.name not in ("line", "col") and f.type not in _LEAF_TYPES
        )
        _CHILD_FIELDS[cls] = names
    return names
