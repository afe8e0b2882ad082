"""Command-line start-up: ``toolmesh`` commands beside a bare typer app and the Rune library, in one run.

Measured, each as a whole process started from scratch:

- ``bare --help``: a typer app with 12 commands (a few options each, a root
  callback, default settings: Rich help) written by this script — the cost of
  typer itself;
- ``bare (plain) --help``: the same app with ``rich_markup_mode=None``, which
  renders help the way ``toolmesh`` does (plain click help, brackets literal);
- ``bare command01 NAME``: one command of the bare app run with an argument;
  typer converts parameters with pydantic, which a command pays and ``--help``
  of the root group does not;
- ``toolmesh --help`` and ``toolmesh call --help`` (targets: within 1.5x of
  the bare app's ``--help``);
- ``rune library``: ``python -c`` compiling and running a one-line Rune script
  through ``toolmesh.plugins.rune.lang``, printing what ``rune run`` prints —
  the same work without the command line;
- ``toolmesh rune run``: that script through the command line (target:
  within 2x of ``rune library``; also shown against ``bare command01 NAME``).

Commands run round-robin (one of each, then again) so drift of the machine's
speed touches all alike. A ratio is the median of the per-round ratios
against its baseline of the same round.

    python bench/cli_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE_APP = '''
from typing import Annotated, Optional

import typer

app = typer.Typer(name="bare", no_args_is_help=True, add_completion=False, {mode})


@app.callback()
def root() -> None:
    """A bare typer app with 12 commands."""

'''

BARE_COMMAND = '''
@app.command()
def command{index:02d}(
    name: Annotated[str, typer.Argument(help="A name.")],
    count: Annotated[Optional[int], typer.Option("--count", help="How many times.")] = None,
    url: Annotated[Optional[str], typer.Option("--url", envvar="BARE_URL", help="Where to go.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Command number {index}: does nothing at all, with some options."""

'''

RUNE_SCRIPT = 'pub fn main() { let total = 40 + 2; println!("total {}", total); total }\n'

RUNE_LIBRARY = (
    "import io, json, sys\n"
    "from toolmesh.plugins.rune.lang import compile_source\n"
    "path = sys.argv[1]\n"
    "out = io.StringIO()\n"
    "unit = compile_source(open(path, encoding='utf-8').read(), filename=path)\n"
    "result = unit.call('main', stdout=out)\n"
    "sys.stdout.write(out.getvalue())\n"
    "print(json.dumps(result))\n"
)


def _write_bare_app(folder: Path, plain: bool) -> Path:
    source = BARE_APP.format(mode="rich_markup_mode=None" if plain else "")
    source += "".join(BARE_COMMAND.format(index=index) for index in range(1, 13))
    source += 'if __name__ == "__main__":\n    app()\n'
    path = folder / ("bare_plain.py" if plain else "bare.py")
    path.write_text(source, encoding="utf-8")
    return path


def _commands(folder: Path) -> dict[str, list[str]]:
    python = sys.executable
    script = folder / "one_line.rn"
    script.write_text(RUNE_SCRIPT, encoding="utf-8")
    return {
        "bare --help": [python, str(_write_bare_app(folder, plain=False)), "--help"],
        "bare (plain) --help": [python, str(_write_bare_app(folder, plain=True)), "--help"],
        "bare command01 NAME": [python, str(folder / "bare.py"), "command01", "ann"],
        "toolmesh --help": [python, "-m", "toolmesh", "--help"],
        "toolmesh call --help": [python, "-m", "toolmesh", "call", "--help"],
        "rune library": [python, "-c", RUNE_LIBRARY, str(script)],
        "toolmesh rune run": [python, "-m", "toolmesh", "rune", "run", str(script)],
    }


BASELINES = {
    "toolmesh --help": ("bare --help", "bare (plain) --help"),
    "toolmesh call --help": ("bare --help", "bare (plain) --help"),
    "toolmesh rune run": ("rune library", "bare command01 NAME"),
}


def _time(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    """Run every command ``--runs`` times round-robin and print a table of times and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="Timed runs of each command.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        commands = _commands(folder)
        for command in commands.values():  # warm the file cache and the bytecode caches
            _time(command, folder)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                times[name].append(_time(command, folder))
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; {args.runs} runs each, round-robin")
    print()
    print("| command | min ms | median ms |")
    print("|---|---:|---:|")
    for name, samples in times.items():
        print(f"| {name} | {min(samples) * 1000:.0f} | {statistics.median(samples) * 1000:.0f} |")
    print()
    print("| command | baseline | ratio (median of per-round ratios) |")
    print("|---|---|---:|")
    for name, baselines in BASELINES.items():
        for baseline in baselines:
            ratios = [a / b for a, b in zip(times[name], times[baseline], strict=True)]
            print(f"| {name} | {baseline} | {statistics.median(ratios):.2f}x |")


if __name__ == "__main__":
    main()
