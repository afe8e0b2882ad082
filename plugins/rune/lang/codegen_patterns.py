"""Code generation of patterns: each pattern becomes one side-effect free Python condition over
the subject expression that binds variables with ``:=`` as it matches (``None`` = always)."""

from __future__ import annotations

import ast
from typing import Any

from . import nodes as n
from .codegen_base import CodeGenBase
from .codegen_collections import raw_option_pattern
from .resolve import UNRESOLVED, LazyPath
from .std_types import RANGE_TYPES
from .std_u64 import U64
from .values import Char, Instance, TypeInfo


class PatternGen(CodeGenBase):
    """Mixin of ``CodeGen`` for patterns."""

    or_names: dict[str, str] | None = None

    def let_pattern(self, p: n.Node, v: ast.expr, message: str) -> None:
        """Bind an irrefutable pattern (``let``, parameters, ``for``) or raise if it fails."""
        if isinstance(p, n.PBind):
            self.assign(self.declare(p.name), v)
            return
        test = self.pattern(p, v)
        if test is not None:
            self.if_(self.not_(test), [self.raise_(self.call("_no_match", self.K(message)))])

    def pattern(self, p: n.Node, v: ast.expr) -> ast.expr | None:
        if isinstance(p, (n.PWild, n.PRest)):
            return None
        if isinstance(p, n.PBind):
            shared = self.or_names
            if shared is not None and p.name in shared:
                name = shared[p.name]
            else:
                name = self.declare(p.name)
                if shared is not None:
                    shared[p.name] = name
            return self.bind(name, v)
        if isinstance(p, n.PLit):
            return self.literal_pattern(p.value, v)
        if isinstance(p, n.PRange):
            lo = self.literal(p.start)
            if type(p.start) is U64:
                test = [self.is_(self.type_of(v), self.k(U64))]
            else:
                test = [self.type_is(v, _TYPE_NAMES[type(lo.value) if type(lo) is ast.Constant else Char])]
            if p.end is None:
                test.append(self.compare(lo, [ast.LtE()], [v]))
            else:
                hi = self.literal(p.end)
                test.append(self.compare(lo, [ast.LtE(), ast.LtE() if p.inclusive else ast.Lt()], [v, hi]))
            return self.and_(*test)
        if isinstance(p, n.POr):
            outer = self.or_names
            self.or_names = {} if outer is None else outer
            options = [self.pattern(o, v) for o in p.options]
            self.or_names = outer
            present = [o for o in options if o is not None]
            if len(present) < len(options):  # an option that always matches
                return None
            return self.or_(*present)
        if isinstance(p, n.PVec) or (isinstance(p, n.PTuple) and p.path is None):
            kind = "list" if isinstance(p, n.PVec) else "tuple"
            if kind == "tuple" and not p.items and not p.rest:
                return self.is_(v, self.K(None))  # `()` matches unit
            return self.sequence(v, kind, p.items, p.rest)
        if isinstance(p, n.PObject) and p.path is None:
            tests: list[ast.expr | None] = [self.type_is(v, "dict")]
            if not p.rest:
                tests.append(self.compare(self.call("len", v), [ast.Eq()], [self.K(len(p.fields))]))
            for key, sub in p.fields:
                tests.append(self.compare(self.K(key), [ast.In()], [v]))
            for key, sub in p.fields:
                tests.append(self.pattern(sub, self.sub(v, self.K(key))))
            return self.and_(*tests)
        if isinstance(p, (n.PTuple, n.PObject, n.PPath)):
            return self.typed_pattern(p, v)
        raise self.error(f"unsupported pattern {type(p).__name__}", p)

    def literal(self, value: Any) -> ast.expr:
        if type(value) is n.CharValue:
            return self.k(Char(value))
        if type(value) is U64:
            return self.k(value)  # not a Python constant: a `u64` object
        return self.K(value)

    def literal_pattern(self, value: Any, v: ast.expr) -> ast.expr:
        if type(value) is bool:
            return self.is_(v, self.K(value))
        if type(value) is n.BytesValue:
            return self.and_(self.type_is(v, "_Bytes"), self.compare(v, [ast.Eq()], [self.k(bytes(value))]))
        if type(value) is U64:  # matches a `u64` only, as upstream's `EqUnsigned`
            return self.and_(self.is_(self.type_of(v), self.k(U64)), self.compare(v, [ast.Eq()], [self.k(value)]))
        lit = self.literal(value)
        tname = "_Char" if type(value) is n.CharValue else _TYPE_NAMES[type(value)]
        return self.and_(self.type_is(v, tname), self.compare(v, [ast.Eq()], [lit]))

    def sequence(self, v: ast.expr, kind: str, items: list[n.Node], rest: bool) -> ast.expr:
        count = len(items)
        length = self.call("len", v)
        tests: list[ast.expr | None] = [self.type_is(v, kind)]
        if rest:
            tests.append(self.compare(length, [ast.GtE()], [self.K(count)]))
        else:
            tests.append(self.compare(length, [ast.Eq()], [self.K(count)]))
        for i, item in enumerate(items):
            tests.append(self.pattern(item, self.sub(v, self.K(i))))
        return self.and_(*tests)

    def type_ref(self, names: list[str]) -> tuple[Any, ast.expr]:
        value = self.static(names)
        if value is UNRESOLVED:
            return None, self.call(self.k(LazyPath(self.module, names, self.self_type)))
        return value, self.k(value)

    def typed_pattern(self, p: n.PTuple | n.PObject | n.PPath, v: ast.expr) -> ast.expr | None:
        names = p.names if isinstance(p, n.PPath) else p.path
        assert names is not None  # patterns without a path are matched by ``pattern``
        last = names[-1]
        if len(names) == 1 and last in ("Some", "None"):
            raw = raw_option_pattern(self, p, v)
            if raw is not False:
                return raw
        if len(names) == 1 and last in ("Some", "Ok", "Err", "None"):
            if last == "None":
                return self.and_(self.type_is(v, "_Option"), self.not_(self.attr(v, "is_some")))
            if not isinstance(p, n.PTuple) or len(p.items) != 1:
                raise self.error(f"`{last}` pattern takes one item", p)
            inner = self.pattern(p.items[0], self.attr(v, "value"))
            if last == "Some":
                return self.and_(self.type_is(v, "_Option"), self.attr(v, "is_some"), inner)
            flag = self.attr(v, "is_ok")
            return self.and_(self.type_is(v, "_Result"), flag if last == "Ok" else self.not_(flag), inner)
        target, ref = self.type_ref(names)
        if isinstance(target, TypeInfo) and RANGE_TYPES.get(target.name) is target:
            test = self.call("_is_range_kind", v, self.K(target.name))
            fields = p.fields if isinstance(p, n.PObject) else []
            return self.and_(
                test,
                *(self.pattern(sub, self.attr(v, key)) for key, sub in fields if key in ("start", "end")),
            )
        if isinstance(p, n.PPath):
            if isinstance(target, TypeInfo):
                return self.and_(self.type_is(v, "_Instance"), self.is_(self.attr(v, "type"), ref))
            if isinstance(target, Instance):
                return self.and_(
                    self.type_is(v, "_Instance"), self.is_(self.attr(v, "type"), self.k(target.type))
                )
            return self.call("_match_value", v, ref)
        if isinstance(target, Instance):
            ref = self.k(target.type)
            target = target.type
        values = self.attr(v, "values")
        tests: list[ast.expr | None] = [self.type_is(v, "_Instance"), self.is_(self.attr(v, "type"), ref)]
        if isinstance(p, n.PTuple):
            if isinstance(target, TypeInfo) and target.kind == "tuple":
                # Every instance of the type has its number of fields: decided here.
                count = len(target.fields)
                if count < len(p.items) or (count > len(p.items) and not p.rest):
                    return self.K(False)
            else:
                length = self.call("len", values)
                op = ast.GtE() if p.rest else ast.Eq()
                tests.append(self.compare(length, [op], [self.K(len(p.items))]))
            for i, item in enumerate(p.items):
                tests.append(self.pattern(item, self.sub(values, self.K(i))))
            return self.and_(*tests)
        for key, sub in p.fields:
            if isinstance(target, TypeInfo):
                if key not in target.fields:
                    return self.K(False)
                tests.append(self.pattern(sub, self.sub(values, self.K(target.fields.index(key)))))
            else:
                tests.append(self.pattern(sub, self.call("_struct_field", v, self.K(key))))
        return self.and_(*tests)


_TYPE_NAMES = {int: "int", float: "float", str: "str", bool: "bool", Char: "_Char", n.CharValue: "_Char"}
