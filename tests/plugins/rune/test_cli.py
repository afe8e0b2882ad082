"""The ``rune run`` and ``rune test`` commands, driven through typer's CliRunner."""

import json
from pathlib import Path

from toolmesh.plugins.rune.cli import rune_app
from typer.testing import CliRunner

runner = CliRunner()


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_run_prints_stdout_then_json_result(tmp_path: Path) -> None:
    f = write(tmp_path, "a.rn", 'fn main() { println!("hi"); #{a: [1, 2]} }\nfn add(a, b) { a + b }')
    result = runner.invoke(rune_app, ["run", str(f)])
    assert result.exit_code == 0
    assert result.output == 'hi\n{"a": [1, 2]}\n'
    result = runner.invoke(rune_app, ["run", str(f), "--fn", "add", "--args", "[2, 3]"])
    assert result.output.strip() == "5"


def test_run_json(tmp_path: Path) -> None:
    f = write(tmp_path, "a.rn", 'print!("x"); 7')
    result = runner.invoke(rune_app, ["run", str(f), "--json"])
    assert json.loads(result.output) == {"stdout": "x", "result": 7}


def test_run_prints_the_result_as_a_tool_returns_it(tmp_path: Path) -> None:
    """Options, tuples and chars come out as serde writes them, as a Rune tool's result does on the mesh."""
    f = write(tmp_path, "a.rn", "fn main() { [Some(1), None, (1, 'x'), Ok(2)] }\nfn inf() { 1.0 / 0.0 }")
    result = runner.invoke(rune_app, ["run", str(f)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [1, None, [1, "x"], {"Ok": 2}]
    refused = runner.invoke(rune_app, ["run", str(f), "--fn", "inf"])
    assert refused.exit_code == 1 and "inf" in refused.output and "JSON" in refused.output


def test_run_error_exit_code(tmp_path: Path) -> None:
    f = write(tmp_path, "a.rn", "fn main() {\n  1 + 1.0\n}")
    result = runner.invoke(rune_app, ["run", str(f)])
    assert result.exit_code == 1
    assert "a.rn:2:5" in result.output


def test_test_command_counts(tmp_path: Path) -> None:
    write(
        tmp_path,
        "t.rn",
        "#[test]\nfn ok() { assert!(true); }\n#[test]\nfn bad() { assert_eq!(1, 2); }\n"
        "#[test]\nfn none() { None }\nfn not_a_test() { panic!() }\n",
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    write(sub, "u.rn", "#[test]\nfn ok2() { Ok(1) }\n")
    result = runner.invoke(rune_app, ["test", str(tmp_path)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[-1] == "2 passed, 2 failed"
    assert any("bad" in line and "left: 1, right: 2" in line for line in lines)
    result = runner.invoke(rune_app, ["test", str(tmp_path), "--json"])
    data = json.loads(result.output)
    assert (data["passed"], data["failed"], len(data["failures"])) == (2, 2, 2)


def test_test_command_all_pass(tmp_path: Path) -> None:
    f = write(tmp_path, "t.rn", "#[test]\nfn ok() { 1 }\n")
    result = runner.invoke(rune_app, ["test", str(f)])
    assert result.exit_code == 0
    assert result.output.strip() == "1 passed, 0 failed"


def test_tests_inside_modules_are_found(tmp_path: Path) -> None:
    f = write(
        tmp_path,
        "m.rn",
        "mod inner {\n    #[test]\n    fn t() { assert_eq!(super::two(), 2); }\n}\nfn two() { 2 }\n",
    )
    result = runner.invoke(rune_app, ["test", str(f)])
    assert result.output.strip() == "1 passed, 0 failed"
