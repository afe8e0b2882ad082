"""Code generation of operators, assignments, indexing and field access.

Arithmetic is emitted as statements into a target variable; for operands of unknown type::

    k = type(a)
    if k is int and type(b) is int:
        t = a + b
        if not -2**63 <= t <= 2**63 - 1: raise _overflow('+')
    else:
        t = a + b if k is float and type(b) is float else _add(a, b)   # the checked helper

An operand of static type int (a literal, a local ``numtypes`` proves int-only, a parameter
tested at entry) keeps only the int path, a float one only the float path (Rune never mixes
them), and float operations on floats stay nested expressions; ints with known bounds (see
``narrowing``) skip the range check. Comparisons are expressions with an int fast path.

Indexing a vector with an int proved ``>= 0`` is a plain Python subscript inside ``try``: only
an index past the end reaches the checked helper (Python would wrap a negative one). Object
fields are read the same way, ``KeyError`` going to the helper."""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING

from . import nodes as n
from .codegen_base import CodeGenBase
from .codegen_sharing import share_local, shared_local
from .emit import I64_MAX, I64_MIN, placed
from .flow import combine, divided
from .limits import ITEM_BLOCK
from .numtypes import ARITH, static_type
from .resolve import Static

if TYPE_CHECKING:
    from .codegen_floats import FastState

_PYOP = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult}
_CMP = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}
HELPERS = {
    "+": "_add",
    "-": "_sub",
    "*": "_mul",
    "/": "_div",
    "%": "_rem",
    "&": "_bitand",
    "|": "_bitor",
    "^": "_bitxor",
    "<<": "_shl",
    ">>": "_shr",
    "==": "_eq",
    "!=": "_ne",
    "<": "_lt",
    "<=": "_le",
    ">": "_gt",
    ">=": "_ge",
}
_BOOL_OPS = frozenset({"&&", "||", "==", "!=", "<", "<=", ">", ">="})


class OpsGen(CodeGenBase):
    """Mixin of ``CodeGen`` for operators and places."""

    fast_region: FastState | None  # see ``FloatGen``

    def static_type(self, e: n.Node) -> type | None:
        """The Python type ``e`` always evaluates to (or it raises), see ``numtypes``."""
        if isinstance(e, n.Path):
            if len(e.names) != 1:
                return None
            py = self.lookup(e.names[0])
            return self.ctx.types.get(py) if py is not None else None
        if isinstance(e, n.Binary):
            if e.op not in ARITH:
                return None
            left = self.static_type(e.left)
            if left is not None:
                return left
            right = self.static_type(e.right)
            return None if right is int else right  # a u64 on the left makes a u64
        if isinstance(e, n.Unary):
            return self.static_type(e.operand) if e.op == "-" else None
        if type(e) is n.Call:
            return self.call_type(e)
        return static_type(e, {})

    def numeric_type(self, e: n.Node) -> type | None:
        kind = self.static_type(e)
        return kind if kind is int or kind is float else None

    def is_bool(self, e: n.Node) -> bool:
        if isinstance(e, n.Binary):
            return e.op in _BOOL_OPS
        if isinstance(e, n.Lit):
            return type(e.value) is bool
        return isinstance(e, (n.Is, n.LetCond))

    def x_Unary(self, e: n.Unary, want: bool) -> ast.expr:
        v = self.expr(e.operand)
        if e.op == "-":
            if type(v) is ast.Constant and (type(v.value) is int or type(v.value) is float) and v.value != I64_MIN:
                return self.K(-v.value)
            kind = self.numeric_type(e.operand)
            if kind is float:
                return ast.UnaryOp(ast.USub(), v, **self.pos)
            if kind is int:
                v = self.simple(v)
                neg = ast.UnaryOp(ast.USub(), v, **self.pos)
                return self.ifexp(
                    self.compare(v, [ast.NotEq()], [self.K(I64_MIN)]), neg, self.call("_neg", v)
                )
            return self.call("_neg", v)
        if self.is_bool(e.operand):
            return self.not_(v)
        return self.call("_not", v)

    def x_Binary(self, e: n.Binary, want: bool) -> ast.expr:
        if e.op in ("&&", "||"):
            return self.logical(e)
        ta, tb = self.arith_type(e.left), self.arith_type(e.right)
        if e.op in _PYOP and ta is float and tb is float:
            # Floats: no test, no range check and no exception, so the operation can stay an
            # expression (operands nest instead of going through temporaries).
            a, b = self.exprs([e.left, e.right])
            return self.binop(a, _PYOP[e.op](), b)
        a, b = (self.simple(v) for v in self.exprs([e.left, e.right]))
        return self.binary(e.op, a, b, ta, tb)

    def arith_type(self, e: n.Node) -> type | None:
        """``int``/``float`` when ``e`` always evaluates to one (or raises), fields read by
        the float region being generated included."""
        kind = self.numeric_type(e)
        return kind if kind is not None else float if self.float_typed(e) else None

    def value_into(self, target: str, e: n.Node) -> None:
        """``target = <e>``, computing arithmetic directly into ``target``."""
        source = shared_local(self, e)
        if source is not None:  # `let b = a`: both hold one string
            share_local(self, source)
        if isinstance(e, n.Binary) and e.op in _PYOP:
            ta, tb = self.arith_type(e.left), self.arith_type(e.right)
            if ta is float and tb is float:
                self.assign(target, self.expr(e))  # one expression (see ``x_Binary``)
                return
            old = self.at(e.line, e.col)
            a, b = (self.simple(v) for v in self.exprs([e.left, e.right]))
            self.arith(e.op, a, b, ta, tb, target)
            self.pos = old
        elif isinstance(e, (n.Index, n.Field)):
            # Reads computed by statements write into ``target`` (no copy from a temporary).
            old = self.at(e.line, e.col)
            if isinstance(e, n.Index):
                v = self.index_into(target, e)
            else:
                v = self.get_field(self.named(self.expr(e.target)), e.name, target)
            if not (type(v) is ast.Name and v.id == target):
                self.assign(target, v)
            self.pos = old
        else:
            self.assign(target, self.expr(e))

    def binary(self, op: str, a: ast.expr, b: ast.expr, ta: type | None, tb: type | None) -> ast.expr:
        """``a op b`` for simple operands whose static types are ``ta``/``tb``."""
        ta, tb = self.operand_type(a, ta), self.operand_type(b, tb)
        if op in _PYOP:
            return self.arith(op, a, b, ta, tb, None)
        slow = self.call(HELPERS[op], a, b)
        kind = ta or tb
        guard = self.guard(kind or int, a, b, ta, tb)
        if op in _CMP:
            if op in ("==", "!=") and kind is None:
                return slow
            fast: ast.expr = self.compare(a, [_CMP[op]()], [b])
            return fast if guard is None else self.ifexp(guard, fast, slow)
        if (
            op in ("%", "/")
            and kind is int
            and type(b) is ast.Constant
            and isinstance(b.value, (int, float))  # `x % "a"` goes to the helper, which reports it
            and b.value > 0
        ):
            pyop = ast.Mod() if op == "%" else ast.FloorDiv()
            known = self.bounds_of(a)
            if known is not None and known[0] >= 0:
                fast = self.binop(a, pyop, b)  # non-negative: Python's floor = Rune's truncation
            else:
                negated = self.binop(ast.UnaryOp(ast.USub(), a, **self.pos), pyop, b)
                fast = self.ifexp(
                    self.compare(a, [ast.GtE()], [self.K(0)]),
                    self.binop(a, pyop, b),
                    ast.UnaryOp(ast.USub(), negated, **self.pos),
                )
            if guard is None and type(b.value) is int and (op == "%" or known is not None):  # int `b`: no guard
                # The remainder has the sign of `a` and is smaller than `b`, a quotient is within
                # its dividend's bounds divided: `s += a % 7` needs only a one-sided overflow check.
                result = self.tmp(fast)
                self.ctx.bounds[result.id] = divided(op, known or (I64_MIN, I64_MAX), b.value)
                return result
            return fast if guard is None else self.ifexp(guard, fast, slow)
        if op in ("%", "/") and kind is int and type(b) is ast.Name:
            # A divisor known only when it runs: the same inline path when it is positive.
            pyop = ast.Mod() if op == "%" else ast.FloorDiv()
            fast = self.binop(a, pyop, b)
            if not self.non_negative(a):
                negated = self.binop(ast.UnaryOp(ast.USub(), a, **self.pos), pyop, b)
                fast = self.ifexp(
                    self.compare(a, [ast.GtE()], [self.K(0)]), fast, ast.UnaryOp(ast.USub(), negated, **self.pos)
                )
            positive = self.compare(b, [ast.Gt()], [self.K(0)])
            return self.ifexp(positive if guard is None else self.and_(guard, positive), fast, slow)
        if op == "/" and kind in (float, None):
            # Float division inline (a zero divisor goes to the helper: inf/NaN like Rune).
            guard = self.guard(float, a, b, ta, tb)
            fast = self.binop(a, ast.Div(), b)
            return self.ifexp(self.and_(guard, b) if guard is not None else b, fast, slow)
        return slow

    def operand_type(self, v: ast.expr, known: type | None) -> type | None:
        """``int``/``float`` when operand ``v`` (a constant or a local) statically has that type."""
        if known is not None:
            return known
        if type(v) is ast.Constant:
            return type(v.value) if type(v.value) in (int, float) else None
        kind = self.ctx.types.get(v.id) if type(v) is ast.Name else None
        return kind if kind is int or kind is float else None

    def guard(
        self, kind: type, a: ast.expr, b: ast.expr, ta: type | None, tb: type | None
    ) -> ast.expr | None:
        """``type(x) is kind`` for the operands not statically of that type."""
        name = "int" if kind is int else "float"
        same = type(a) is ast.Name and type(b) is ast.Name and a.id == b.id  # `x * x`: one test
        operands = ((a, ta),) if same else ((a, ta), (b, tb))
        checks = [self.type_test(v, name) for v, t in operands if t is not kind]
        return self.and_(*checks) if checks else None

    def type_test(self, v: ast.expr, name: str) -> ast.expr:
        """``type(v) is int``; for a parameter never reassigned, a flag computed at entry."""
        if name == "int" and type(v) is ast.Name and v.id in self.ctx.flaggable:
            flag = self.ctx.flags.get(v.id)
            if flag is None:
                flag = self.ctx.flags[v.id] = v.id + "_int"
            return self.N(flag)
        return self.type_is(v, name)

    def arith(
        self, op: str, a: ast.expr, b: ast.expr, ta: type | None, tb: type | None, target: str | None
    ) -> ast.expr:
        """Checked ``+ - *`` into ``target`` (a fresh temporary if None); returns its name."""
        ta, tb = self.operand_type(a, ta), self.operand_type(b, tb)
        t = target or self.fresh("t")
        kind = ta or tb
        interval = self.interval(op, a, b) if kind is int else None
        if interval is not None and target is None:
            self.ctx.bounds[t] = interval
        if kind is float or interval is not None:
            # Floats never overflow; ints with known bounds cannot leave the i64 range.
            path: list[ast.stmt] = [self.assignment(t, self.binop(a, _PYOP[op](), b))]
        else:
            if op in "+-" and self.non_negative(b) or (op == "+" and self.non_negative(a)):
                # Adding (subtracting) something >= 0 can only overflow upwards (downwards).
                bound = (ast.Gt(), self.K(I64_MAX)) if op == "+" else (ast.Lt(), self.K(I64_MIN))
                bad: ast.expr = self.compare(self.N(t), [bound[0]], [bound[1]])
            else:
                bad = self.out_of_range(self.N(t))
            path = [
                self.assignment(t, self.binop(a, _PYOP[op](), b)),
                placed(ast.If(bad, [self.raise_(self.call("_overflow", self.K(op)))], []), self.pos),
            ]
        slow: ast.expr = self.call(HELPERS[op], a, b)
        if kind is None and not (type(a) is ast.Name and a.id in self.ctx.flaggable):
            # Unknown operands: `type(a)` once, then the int path, the float path or the helper.
            k = self.type_of(a)
            k = k if type(k) is ast.Name else self.tmp(k)
            same = type(b) is ast.Name and type(a) is ast.Name and a.id == b.id

            def both(name: str) -> ast.expr:
                return (
                    self.is_(k, self.N(name))
                    if same
                    else self.and_(self.is_(k, self.N(name)), self.type_is(b, name))
                )

            float_value = self.ifexp(both("float"), self.binop(a, _PYOP[op](), b), slow)
            float_path: list[ast.stmt] = [self.assignment(t, float_value)]
            self.if_(both("int"), path, float_path)
            return self.N(t)
        guard = self.guard(kind or int, a, b, ta, tb)
        if guard is None:
            self.out.extend(path)
            return self.N(t)
        if kind is None:
            fast_float = self.binop(a, _PYOP[op](), b)
            is_float = self.guard(float, a, b, None, None)
            assert is_float is not None  # neither operand is known to be a float: both are tested
            slow = self.ifexp(is_float, fast_float, slow)
        self.if_(guard, path, [self.assignment(t, slow)])
        return self.N(t)

    def interval(self, op: str, a: ast.expr, b: ast.expr) -> tuple[int, int] | None:
        """Bounds of ``a op b`` when both operands have known bounds (int literals, range loop
        variables with literal ends, temporaries of those) and the result fits in i64."""
        ba, bb = self.bounds_of(a), self.bounds_of(b)
        if ba is None or bb is None:
            return None
        lo, hi = combine(op, ba, bb)
        return (lo, hi) if I64_MIN <= lo and hi <= I64_MAX else None

    def non_negative(self, v: ast.expr) -> bool:
        known = self.bounds_of(v)
        return known is not None and known[0] >= 0

    def bounds_of(self, v: ast.expr) -> tuple[int, int] | None:
        if type(v) is ast.Constant and type(v.value) is int:
            return v.value, v.value
        if type(v) is ast.Name:
            return self.ctx.bounds.get(v.id)
        return None

    # --- assignments ----------------------------------------------------------------------

    def x_Assign(self, e: n.Assign, want: bool) -> ast.expr:
        t = e.target
        local = self.lookup(t.names[0]) if isinstance(t, n.Path) and len(t.names) == 1 else None
        if e.op == "=":
            if local is not None:
                self.ctx.assigned.add(local)
                self.value_into(local, e.value)
                self.forget(local)
            else:
                source = shared_local(self, e.value)
                if source is not None:
                    share_local(self, source)
                self.store(t, self.expr(e.value))
            return self.K(None)
        op = e.op[:-1]
        b = self.simple(self.expr(e.value))
        tb = self.arith_type(e.value)
        if local is not None:
            self.ctx.assigned.add(local)
            ta = self.ctx.types.get(local)
            ta = ta if ta is int or ta is float else None
            appends = op == "+" and ta is None and tb is not int and tb is not float
            general: list[ast.stmt] = []
            saved = self.into(general) if appends else self.out
            if op in _PYOP:
                self.arith(op, self.N(local), b, ta, tb, local)
            else:
                self.assign(local, self.binary(op, self.N(local), b, ta, tb))
            if appends:  # upstream's ADD_ASSIGN appends to a String in place: every holder sees it
                self.out = saved
                append = ast.Expr(self.call(self.attr(self.N(local), "push_str"), b), **self.pos)
                self.if_(self.type_is(self.N(local), "_SharedString"), [append], general)
            self.forget(local)
            return self.K(None)
        # `a[i] op= v` / `a.f op= v`: evaluate the place once, read, combine and write back.
        if isinstance(t, n.Index):
            obj, idx = self.exprs([t.target, t.index])
            obj, idx = self.named(obj), self.simple(idx)
            current = self.simple(self.call("_get_index", obj, idx))
            self.set_index(
                obj, idx, self.simple(self.binary(op, current, b, None, tb)), self.key_type(t.index)
            )
            return self.K(None)
        if isinstance(t, n.Field):
            obj = self.named(self.expr(t.target))
            current = self.simple(self.get_field(obj, t.name))
            self.store_field(t, obj, self.binary(op, current, b, None, tb))
            return self.K(None)
        static = self.static_item(t)
        if static is not None:
            current = self.simple(self.call(self.attr(static, "read")))
            updated = self.binary(op, current, b, None, tb)
            self.emit(ast.Expr(self.call(self.attr(static, "write"), updated), **self.pos))
            return self.K(None)
        raise self.error("invalid assignment target", t)

    def static_item(self, t: n.Node) -> ast.expr | None:
        """The constant holding the ``static`` item that path ``t`` names, if it names one."""
        if isinstance(t, n.Path) and (len(t.names) > 1 or self.lookup(t.names[0]) is None):
            value = self.static(t.names)
            if type(value) is Static:
                return self.k(value)
        return None

    def store(self, t: n.Node, value: ast.expr) -> None:
        static = self.static_item(t)
        if static is not None:
            self.emit(ast.Expr(self.call(self.attr(static, "write"), value), **self.pos))
        elif isinstance(t, n.Path) and len(t.names) == 1:
            py = self.lookup(t.names[0])
            if py is None:
                raise self.error(f"cannot assign to unknown variable `{t.names[0]}`", t)
            self.ctx.assigned.add(py)
            self.assign(py, value)
            self.forget(py)
        elif isinstance(t, n.Index):
            obj, idx = self.exprs([t.target, t.index])
            obj, idx = self.named(obj), self.simple(idx)
            self.set_index(obj, idx, self.simple(value), self.key_type(t.index), self.static_type(t.target))
        elif isinstance(t, n.Field):
            obj = self.named(self.expr(t.target))
            self.store_field(t, obj, value)
        elif isinstance(t, n.TupleLit):
            v = self.simple(value)
            for i, item in enumerate(t.items):
                self.store(item, self.sub(v, self.K(i)))
        else:
            raise self.error("invalid assignment target", t)

    def key_type(self, e: n.Node) -> type | None:
        kind = self.index_type(e)
        return kind if kind is int or kind is str else None

    def index_type(self, e: n.Node) -> type | None:
        """``static_type`` of an index, where ``x op <int>`` counts as int: it is an i64 or, from
        a u64 ``x``, a u64, which indexes a vector the same way (an int subclass)."""
        kind = self.static_type(e)
        if kind is None and type(e) is n.Binary and e.op in ARITH and self.static_type(e.right) is int:
            return int
        return kind

    def set_index(
        self, obj: ast.expr, idx: ast.expr, value: ast.expr, kind: type | None, target: type | None = None
    ) -> None:
        """``obj[idx] = value`` inline for vectors (in bounds) and objects (string keys);
        ``kind``/``target`` are the static types of the key and the container."""
        place = ast.Subscript(obj, idx, ast.Store(), **self.pos)
        fast: list[ast.stmt] = [ast.Assign([place], value, **self.pos)]
        slow: list[ast.stmt] = [ast.Expr(self.call("_set_index", obj, idx, value), **self.pos)]
        # inline into a small object; a big one grows through `_set_index`, which accounts for each
        # new block of entries (``limits.grow``); a constant key cannot make an object grow
        roomy = None
        if type(idx) is not ast.Constant:
            roomy = self.compare(self.call("len", obj), [ast.Lt()], [self.K(ITEM_BLOCK)])
        if kind is str:
            self.if_(self.and_(self.type_is(obj, "dict"), roomy), fast, slow)
            return
        other: list[ast.stmt] | None = None
        if kind is not int:  # an object with a string key, after the vector tests
            is_obj = self.and_(self.type_is(obj, "dict"), self.type_is(idx, "str"), roomy)
            other = [placed(ast.If(is_obj, copy.deepcopy(fast), copy.deepcopy(slow)), self.pos)]
        self.list_access(obj, idx, kind, target is list, fast, slow, other)

    def list_access(
        self,
        obj: ast.expr,
        idx: ast.expr,
        kind: type | None,
        is_list: bool,
        fast: list[ast.stmt],
        slow: list[ast.stmt],
        other: list[ast.stmt] | None = None,
    ) -> None:
        """``fast`` (indexing ``obj`` with ``idx``, of static type ``kind``) when ``obj`` is a
        vector and ``idx`` an int >= 0, each test left out where proved; inside ``try``, where an
        IndexError (out of range) runs ``slow``, the checked helper raising Rune's error. The
        ``try`` costs nothing until it catches, where ``-1 < i < len(obj)`` costs a call.
        ``other`` (``slow`` if None) runs when a test fails: Python would wrap a negative index."""
        checks = [
            None if is_list else self.type_is(obj, "list"),
            None if kind is int else self.type_is(idx, "int"),
            None if kind is int and self.non_negative(idx) else self.compare(idx, [ast.GtE()], [self.K(0)]),
        ]
        handler = ast.ExceptHandler(self.k(IndexError), None, slow, **self.pos)
        guarded = placed(ast.Try(fast, [handler], [], []), self.pos)
        if all(c is None for c in checks):
            self.emit(guarded)
        else:
            self.if_(self.and_(*checks), [guarded], other if other is not None else copy.deepcopy(slow))

    def store_field(self, t: n.Field, obj: ast.expr, value: ast.expr) -> None:
        if self.fast_region is not None and type(obj) is ast.Name and obj.id in self.fast_region.objects:
            # A dict (tested by the float region being generated) and a float value.
            self.emit(
                ast.Assign([ast.Subscript(obj, self.K(t.name), ast.Store(), **self.pos)], value, **self.pos)
            )
            return
        value = self.simple(value)
        own = self.self_field(obj, t.name)
        if own is not None:
            slow: list[ast.stmt] = [ast.Expr(self.call("_set_field", obj, self.K(t.name), value), **self.pos)]
            place = ast.Subscript(own[0], own[1], ast.Store(), **self.pos)
            self.if_(self.is_not_none(own[0]), [ast.Assign([place], value, **self.pos)], slow)
        elif isinstance(t.target, (n.Path, n.Field, n.Index)) and type(t.name) is int:
            # Tuples are Python tuples: rebuild and store back into their place.
            rebuilt = self.call("_tuple_set", obj, self.K(t.name), value)
            then: list[ast.stmt] = []
            saved = self.into(then)
            self.store(t.target, rebuilt)
            self.out = saved
            other: list[ast.stmt] = [ast.Expr(self.call("_set_field", obj, self.K(t.name), value), **self.pos)]
            self.if_(self.type_is(obj, "tuple"), then, other)
        elif type(t.name) is str:
            place = ast.Subscript(obj, self.K(t.name), ast.Store(), **self.pos)
            slow = [ast.Expr(self.call("_set_field", obj, self.K(t.name), value), **self.pos)]
            self.if_(self.type_is(obj, "dict"), [ast.Assign([place], value, **self.pos)], slow)
        else:
            self.emit(ast.Expr(self.call("_set_field", obj, self.K(t.name), value), **self.pos))

    # --- reads ------------------------------------------------------------------------------

    def x_Index(self, e: n.Index, want: bool) -> ast.expr:
        return self.index_into(None, e)

    def index_into(self, target: str | None, e: n.Index) -> ast.expr:
        """``e``'s value, computed by statements into ``target`` (a fresh temporary if None): a
        vector read inside ``try`` (an IndexError goes to the checked helper, as does every
        other container or index type); the tests an index proved int and >= 0 needs are left out."""
        obj, idx = self.exprs([e.target, e.index])
        obj, idx = self.named(obj), self.simple(idx)
        t = target or self.fresh("t")
        slow: list[ast.stmt] = [self.assignment(t, self.call("_get_index", obj, idx))]
        is_list = self.static_type(e.target) is list
        self.list_access(
            obj, idx, self.index_type(e.index), is_list, [self.assignment(t, self.sub(obj, idx))], slow
        )
        return self.N(t)

    def x_Field(self, e: n.Field, want: bool) -> ast.expr:
        return self.get_field(self.named(self.expr(e.target)), e.name)

    def self_field(self, obj: ast.expr, name: str | int) -> tuple[ast.Name, ast.Constant] | None:
        """The field list of ``self`` and the index of field ``name`` in it, when ``obj`` is the
        ``self`` of a method of a named struct with that field (see ``bind_self_fields``)."""
        own = self.ctx.self_fields
        if own is None or type(obj) is not ast.Name or obj.id != own[0] or name not in own[2]:
            return None
        return self.N(own[1]), self.K(own[2][name])

    def get_field(self, obj: ast.expr, name: str | int, target: str | None = None) -> ast.expr:
        """Object fields inline (computed by statements into ``target``, a fresh temporary if
        None); struct fields, tuple elements and errors via ``_get_field``."""
        slow = self.call("_get_field", obj, self.K(name))
        if type(name) is not str or type(obj) is not ast.Name:
            return slow
        if self.fast_region is not None and (obj.id, name) in self.fast_region.reads:
            return self.N(self.fast_region.reads[(obj.id, name)])  # read and tested by the region
        own = self.self_field(obj, name)
        if own is not None:
            return self.ifexp(self.is_not_none(own[0]), self.sub(*own), slow)
        # A missing key is caught (``try`` costs nothing until then) rather than tested first.
        t = target or self.fresh("t")
        missing = ast.ExceptHandler(self.k(KeyError), None, [self.assignment(t, slow)], **self.pos)
        read = placed(ast.Try([self.assignment(t, self.sub(obj, self.K(name)))], [missing], [], []), self.pos)
        other = self.call("_get_field", obj, self.K(name))
        self.if_(self.type_is(obj, "dict"), [read], [self.assignment(t, other)])
        return self.N(t)
