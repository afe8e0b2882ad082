"""The ``bench/`` scripts of a source checkout, run for ``toolmesh bench --scripts DIR``.

Each script measures one thing side by side with its own baseline and prints
its table; the report gets a section per script with what it printed, how long
it ran and whether it failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ScriptRun", "bench_scripts", "run_script", "script_section"]

_TAIL_LINES = 40


@dataclass(frozen=True)
class ScriptRun:
    """One script's outcome: its exit code (``None`` when stopped at the time limit) and output."""

    script: Path
    returncode: int | None
    seconds: float
    output: str

    @property
    def ok(self) -> bool:
        """True when the script ran to the end and exited 0."""
        return self.returncode == 0


def bench_scripts(folder: Path, only: list[str] | None = None) -> list[Path]:
    """The runnable scripts in ``folder`` (``*.py`` with a ``__main__`` guard), optionally only those named."""
    if not folder.is_dir():
        raise FileNotFoundError(f"no bench folder at {folder}: pass the bench/ folder of a toolmesh checkout")
    scripts = [
        path for path in sorted(folder.glob("*.py"))
        if "if __name__ == \"__main__\":" in path.read_text(encoding="utf-8", errors="replace")
    ]
    if only:
        missing = sorted(set(only) - {path.stem for path in scripts})
        if missing:
            known = ", ".join(path.stem for path in scripts) or "none"
            raise FileNotFoundError(f"no bench script named {', '.join(missing)} in {folder} (there are: {known})")
        scripts = [path for path in scripts if path.stem in only]
    return scripts


def run_script(script: Path, timeout: float) -> ScriptRun:
    """Run ``script`` with this interpreter from the checkout's root; output is kept, stderr only on failure."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=timeout, check=False,
            cwd=script.resolve().parent.parent,
        )
    except subprocess.TimeoutExpired as exc:
        printed = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return ScriptRun(script, None, time.perf_counter() - started, f"{printed}\nstopped after {timeout:g} s")
    output = done.stdout
    if done.returncode != 0:
        output += "\n" + "\n".join(done.stderr.splitlines()[-_TAIL_LINES:])
    return ScriptRun(script, done.returncode, time.perf_counter() - started, output)


def script_section(run: ScriptRun) -> list[str]:
    """The report's Markdown lines for one script run."""
    if run.ok:
        status = f"ran in {run.seconds:.0f} s"
    elif run.returncode is None:
        status = f"**stopped** at the time limit after {run.seconds:.0f} s"
    else:
        status = f"**failed** (exit {run.returncode}) after {run.seconds:.0f} s"
    return [f"## bench/{run.script.name}", "", status + ":", "", "```", run.output.rstrip(), "```", ""]
