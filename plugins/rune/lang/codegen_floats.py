"""Float regions: straight-line runs of float arithmetic generated twice, once without checks.

Values read from object fields or passed as arguments have no static type, so every operator
on them tests ``type(x)`` (see ``codegen_ops``). A run of statements that only bind, assign and
store float arithmetic (``+ - * /``, unary ``-``, ``sqrt``/``abs``) over locals, float literals
and fields of objects is generated as::

    ok = False
    if type(a) is float and b_t is float and type(o) is dict:   # the locals the run reads
        try:
            r1 = o['x']                                         # the fields it reads
            ok = type(r1) is float
        except KeyError:
            pass
    if ok:
        <the run with every value known float: plain Python arithmetic>
    else:
        <the run as generated without this module>

When every input is a float so is every value computed (Rune never mixes int and float), so
the first version needs no test and cannot fail except where the second one does (a division
by zero goes to the same helper). The field reads are done first: they are pure, and a read
after a store of the same field name (perhaps on the same object) ends the run.

A run is versioned only when it has some float evidence (a float literal, ``sqrt``, an input
statically float or assigned in an earlier region) and at least two operations, so integer
code keeps a single version.

In a loop, the tests of inputs bound before it that only the run assigns (with floats, in the
first version) are done once, into a flag set before the loop and again after the general
version ran; later runs in the same scope use the flag instead of testing those locals again.

Runs of ``let a = o.x; let b = o.y;`` outside float regions test ``o`` once (``field_reads``)."""

from __future__ import annotations

import ast
import copy

from . import nodes as n
from .codegen_base import CodeGenBase
from .emit import placed
from .flow import assignments

_ARITH = frozenset({"+", "-", "*", "/"})
_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/="})
FLOAT_METHODS = frozenset({"sqrt", "abs"})
_MIN_OPS = 2


# A flag, the locals it proves float when true, and the scope where it is assigned: it holds
# there (and in nested scopes) until one of them is assigned or a loop may assign one.
Fact = tuple[str, frozenset[str], dict[str, str]]


class FastState:
    """While the unchecked version is generated: the temporaries holding the fields read
    (by object local and field name) and the locals known to hold dicts."""

    __slots__ = ("objects", "reads")

    def __init__(self, reads: dict[tuple[str, str], str], objects: set[str]) -> None:
        self.reads = reads
        self.objects = objects


class _Run:
    """What a run of statements reads and writes (Python names of the enclosing locals)."""

    __slots__ = ("assigned", "evidence", "leaves", "lets", "objects", "ops", "reads", "stmts", "stored")

    def __init__(self) -> None:
        self.stmts: list[n.Node] = []
        self.leaves: dict[str, str] = {}  # locals read before the run assigns them -> Rune names
        self.objects: dict[str, None] = {}  # locals whose fields are read or stored
        self.reads: dict[tuple[str, str], None] = {}  # (object, field) read, in order
        self.stored: set[str] = set()  # field names stored
        self.assigned: dict[str, None] = {}  # enclosing locals assigned
        self.lets: set[str] = set()  # Rune names bound by the run
        self.ops = 0
        self.evidence = False


class FloatGen(CodeGenBase):
    """Mixin of ``CodeGen`` for float regions."""

    fast_region: FastState | None = None
    likely_floats: set[str] | None = None  # locals assigned in a float region (unique names)
    float_facts: tuple[Fact, ...] = ()

    def float_region(self, stmts: list[n.Node], start: int) -> tuple[int, bool]:
        """Generate the float region starting at ``stmts[start]`` if it is worth versioning.
        Returns the index after the run of statements that qualify and whether it was
        generated (if not, no run starting inside it is worth it either)."""
        run = _Run()
        end = start
        while end < len(stmts) and self.scan_stmt(stmts[end], run):
            end += 1
        if not run.stmts or run.ops < _MIN_OPS or not run.evidence:
            return end, False
        self.emit_region(run)
        return end, True

    def field_reads(self, stmts: list[n.Node], start: int, end: int) -> int:
        """Generate ``let a = o.x; let b = o.y; ...`` from ``stmts[start:end]`` (two or more
        fields of the same local ``o``) with one test of ``o``'s type; returns the index after
        them (``start`` when there are not two)::

            if type(o) is dict:
                try:
                    a = o['x']; b = o['y']
                except KeyError:                # the reads are pure: all again, checked
                    a = _get_field(o, 'x'); b = _get_field(o, 'y')
            else:
                a = _get_field(o, 'x'); b = _get_field(o, 'y')
        """
        group: list[tuple[str, n.Field]] = []
        obj: str | None = None
        for s in stmts[start:end]:
            if not (isinstance(s, n.Let) and isinstance(s.pattern, n.PBind)):
                break
            v = s.value
            if not (isinstance(v, n.Field) and type(v.name) is str and isinstance(v.target, n.Path)):
                break
            if len(v.target.names) != 1 or (obj is not None and v.target.names[0] != obj):
                break
            if any(name == v.target.names[0] for name, _ in group):
                break  # `o` rebound by the group
            obj = v.target.names[0]
            group.append((s.pattern.name, v))
        py = self.local_py(obj) if obj is not None else None
        if len(group) < 2 or py is None or self.ctx.types.get(py) not in (None, dict):
            return start
        old = self.pos
        targets = [self.fresh(name) for name, _ in group]
        loads: list[ast.stmt] = []
        checked: list[ast.stmt] = []
        for t, (_, v) in zip(targets, group):
            self.at(v.line, v.col)  # where an error points
            loads.append(self.assignment(t, self.sub(self.N(py), self.K(v.name))))
            checked.append(self.assignment(t, self.call("_get_field", self.N(py), self.K(v.name))))
        self.at(group[0][1].line, group[0][1].col)
        o = self.N(py)
        missing = ast.ExceptHandler(self.k(KeyError), None, checked, **self.pos)
        attempt = placed(ast.Try(loads, [missing], [], []), self.pos)
        self.if_(self.is_(self.type_of(o), self.N("dict")), [attempt], [_copy_stmt(c) for c in checked])
        for t, (name, _) in zip(targets, group):
            self.declare(name, py=t)
            self.cache_type(name, t)
        self.pos = old
        return start + len(group)

    # --- scanning ------------------------------------------------------------------------

    def scan_stmt(self, s: n.Node, run: _Run) -> bool:
        """Add statement ``s`` to ``run`` if it belongs in a float region (``run`` unchanged
        otherwise)."""
        e = s.expr if isinstance(s, n.ExprStmt) else s
        if not isinstance(e, (n.Let, n.Assign)):
            return False
        trial = _copy(run) if run.stmts else run  # an empty run is dropped when this fails
        if isinstance(e, n.Let):
            if not (isinstance(e.pattern, n.PBind) and e.value is not None and self.scan(e.value, trial)):
                return False
            trial.lets.add(e.pattern.name)
        elif isinstance(e, n.Assign) and e.op in _ASSIGN_OPS:
            if not self.scan(e.value, trial):
                return False
            t = e.target
            if isinstance(t, n.Path) and len(t.names) == 1:
                if e.op != "=" and not self.scan(t, trial):
                    return False
                if t.names[0] not in trial.lets:
                    py = self.local_py(t.names[0])
                    if py is None or self.ctx.types.get(py) not in (None, float) or py in trial.objects:
                        return False
                    trial.assigned[py] = None
            elif isinstance(t, n.Field) and type(t.name) is str:
                obj = self.scan_object(t.target, trial)
                if obj is None or e.op != "=" and not self.scan_read(obj, t.name, trial):
                    return False
                trial.stored.add(t.name)
            else:
                return False
        else:
            return False
        trial.stmts.append(s)
        if trial is not run:
            for key in _Run.__slots__:
                setattr(run, key, getattr(trial, key))
        return True

    def scan(self, e: n.Node, run: _Run) -> bool:
        """Whether ``e`` is float arithmetic over locals, float literals and fields."""
        if isinstance(e, n.Lit):
            run.evidence = run.evidence or type(e.value) is float
            return type(e.value) is float
        if isinstance(e, n.Path):
            if len(e.names) != 1:
                return False
            name = e.names[0]
            if name in run.lets:
                return True
            py = self.local_py(name)
            if py is None or py in run.objects:
                return False
            kind = self.ctx.types.get(py)
            if kind is float:
                run.evidence = True
                return True
            if kind is not None:
                return False
            if py not in run.assigned:
                run.leaves[py] = name
                run.evidence = run.evidence or (self.likely_floats is not None and py in self.likely_floats)
            return True
        if isinstance(e, n.Binary) and e.op in _ARITH:
            run.ops += 1
            return self.scan(e.left, run) and self.scan(e.right, run)
        if isinstance(e, n.Unary) and e.op == "-":
            run.ops += 1
            return self.scan(e.operand, run)
        if isinstance(e, n.MethodCall) and e.name in FLOAT_METHODS and not e.args:
            run.ops += 1
            run.evidence = True
            return self.scan(e.receiver, run)
        if isinstance(e, n.Field) and type(e.name) is str:
            obj = self.scan_object(e.target, run)
            return obj is not None and self.scan_read(obj, e.name, run)
        return False

    def scan_object(self, e: n.Node, run: _Run) -> str | None:
        """The local ``e`` names if it can be an object of the region (not one of its floats)."""
        if not (isinstance(e, n.Path) and len(e.names) == 1) or e.names[0] in run.lets:
            return None
        py = self.local_py(e.names[0])
        if py is None or py in run.leaves or py in run.assigned or self.ctx.types.get(py) not in (None, dict):
            return None
        run.objects[py] = None
        return py

    def scan_read(self, obj: str, field: str, run: _Run) -> bool:
        if field in run.stored:
            return False  # the value may be the one stored: reads are done first
        run.reads[(obj, field)] = None
        return True

    # --- generation ----------------------------------------------------------------------

    def emit_region(self, run: _Run) -> None:
        """Emit both versions of ``run`` behind the tests of its inputs."""
        reads = {key: self.fresh("f") for key in run.reads}
        checks, covered = self.known_floats(run.leaves)
        hoisted, carried = self.loop_invariant(run, covered)
        checks += [self.is_float(py) for py in run.leaves if py not in hoisted and py not in covered]
        checks += [self.is_(self.type_of(self.N(py)), self.N("dict")) for py in run.objects]
        flag = self.fresh("h") if hoisted else ""
        if hoisted:
            # Tested once before the loop, and again after the general version ran: the flag
            # then tells whether they are floats anywhere after the loop starts.
            self.ctx.loops[-1].pre.append(self.assignment(flag, self.and_(*map(self.is_float, hoisted))))
            checks.insert(0, self.N(flag))
        fast, fast_names = self.region_version(run, reads)
        general: list[ast.stmt] = []
        saved = self.into(general)
        cached = set(self.ctx.typecache)
        names = []
        for s in run.stmts:
            self.stmt(s)
            names.append(self.bound_name(s))
        if carried:
            general.append(self.assignment(flag, self.and_(*map(self.is_float, hoisted))))
        self.out = saved
        rename = {a: b for a, b in zip(fast_names, names) if a is not None and b is not None}
        fast = [_Renamer(rename).visit(stmt) for stmt in fast]
        for py in names:
            if py is not None and py not in cached:
                self.ctx.typecache.pop(py, None)  # not set by the first version: test again
        if self.likely_floats is None:
            self.likely_floats = set()
        self.likely_floats.update([py for py in names if py is not None], run.assigned)
        if hoisted:
            fact = (flag, frozenset(hoisted), self.ctx.blocks[self.ctx.loops[-1].depth - 1])
            self.float_facts = (*self.valid_facts(), fact)
        if not reads:
            if checks:
                self.if_(self.and_(*checks), fast, general)
            else:
                self.out.extend(fast)
            return
        ok = self.fresh("ok")
        self.assign(ok, self.K(False))
        loads = [
            self.assignment(t, self.sub(self.N(obj), self.K(field))) for (obj, field), t in reads.items()
        ]
        all_float = self.and_(
            *(self.is_(self.call("type", self.N(t)), self.N("float")) for t in reads.values())
        )
        missing = ast.ExceptHandler(self.k(KeyError), None, [placed(ast.Pass(), self.pos)], **self.pos)
        attempt = placed(ast.Try([*loads, self.assignment(ok, all_float)], [missing], [], []), self.pos)
        if checks:
            self.if_(self.and_(*checks), [attempt])
        else:
            self.emit(attempt)
        self.if_(self.N(ok), fast, general)

    def valid_facts(self) -> tuple[Fact, ...]:
        """The facts whose flag is assigned in a scope of the code being generated."""
        return tuple(f for f in self.float_facts if any(scope is f[2] for scope in self.ctx.blocks))

    def known_floats(self, leaves: dict[str, str]) -> tuple[list[ast.expr], set[str]]:
        """Flags of float facts that cover some of ``leaves``, and the leaves they cover."""
        flags: list[ast.expr] = []
        covered: set[str] = set()
        for flag, known, _ in self.valid_facts():
            if any(py in known and py not in covered for py in leaves):
                flags.append(self.N(flag))
                covered |= known
        return flags, covered

    def forget_floats(self, py: str) -> None:
        """``py`` was assigned: facts about it no longer hold."""
        if self.float_facts:
            self.float_facts = tuple(f for f in self.float_facts if py not in f[1])

    def is_float(self, py: str) -> ast.expr:
        return self.is_(self.type_of(self.N(py)), self.N("float"))

    def loop_invariant(self, run: _Run, covered: set[str]) -> tuple[list[str], bool]:
        """Inputs of ``run`` whose tests can be done once before the innermost loop: bound
        before it and assigned in it by ``run`` only (where the first version assigns floats:
        then the tests are repeated after the general version). Returns them and whether any
        is assigned."""
        if not self.ctx.loops:
            return [], False
        loop = self.ctx.loops[-1]
        in_loop = self.loop_assigned(loop)
        in_run = assignments(tuple(run.stmts))
        hoisted, carried = [], False
        for py, name in run.leaves.items():
            if py in covered or self.ctx.types.get(py) is float or self.local_py(name, loop.depth) != py:
                continue
            if name in in_loop:
                if py not in run.assigned or len(in_loop[name]) != len(in_run.get(name, ())):
                    continue
                carried = True
            hoisted.append(py)
        return hoisted, carried

    def region_version(
        self, run: _Run, reads: dict[tuple[str, str], str]
    ) -> tuple[list[ast.stmt], list[str | None]]:
        """The statements of ``run`` with every value known float, and the Python names its
        ``let`` statements bound."""
        known = {py: self.ctx.types.get(py) for py in [*run.leaves, *run.assigned, *reads.values()]}
        numeric = {name: self.ctx.numeric.get(name) for name in run.lets}
        for py in known:
            self.ctx.types[py] = float
        for name in run.lets:
            self.ctx.numeric[name] = float
        self.fast_region = FastState(reads, set(run.objects))
        scope = self.ctx.blocks[-1]
        bound = dict(scope)  # the general version binds the same names in the same scope
        stmts: list[ast.stmt] = []
        saved = self.into(stmts)
        names = []
        try:
            for s in run.stmts:
                self.stmt(s)
                names.append(self.bound_name(s))
        finally:
            self.out = saved
            self.fast_region = None
            _restore(self.ctx.types, known)
            _restore(self.ctx.numeric, numeric)
            for bound_py in names:
                if bound_py is not None:
                    self.ctx.types.pop(bound_py, None)
            scope.clear()
            scope.update(bound)
        return stmts, names

    def bound_name(self, s: n.Node) -> str | None:
        """The Python name statement ``s`` just bound with ``let``, if any."""
        if isinstance(s, n.Let) and isinstance(s.pattern, n.PBind):
            return self.local_py(s.pattern.name)
        return None

    def float_typed(self, e: n.Node) -> bool:
        """Whether ``e`` always evaluates to a float (or raises), fields read by the float
        region being generated included."""
        if self.numeric_type(e) is float:
            return True
        if isinstance(e, n.Field):
            return self.fast_region is not None and self.fast_read(e) is not None
        if isinstance(e, n.Binary) and e.op in _ARITH:
            return self.float_typed(e.left) or self.float_typed(e.right)
        if isinstance(e, n.Unary) and e.op == "-":
            return self.float_typed(e.operand)
        if isinstance(e, n.MethodCall) and e.name in FLOAT_METHODS and not e.args:
            return self.static_type(e.receiver) is float  # then the float method is called
        return False

    def fast_read(self, e: n.Field) -> str | None:
        """The temporary holding field ``e`` in the unchecked version of a float region."""
        if self.fast_region is None or not isinstance(e.target, n.Path) or len(e.target.names) != 1:
            return None
        obj = self.local_py(e.target.names[0])
        return self.fast_region.reads.get((obj, e.name)) if obj is not None and type(e.name) is str else None


def _copy_stmt(stmt: ast.stmt) -> ast.stmt:
    """A copy of ``stmt`` (a node may appear only once in the tree)."""
    return copy.deepcopy(stmt)


def _copy(run: _Run) -> _Run:
    trial = _Run()
    for key in _Run.__slots__:
        value = getattr(run, key)
        setattr(trial, key, value.copy() if isinstance(value, (dict, set, list)) else value)
    return trial


def _restore(table: dict[str, type], saved: dict[str, type | None]) -> None:
    for key, old in saved.items():
        if old is None:
            table.pop(key, None)
        else:
            table[key] = old


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node
