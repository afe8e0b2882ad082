"""``toolmesh rune run``, ``toolmesh rune test`` and ``toolmesh rune check``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Annotated

import typer
from toolmesh import JsonOption, cli_error

__all__ = ["check", "run", "run_tests", "rune_app", "test"]

# Light on purpose (the toolmesh.cli entry point imports it for `toolmesh --help`): each command
# imports the language when it runs.
rune_app = typer.Typer(
    name="rune",
    help="Run Rune scripts and their #[test] functions; lint Rune tool files.",
    no_args_is_help=True,
    rich_markup_mode=None,  # help as written: `#[test]` is no Rich markup
)


def _existing(paths: list[Path]) -> None:
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        raise cli_error(f"no such file or directory: {', '.join(missing)}")


@rune_app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="Rune source file.")],
    fn: Annotated[str, typer.Option("--fn", help="Function to call.")] = "main",
    args: Annotated[str, typer.Option("--args", help="JSON array of arguments.")] = "[]",
    as_json: JsonOption = False,
) -> None:
    """Call a function of FILE and print its output, then its return value as JSON (as a tool's result)."""
    from .lang import RuneError, compile_source, to_json
    from .lang.json_values import from_json

    _existing([file])
    try:
        params = json.loads(args)
    except json.JSONDecodeError as exc:
        raise cli_error(f"--args is not valid JSON ({exc}); e.g. --args '[1, \"two\"]'") from None
    if not isinstance(params, list):
        params = [params]
    out = io.StringIO()
    try:
        unit = compile_source(file.read_text(encoding="utf-8"), filename=str(file))
        # Arguments and the result cross the boundary the way a tool's do (serde's JSON forms).
        value = unit.call(fn, *(from_json(param) for param in params), stdout=out, raw=True, rune_args=True)
        result = to_json(value, "the result")
    except RuneError as exc:
        if as_json:
            typer.echo(json.dumps({"stdout": out.getvalue(), "error": str(exc), "kind": type(exc).__name__}))
            raise typer.Exit(1) from None
        typer.echo(out.getvalue(), nl=False)
        raise cli_error(str(exc), 1) from None
    if as_json:
        typer.echo(json.dumps({"stdout": out.getvalue(), "result": result}))
    else:
        typer.echo(out.getvalue(), nl=False)
        typer.echo(json.dumps(result))


def _rune_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        files.extend(sorted(p.rglob("*.rn")) if p.is_dir() else [p])
    return files


def run_tests(paths: list[Path]) -> tuple[int, list[dict[str, str]]]:
    """Run every ``#[test]`` function under ``paths``; returns (passed, failures)."""
    from .lang import RuneError, compile_source
    from .lang.values import Option, Result

    passed = 0
    failures: list[dict[str, str]] = []
    for file in _rune_files(paths):
        try:
            unit = compile_source(file.read_text(encoding="utf-8"), filename=str(file))
        except RuneError as exc:
            failures.append({"test": str(file), "reason": str(exc).splitlines()[0]})
            continue
        for name in unit.tests():
            try:
                result = unit.call(name, stdout=io.StringIO(), raw=True, budget=20_000_000)
            except RuneError as exc:
                failures.append({"test": f"{file}::{name}", "reason": str(exc).splitlines()[0]})
                continue
            except Exception as exc:  # noqa: BLE001 - isolation boundary around the interpreter
                failures.append({"test": f"{file}::{name}", "reason": f"internal error: {exc!r}"})
                continue
            if (type(result) is Option and not result.is_some) or (
                type(result) is Result and not result.is_ok
            ):
                failures.append({"test": f"{file}::{name}", "reason": f"returned {result!r}"})
            else:
                passed += 1
    return passed, failures


@rune_app.command("test")
def test(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories of .rn files.")],
    as_json: JsonOption = False,
) -> None:
    """Run #[test] functions; a test passes when it returns without panicking."""
    _existing(paths)
    passed, failures = run_tests(paths)
    if as_json:
        typer.echo(json.dumps({"passed": passed, "failed": len(failures), "failures": failures}))
    else:
        for f in failures:
            typer.echo(f"FAILED {f['test']}: {f['reason']}")
        typer.echo(f"{passed} passed, {len(failures)} failed")
    if failures:
        raise typer.Exit(1)


@rune_app.command("check")
def check(
    paths: Annotated[list[Path], typer.Argument(help="Rune tool files or directories of them.")],
    as_json: JsonOption = False,
) -> None:
    """Lint Rune tool files: syntax, #[tool]/#[param] attributes, legacy headers, duplicate names.

    Prints one `file:line:col: severity: message` line per problem and exits 1 when any is an error.
    """
    from .loader import check_paths

    _existing(paths)
    report = check_paths([str(path) for path in paths])
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "files": [loaded.path for loaded in report.files],
                    "tools": [tool.name for tool in report.tools],
                    "problems": [problem.as_dict() for problem in report.problems],
                    "ok": not report.failed,
                },
                indent=2,
            )
        )
    else:
        for problem in report.problems:
            typer.echo(str(problem))
        errors = sum(problem.severity == "error" for problem in report.problems)
        summary = (
            f"{len(report.files)} files, {len(report.tools)} tools, {errors} errors,"
            f" {len(report.problems) - errors} warnings"
        )
        if report.tools:
            summary += ": " + ", ".join(tool.name for tool in report.tools)
        from toolmesh import cli_stderr  # made on first use: loads Rich only when something is printed

        cli_stderr.print(summary, highlight=False, markup=False)
    if report.failed:
        raise typer.Exit(1)


if __name__ == "__main__":
    rune_app()
