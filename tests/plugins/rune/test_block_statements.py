"""A block-like expression statement ends the statement: what follows it is not an index or a call.

Upstream (``ast/expr.rs``, ``Expr::is_callable``): a ``while`` or ``for`` loop is never indexed or
called; ``loop``, ``if``, ``match``, ``select`` and a block are not when they start a statement,
so ``for x in v {} [a, b]`` is a loop and then the array ``[a, b]``. Elsewhere (``let x = if ..
{ .. } else { .. }[0]``) they are ordinary expressions.
"""

from __future__ import annotations

import pytest
from toolmesh.plugins.rune.lang import compile_source
from toolmesh.plugins.rune.lang import nodes as n
from toolmesh.plugins.rune.lang.parser import parse


def _main(body: str) -> object:
    return compile_source(f"fn main() {{ let a = 1; let b = 2; {body} }}", "stmt.rn").call("main")


@pytest.mark.parametrize(
    "statement",
    [
        "for i in 0..2 {}",
        "while false {}",
        "loop { break; }",
        "if a > b {}",
        "if a > b {} else {}",
        "match a { _ => () }",
        "{}",
        "'outer: for i in 0..2 {}",
    ],
)
def test_array_after_a_block_like_statement_is_the_tail(statement: str) -> None:
    assert _main(f"{statement} [a, b]") == [1, 2]
    assert _main(f"{statement} (a, b)") == [1, 2]  # a tuple, not a call


def test_the_loop_still_runs_and_the_tail_sees_its_effects() -> None:
    assert _main("let v = []; for i in 0..3 { v.push(i); } [v.len(), a]") == [3, 1]


def test_the_tree_holds_two_statements() -> None:
    (fn,) = parse("fn main(v) { for x in v {} [1, 2] }").items
    assert isinstance(fn, n.FnDecl)
    (stmt,) = fn.body.stmts
    assert isinstance(stmt, n.ExprStmt) and isinstance(stmt.expr, n.For)
    assert isinstance(fn.body.tail, n.VecLit)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("let x = if true { [1, 2] } else { [3] }[1]; x", 2),
        ("let x = match a { 1 => [5, 6], _ => [] }[0]; x", 5),
        ("let x = { [7, 8] }[1]; x", 8),
        ("let f = if true { |x| x + 1 } else { |x| x }(1); f", 2),
        ("[if true { [3] } else { [4] }[0]]", [3]),
    ],
)
def test_block_like_expressions_inside_an_expression_still_index_and_call(source: str, expected: object) -> None:
    assert _main(source) == expected


def test_other_postfix_operators_still_apply_to_a_statement() -> None:
    assert _main("if true { [1, 2] } else { [] }.len()") == 2
