"""The console's assets ship in the package and reach for nothing outside it (no CDN)."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import tomllib

from tests.processes import ROOT

PACKAGE = ROOT / "plugins" / "console"


def test_package_data_covers_every_template_and_asset() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["toolmesh.plugins.console"]
    assert "toolmesh.plugins.console" in config["tool"]["setuptools"]["packages"]
    assets = [
        path.relative_to(PACKAGE).as_posix()
        for folder in ("templates", "static")
        for path in (PACKAGE / folder).iterdir()
    ]
    assert assets
    unshipped = [asset for asset in assets if not any(fnmatch.fnmatch(asset, glob) for glob in globs)]
    assert not unshipped, f"add globs for these to package-data: {unshipped}"


def test_pages_load_nothing_from_elsewhere() -> None:
    external = re.compile(
        r"""(src|href)\s*=\s*["'](https?:)?//|@import|url\(\s*["']?(https?:)?//""", re.IGNORECASE
    )
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("templates", "static")
        for path in (PACKAGE / folder).iterdir()
        if external.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_command_line_finds_the_console_without_importing_the_web_stack() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolmesh", "console", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "--token" in done.stdout, done.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line
    }
    assert imported.isdisjoint({"starlette", "uvicorn", "jinja2", "sse_starlette"})
