"""Copy upstream Rune's script tests (``crates/rune/tests/*.rn``) into script_tests/ beside this file.

Usage: python tests/plugins/rune/corpus/extract_script_tests.py RUNE [COMMIT]

RUNE is a work tree of rune-rs/rune, or its git directory (a bare clone or ``.git``), read at
COMMIT (default ``HEAD``). The files are copied byte for byte; script_tests.json records the
commit and, per file, the names of its ``#[test]`` functions in source order, which is what the
runner (test_upstream_script_tests.py) collects its cases from.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
OUT_DIR = HERE / "script_tests"
MANIFEST = HERE / "script_tests.json"
TESTS_DIR = "crates/rune/tests"
# What the scan of a file needs to see: skipped (comments, strings, template strings, chars), the
# start of an inline module, braces, and a #[test] function.
_SCAN = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`|'(?:\\.|[^'\\])'"""
    r"|\bmod\s+(?P<mod>\w+)\s*\{"
    r"|(?P<brace>[{}])"
    r"|#\[test(?:\((?P<flags>[^)]*)\))?\]\s*(?:pub\s+)?(?:async\s+)?fn\s+(?P<test>\w+)",
    re.DOTALL,
)


def _git(repo: Path, *args: str) -> str:
    git_dir = repo / ".git" if (repo / ".git").exists() else repo
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True
    ).stdout


def read_tests(repo: Path, commit: str) -> tuple[str, dict[str, str]]:
    """The full commit id and ``{file name: source}`` of the ``.rn`` files under ``crates/rune/tests``."""
    full = _git(repo, "rev-parse", f"{commit}^{{commit}}").strip()
    names = _git(repo, "ls-tree", "--name-only", f"{full}:{TESTS_DIR}").split()
    return full, {
        name: _git(repo, "show", f"{full}:{TESTS_DIR}/{name}") for name in sorted(names) if name.endswith(".rn")
    }


def test_functions(source: str) -> list[dict[str, str | list[str]]]:
    """The ``#[test]`` functions of a file in source order: the name as ``rune test`` calls it
    (``module::name`` inside an inline ``mod``) and the attribute's flags (``should_panic``)."""
    found: list[dict[str, str | list[str]]] = []
    modules: list[tuple[str, int]] = []  # the open inline modules and the brace depth they opened at
    depth = 0
    for m in _SCAN.finditer(source):
        if m.group("mod"):
            modules.append((m.group("mod"), depth))
            depth += 1
        elif m.group("brace") == "{":
            depth += 1
        elif m.group("brace") == "}":
            depth -= 1
            if modules and modules[-1][1] == depth:
                modules.pop()
        elif m.group("test"):
            flags = [f.strip() for f in (m.group("flags") or "").split(",") if f.strip()]
            found.append({"name": "::".join([*(name for name, _ in modules), m.group("test")]), "flags": flags})
    return found


def main() -> None:
    repo = Path(sys.argv[1])
    commit, files = read_tests(repo, sys.argv[2] if len(sys.argv) > 2 else "HEAD")
    if not files:
        raise SystemExit(f"no .rn files under {TESTS_DIR} at {commit}: not a rune repository")
    OUT_DIR.mkdir(exist_ok=True)
    for old in OUT_DIR.glob("*.rn"):
        old.unlink()
    manifest: dict[str, list[dict[str, str | list[str]]]] = {}
    for name, source in files.items():
        (OUT_DIR / name).write_text(source, encoding="utf-8")
        manifest[name] = test_functions(source)
    MANIFEST.write_text(
        json.dumps(
            {
                "source": "https://github.com/rune-rs/rune",
                "commit": commit,
                "path": TESTS_DIR,
                "license": "MIT OR Apache-2.0 (see LICENSE-RUNE-MIT and LICENSE-RUNE-APACHE beside this file)",
                "files": manifest,
            },
            indent=1,
        )
        + "\n"
    )
    total = sum(len(tests) for tests in manifest.values())
    print(f"{len(files)} files, {total} #[test] functions written to {OUT_DIR}")


if __name__ == "__main__":
    main()
