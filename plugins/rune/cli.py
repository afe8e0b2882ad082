"""``toolmesh rune run`` and ``toolmesh rune test`` commands."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Annotated

import typer
from toolmesh.plugins.rune.lang import RuneError, compile_source
from toolmesh.plugins.rune.lang.values import Option, Result

rune_app = typer.Typer(
    name="rune", help="Run Rune scripts and their #[test] functions.", no_args_is_help=True
)


@rune_app.command("run")
def run(
    file: Annotated[Path, typer.Argument(help="Rune source file.")],
    fn: Annotated[str, typer.Option("--fn", help="Function to call.")] = "main",
    args: Annotated[str, typer.Option("--args", help="JSON array of arguments.")] = "[]",
    as_json: Annotated[bool, typer.Option("--json", help='Print {"stdout": ..., "result": ...}.')] = False,
) -> None:
    """Call a function of FILE and print its output, then its return value as JSON."""
    out = io.StringIO()
    try:
        params = json.loads(args)
        if not isinstance(params, list):
            params = [params]
        unit = compile_source(file.read_text(encoding="utf-8"), filename=str(file))
        result = unit.call(fn, *params, stdout=out)
    except RuneError as exc:
        if as_json:
            typer.echo(json.dumps({"stdout": out.getvalue(), "error": str(exc), "kind": type(exc).__name__}))
        else:
            typer.echo(out.getvalue(), nl=False)
            typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
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
            except Exception as exc:  # noqa: BLE001 - an implementation bug must not stop the run
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
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary.")] = False,
) -> None:
    """Run #[test] functions; a test passes when it returns without panicking."""
    passed, failures = run_tests(paths)
    if as_json:
        typer.echo(json.dumps({"passed": passed, "failed": len(failures), "failures": failures}))
    else:
        for f in failures:
            typer.echo(f"FAILED {f['test']}: {f['reason']}")
        typer.echo(f"{passed} passed, {len(failures)} failed")
    if failures:
        raise typer.Exit(1)


if __name__ == "__main__":
    rune_app()
