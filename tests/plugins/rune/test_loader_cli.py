"""``toolmesh up DIR`` serves Rune tools from a separate process; ``toolmesh rune check`` on the real CLI."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import anyio
import pytest
from toolmesh import Mesh, Settings

from tests.processes import NodeProcess, toolmesh

pytestmark = pytest.mark.anyio


async def test_up_serves_a_directory_and_reloads_it(toolmesh_broker, tmp_path: Path) -> None:
    prefix = f"r{uuid.uuid4().hex[:8]}"
    settings = Settings(nats_url=toolmesh_broker.url, prefix=prefix, heartbeat=0.2, catalog_ttl=2.0)
    (tmp_path / "first.rn").write_text("//! First tool.\n//! @param n int A number\nfn main(n) { n + 1 }\n")
    args = (
        "examples/rune",
        str(tmp_path),
        "examples/math_tools.py",
        "--nats",
        toolmesh_broker.url,
        "--prefix",
        prefix,
    )
    with NodeProcess(*args) as node:
        assert {
            "rune_search_notes",
            "rune_make_note",
            "rune_tag_words",
            "rune_word_count",
            "rune_first",
        } <= set(node.ready["tools"])
        async with Mesh(settings=settings) as mesh:
            assert (await mesh.call("rune_first", {"n": 41})).structured_content == 42
            words = await mesh.call("rune_tag_words", {"tag": "nats"})
            assert words.structured_content == {"tag": "nats", "words": 210}

            (tmp_path / "second.rn").write_text('#[tool(desc = "d")]\npub fn second() { "2nd" }')
            started = time.monotonic()
            while (result := await mesh.call("rune_second")).is_error:
                assert time.monotonic() - started < 1.0, result.error
                await anyio.sleep(0.02)
            assert result.structured_content == "2nd"


def test_check_is_a_toolmesh_command(tmp_path: Path) -> None:
    ok = toolmesh("rune", "check", "examples/rune")
    assert ok.returncode == 0, ok.stderr
    assert "4 tools, 0 errors" in ok.stderr
    (tmp_path / "dup.rn").write_text(
        '#[tool(desc = "d")]\nfn search_notes() { 1 }\n#[tool(desc = 1)]\nfn g() {}'
    )
    bad = toolmesh("rune", "check", "examples/rune", str(tmp_path))
    assert bad.returncode == 1
    lines = bad.stdout.splitlines()
    assert any("dup.rn:2:1: error: duplicate tool name 'rune_search_notes'" in line for line in lines), lines
    assert any("dup.rn:3:1: error: #[tool] `desc` must be a non-empty string" in line for line in lines), (
        lines
    )
