"""``toolmesh bench --scripts``: which scripts run, and how each outcome is reported."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolmesh._cli.bench_scripts import bench_scripts, run_script, script_section

MAIN = 'if __name__ == "__main__":\n'


def _folder(tmp_path: Path, scripts: dict[str, str]) -> Path:
    folder = tmp_path / "bench"
    folder.mkdir()
    for name, body in scripts.items():
        (folder / f"{name}.py").write_text(body, encoding="utf-8")
    return folder


def test_only_scripts_with_a_main_guard_are_runnable(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"b_table": MAIN + "    print(1)\n", "a_table": MAIN + "    print(2)\n",
                                "tools": "def spin(): pass\n"})
    assert [path.stem for path in bench_scripts(folder)] == ["a_table", "b_table"]
    assert [path.stem for path in bench_scripts(folder, ["b_table"])] == ["b_table"]


@pytest.mark.parametrize(
    ("folder_name", "only", "message"),
    [("missing", None, "no bench folder"), ("bench", ["nope"], "no bench script named nope")],
)
def test_a_wrong_folder_or_name_is_refused_with_what_exists(
    tmp_path: Path, folder_name: str, only: list[str] | None, message: str
) -> None:
    _folder(tmp_path, {"real": MAIN + "    pass\n"})
    with pytest.raises(FileNotFoundError, match=message) as caught:
        bench_scripts(tmp_path / folder_name, only)
    if only:
        assert "there are: real" in str(caught.value)


def test_a_script_runs_from_the_checkout_root_and_its_table_is_reported(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"where": "import os\n" + MAIN + "    print('| cwd |', os.getcwd())\n"})
    run = run_script(folder / "where.py", timeout=60)
    assert run.ok
    assert run.output.strip() == f"| cwd | {tmp_path}"
    section = script_section(run)
    assert section[0] == "## bench/where.py" and section[2].startswith("ran in")
    assert f"| cwd | {tmp_path}" in section


def test_a_failing_script_reports_its_exit_code_and_the_end_of_stderr(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"broken": MAIN + "    print('partial')\n    raise SystemExit('no broker here')\n"})
    run = run_script(folder / "broken.py", timeout=60)
    assert not run.ok and run.returncode == 1
    assert "partial" in run.output and "no broker here" in run.output
    assert script_section(run)[2].startswith("**failed** (exit 1)")


def test_a_script_past_its_time_limit_is_stopped(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"slow": "import time\n" + MAIN + "    time.sleep(30)\n"})
    run = run_script(folder / "slow.py", timeout=0.5)
    assert run.returncode is None and not run.ok
    assert "stopped after 0.5 s" in run.output
    assert script_section(run)[2].startswith("**stopped**")
