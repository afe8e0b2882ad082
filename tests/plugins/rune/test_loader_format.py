"""The Rune tool format without a mesh: attributes, legacy headers, schemas, lint problems, ``rune check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toolmesh.plugins.rune.cli import rune_app
from toolmesh.plugins.rune.lang import compile_source
from toolmesh.plugins.rune.loader import check_paths, claims, find_rune_files, load_file
from toolmesh.plugins.rune.tool_format import PARAM_TYPES, RuneTool, tools_in_unit
from typer.testing import CliRunner

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "rune"

SEARCH = """\
/// Search notes matching criteria.
/// Second line of the long description.
#[param(name = "query", type = "string", desc = "Search query text")]
#[param(name = "max_results", type = "number", desc = "Maximum results", required = false)]
#[tool(desc = "Search notes with optional filters", version = "1.0.0", tags = ["search"])]
pub fn search_notes(query, max_results) { [query, max_results] }

fn helper() { 1 }
"""


def tools_of(source: str, file: str = "t.rn") -> tuple[list[RuneTool], list[str]]:
    unit = compile_source(source, filename=file)
    tools, problems = tools_in_unit(unit, source, file)
    return tools, [str(problem) for problem in problems]


def test_attribute_format_reads_every_key_and_the_doc_comment() -> None:
    (tool,), problems = tools_of(SEARCH)
    assert problems == []
    assert (tool.name, tool.function, tool.description, tool.version, tool.tags) == (
        "rune_search_notes",
        "search_notes",
        "Search notes with optional filters",
        "1.0.0",
        ("search",),
    )
    assert tool.doc == "Search notes matching criteria.\nSecond line of the long description."
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query text"},
            "max_results": {"type": "number", "description": "Maximum results"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert tool.positional == ("query", "max_results")


def test_defaults_and_params_after_the_tool_attribute() -> None:
    source = '#[tool(desc = "d")]\n#[param(name = "b", type = "string", desc = "B")]\nfn f(b) { b }'
    (tool,), problems = tools_of(source)
    assert problems == []
    assert (tool.version, tool.tags, tool.timeout_ms, tool.doc) == ("0.1.0", (), None, "")
    assert tool.input_schema["required"] == ["b"]


def test_helpers_are_not_tools_and_several_tools_share_a_file() -> None:
    source = SEARCH + '\n#[tool(desc = "two", timeout_ms = 250)]\npub async fn second() { helper() }\n'
    tools, problems = tools_of(source)
    assert problems == []
    assert [(t.name, t.is_async, t.timeout_ms) for t in tools] == [
        ("rune_search_notes", False, None),
        ("rune_second", True, 250),
    ]


@pytest.mark.parametrize("kind", sorted(PARAM_TYPES))
def test_every_param_type_becomes_its_json_schema_type(kind: str) -> None:
    (tool,), _ = tools_of(
        f'#[param(name = "v", type = "{kind}", desc = "value")]\n#[tool(desc = "d")]\nfn f(v) {{ v }}'
    )
    assert tool.input_schema["properties"]["v"] == {"type": kind, "description": "value"}


def test_more_than_four_params_arrive_as_one_array_in_declared_order() -> None:
    params = "".join(f'#[param(name = "p{i}", type = "integer", desc = "p{i}")]\n' for i in range(5, 0, -1))
    (tool,), problems = tools_of(params + '#[tool(desc = "d")]\nfn f(all) { all }')
    assert problems == []
    assert tool.positional is None
    assert tool.call_arguments({"p1": 1, "p2": 2, "p3": 3, "p4": 4, "p5": 5}) == [[5, 4, 3, 2, 1]]


def test_up_to_four_params_follow_the_signature_and_optional_ones_are_options() -> None:
    source = (
        '#[param(name = "b", type = "integer", desc = "b", required = false)]\n'
        '#[param(name = "a", type = "integer", desc = "a")]\n#[tool(desc = "d")]\nfn f(a, b) { a }'
    )
    (tool,), _ = tools_of(source)
    assert tool.call_arguments({"a": 1}) == [1, {"None": None}]
    assert tool.call_arguments({"a": 1, "b": 2}) == [1, {"Some": 2}]


LINT = [
    ("syntax", "fn f( {", "t.rn:1:7: error: syntax error"),
    ("unknown tool key", '#[tool(desc = "d", colour = "red")]\nfn f() {}', "t.rn:1:1: error: #[tool] has an unknown key `colour`"),
    ("missing desc", "#[tool(version = \"1\")]\nfn f() {}", 't.rn:1:1: error: #[tool] needs `desc = "..."`'),
    ("bad tags", '#[tool(desc = "d", tags = "x")]\nfn f() {}', "t.rn:1:1: error: #[tool] `tags` must be a list of strings"),
    ("bad timeout", '#[tool(desc = "d", timeout_ms = -5)]\nfn f() {}', "`timeout_ms` must be a positive integer"),
    (
        "unknown param key",
        'fn g() {}\n#[param(name = "a", kind = "string", desc = "a")]\n#[tool(desc = "d")]\nfn f(a) {}',
        "t.rn:2:1: error: #[param] has an unknown key `kind`",
    ),
    (
        "unknown type",
        '#[param(name = "a", type = "str", desc = "a")]\n#[tool(desc = "d")]\nfn f(a) {}',
        "t.rn:1:1: error: #[param(name = 'a')] has an unknown type 'str'",
    ),
    (
        "param not in signature",
        '#[param(name = "b", type = "string", desc = "b")]\n#[tool(desc = "d")]\nfn f(a) {}',
        "#[param(name = 'b')] does not match a parameter of `fn f(a)`",
    ),
    (
        "parameter without param",
        '#[tool(desc = "d")]\nfn f(a) {}',
        "parameter `a` of `fn f(a)` has no #[param(name = 'a'",
    ),
    (
        "five params, two parameters",
        "".join(f'#[param(name = "p{i}", type = "string", desc = "p")]\n' for i in range(5))
        + '#[tool(desc = "d")]\nfn f(a, b) {}',
        "a tool with more than 4 receives them as one array, so the function must take exactly one parameter",
    ),
    ("param without tool", '#[param(name = "a", type = "string", desc = "a")]\nfn f(a) {}', "which has no #[tool"),
    ("required not bool", '#[param(name = "a", type = "string", desc = "a", required = "no")]\n#[tool(desc = "d")]\nfn f(a) {}',
     "`required` must be true or false"),
    ("tool in module", 'mod m {\n  #[tool(desc = "d")]\n  fn f() {}\n}', "t.rn:2:3: error: #[tool] functions must be at the top level"),
    ("legacy unknown directive", "//! Desc\n//! @bogus 1\nfn main() {}", "t.rn:2:1: error: unknown header directive `@bogus`"),
    ("legacy unknown type", "//! Desc\n//! @param a text The a\nfn main(a) {}", "t.rn:2:1: error: @param a has an unknown type 'text'"),
    ("legacy missing entry", "//! Desc\n//! @entry run\nfn main() {}", "t.rn:2:1: error: the entry function `run` is not defined"),
    ("legacy mismatch", "//! Desc\n//! @param a string The a\nfn main(b) {}", "`//! @param a` does not match a parameter of `fn main(b)`"),
    ("legacy no description", "//! @param a string The a\nfn main(a) {}", "needs a description line"),
    ("misspelt attribute", '#[tols(desc = "d")]\npub fn f() {}', "t.rn:1:1: error: unknown attribute #[tols] on `fn f`"),
    (
        "function defined twice",
        '#[tool(desc = "one")]\npub fn f() { 1 }\n#[tool(desc = "two")]\npub fn f() { 2 }',
        "t.rn:4:5: error: `f` is defined twice in this module (first at line 2); rename one of them",
    ),
    ("function defined twice in a module", "mod m {\n  fn g() {}\n  fn g() {}\n}", "t.rn:3:3: error: `g` is defined twice"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "source", "expected"), LINT, ids=[case[0] for case in LINT])
def test_check_reports_each_problem_with_its_position(
    tmp_path: Path, name: str, source: str, expected: str
) -> None:
    (tmp_path / "t.rn").write_text(source)
    report = check_paths([str(tmp_path / "t.rn")])
    messages = [str(problem).replace(str(tmp_path) + "/", "") for problem in report.problems]
    assert report.failed
    assert any(expected in message for message in messages), messages


def test_test_and_bench_functions_may_share_a_tool_file() -> None:
    tools, problems = tools_of(
        SEARCH + "#[test]\nfn checks() { assert!(helper() == 1) }\n#[bench]\nfn b() {}\n"
    )
    assert problems == [] and [tool.name for tool in tools] == ["rune_search_notes"]


def test_check_lists_only_tools_a_node_would_serve_and_problems_in_line_order(tmp_path: Path) -> None:
    (tmp_path / "mixed.rn").write_text(
        '#[tool(desc = "fine")]\npub fn fine() { 1 }\n'
        '#[tols(desc = "typo")]\npub fn typo() { 1 }\n'
        '#[tool(desc = "d")]\n#[param(name = "x", type = "int", desc = "x")]\npub fn f(x) { x }\n'
    )
    (tmp_path / "good.rn").write_text('#[tool(desc = "good")]\npub fn good() { 1 }')
    report = check_paths([str(tmp_path)])
    assert [tool.name for tool in report.tools] == ["rune_good"]  # mixed.rn has errors: not served
    assert [(p.line, p.message.split(" ")[0]) for p in report.problems] == [
        (3, "unknown"),
        (6, "#[param(name"),
    ]


def test_a_file_with_no_tools_is_a_warning_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "lib.rn").write_text("fn helper() { 1 }")
    report = check_paths([str(tmp_path)])
    assert not report.failed
    assert [p.severity for p in report.problems] == ["warning"]


def test_legacy_format_follows_crucibles_header(tmp_path: Path) -> None:
    path = tmp_path / "greet-user.rn"
    path.write_text(
        "// a plain comment is skipped\n//! Greet someone.\n//! More about greeting.\n//! @entry run\n"
        "//! @version 2.0.0\n//! @tags social, demo\n//! @param name string Who to greet\n"
        "//! @param times? int How often\n\npub fn run(name, times) { name }\n"
    )
    loaded = load_file(path)
    assert loaded.ok, loaded.problems
    (tool,) = loaded.tools
    assert (tool.name, tool.function, tool.description, tool.doc, tool.version, tool.tags, tool.format) == (
        "rune_greet-user",
        "run",
        "Greet someone.",
        "More about greeting.",
        "2.0.0",
        ("social", "demo"),
        "legacy",
    )
    assert tool.input_schema["properties"]["times"]["type"] == "integer"
    assert tool.input_schema["required"] == ["name"]


def test_legacy_file_of_top_level_statements_uses_the_implicit_main(tmp_path: Path) -> None:
    path = tmp_path / "hello.rn"
    path.write_text('//! Say hello.\nlet greeting = "hello";\ngreeting\n')
    (tool,) = load_file(path).tools
    assert (tool.name, tool.function, tool.params) == ("rune_hello", "main", ())


def test_duplicate_tool_names_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.rn").write_text('#[tool(desc = "one")]\nfn same() { 1 }')
    (tmp_path / "b.rn").write_text('#[tool(desc = "two")]\nfn same() { 2 }')
    report = check_paths([str(tmp_path)])
    (problem,) = report.problems
    assert problem.file.endswith("b.rn") and problem.line == 2
    assert "duplicate tool name 'rune_same'" in problem.message and "a.rn:2" in problem.message


def test_compiled_files_are_cached_by_content(tmp_path: Path) -> None:
    path = tmp_path / "c.rn"
    path.write_text('#[tool(desc = "d")]\nfn f() { 1 }')
    first = load_file(path)
    assert load_file(path) is first  # same content: no parse
    path.write_text('#[tool(desc = "d")]\nfn f() { 2 }')
    second = load_file(path)
    assert second is not first and second.digest != first.digest


def test_sources_claimed_and_files_found(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.rn").write_text("")
    (tmp_path / ".#x.rn").write_text("")  # an editor's lock file
    (tmp_path / "empty" / ".git").mkdir(parents=True)  # hidden folders do not count
    (tmp_path / "python").mkdir()
    (tmp_path / "python" / "tools.py").write_text("")
    assert claims(str(tmp_path)) and claims("missing.rn")
    assert claims(str(tmp_path / "empty"))  # served and watched for the first tool to come
    assert not claims(str(tmp_path / "python")) and not claims("x.py") and not claims("")
    assert not claims(str(tmp_path / "missing"))
    assert find_rune_files([str(tmp_path)]) == [tmp_path / "sub" / "x.rn"]


def test_examples_check_clean() -> None:
    report = check_paths([str(EXAMPLES)])
    assert report.problems == []
    assert {tool.name for tool in report.tools} == {
        "rune_search_notes",
        "rune_make_note",
        "rune_tag_words",
        "rune_word_count",
    }


runner = CliRunner()


def test_check_command_exit_codes_and_json(tmp_path: Path) -> None:
    good = runner.invoke(rune_app, ["check", str(EXAMPLES)])
    assert good.exit_code == 0, good.output
    assert "4 tools, 0 errors" in good.output
    (tmp_path / "bad.rn").write_text(
        '#[tool(desc = "d")]\n#[param(name = "x", type = "text", desc = "x")]\nfn f(x) {}'
    )
    bad = runner.invoke(rune_app, ["check", str(tmp_path)])
    assert bad.exit_code == 1
    assert f"{tmp_path}/bad.rn:2:1: error: #[param(name = 'x')] has an unknown type 'text'" in bad.output
    data = json.loads(runner.invoke(rune_app, ["check", str(tmp_path), "--json"]).stdout)
    assert data["ok"] is False and data["problems"][0]["line"] == 2
    missing = runner.invoke(rune_app, ["check", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such file or directory" in missing.output
