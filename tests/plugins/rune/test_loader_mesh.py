"""Rune tools served by real nodes on a real nats-server: formats, types, failures, nested calls."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import toolmesh.plugins.python as python_plugin
import toolmesh.plugins.rune as rune_plugin
import toolmesh.plugins.rune.executor as rune_executor
from toolmesh import Mesh, Settings
from toolmesh.testing import running_node

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
PLUGINS = [rune_plugin, python_plugin]


def serve(settings: Settings, *sources: Any, name: str | None = None) -> Any:
    return running_node(
        settings, sources=[str(s) for s in sources], plugins=PLUGINS, load_entrypoints=False, name=name
    )


async def test_attribute_and_legacy_tools(toolmesh_settings: Settings) -> None:
    async with (
        serve(toolmesh_settings, EXAMPLES / "rune", EXAMPLES / "math_tools.py"),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        listed = {spec.name: spec for spec in await mesh.list_tools()}
        search = listed["rune_search_notes"]
        assert (search.source, search.version, search.tags) == ("rune", "1.0.0", ("notes", "search"))
        assert search.description.startswith("Search notes by title\n\nMatches the query")
        assert search.input_schema["required"] == ["query"]
        assert search.timeout == 30.0 and search.meta["rune"]["format"] == "attribute"
        assert "rune_notes" not in listed  # a function without #[tool] is a private helper

        found = await mesh.call("rune_search_notes", {"query": "RUNE", "max_results": 1})
        assert found.structured_content == {"query": "RUNE", "count": 1, "titles": ["Rune basics"]}
        legacy = await mesh.call("rune_word_count", {"text": "one two three four", "min_length": 4})
        assert legacy.structured_content == 2
        assert listed["rune_word_count"].description.startswith("Count the words of a text.")

        note = await mesh.call(
            "rune_make_note", {"title": "T", "body": "a b c", "tags": ["x"], "pinned": True, "meta": {"k": 1}}
        )
        assert note.structured_content == {
            "title": "T",
            "words": 3,
            "tags": ["x"],
            "pinned": True,
            "meta": {"k": 1},
        }
        assert '"words":3' in note.content[0].text  # objects also come as text

        unknown = await mesh.call("rune_search_notes", {"query": "x", "limit": 3})
        wrong = await mesh.call("rune_search_notes", {"query": 7})
        missing = await mesh.call("rune_make_note", {"title": "T"})
        for result in (unknown, wrong, missing):
            assert result.error is not None and result.error.code == "invalid_arguments", result
        assert "'limit' was unexpected" in unknown.error.message


TYPES = """
#[param(name = "s", type = "string", desc = "s")]
#[param(name = "n", type = "number", desc = "n")]
#[param(name = "b", type = "boolean", desc = "b")]
#[param(name = "a", type = "array", desc = "a")]
#[tool(desc = "echo four")]
pub fn four(s, n, b, a) { #{s: s, n: n, b: b, a: a, kinds: [is_string(s), n is f64, b is bool, a is Vec]} }

#[param(name = "o", type = "object", desc = "o")]
#[param(name = "i", type = "integer", desc = "i")]
#[tool(desc = "echo object")]
pub fn obj(o, i) { #{o: o, i: i + 1, o_is_object: o is Object} }

#[param(name = "o", type = "object", desc = "o")]
#[param(name = "i", type = "integer", desc = "i")]
#[param(name = "maybe", type = "string", desc = "optional", required = false)]
#[tool(desc = "optional as Option")]
pub fn opt(o, i, maybe) { match maybe { Some(v) => v, None => "absent" } }

fn is_string(v) { v is String }
"""


async def test_every_param_type_reaches_the_script(toolmesh_settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "types.rn").write_text(TYPES)
    async with serve(toolmesh_settings, tmp_path), Mesh(settings=toolmesh_settings) as mesh:
        four = await mesh.call("rune_four", {"s": "x", "n": 1.5, "b": True, "a": [1, "two", None]})
        assert four.structured_content == {
            "s": "x",
            "n": 1.5,
            "b": True,
            "a": [1, "two", None],
            "kinds": [True, True, True, True],
        }
        obj = await mesh.call("rune_obj", {"o": {"k": [1, {"deep": True}]}, "i": 41})
        assert obj.structured_content == {"o": {"k": [1, {"deep": True}]}, "i": 42, "o_is_object": True}
        assert (await mesh.call("rune_opt", {"o": {}, "i": 1})).structured_content == "absent"
        assert (await mesh.call("rune_opt", {"o": {}, "i": 1, "maybe": "here"})).structured_content == "here"
        too_big = await mesh.call("rune_obj", {"o": {}, "i": 2**63})
        assert too_big.error is not None and too_big.error.code == "invalid_arguments"
        bad_float = await mesh.call("rune_obj", {"o": {}, "i": 1.5})
        assert bad_float.error is not None and bad_float.error.code == "invalid_arguments"


FAILING = """\
#[tool(desc = "panics")]
pub fn panics() {
    panic!("kaboom {}", 42)
}

#[tool(desc = "loops forever", timeout_ms = 400)]
pub fn spins() { loop { } }

fn down(n) { down(n + 1) + 1 }

#[tool(desc = "recurses without end")]
pub fn deep() { down(0) }

#[param(name = "x", type = "integer", desc = "x")]
#[tool(desc = "Err for odd numbers")]
pub fn even(x) { if x % 2 == 0 { Ok(x) } else { Err(`${x} is odd`) } }

#[param(name = "x", type = "integer", desc = "x")]
#[tool(desc = "fast")]
pub fn double(x) { x * 2 }

#[tool(desc = "waits on the mesh past its deadline", timeout_ms = 300)]
pub async fn waits() { toolmesh::call("sleep", #{seconds: 1.5}).await }

#[tool(desc = "Err with an object")]
pub fn refuses() { Err(#{reason: "closed", retry: false}) }
"""


async def test_panics_loops_and_recursion_get_typed_errors_while_other_calls_run(
    toolmesh_settings: Settings, tmp_path: Path
) -> None:
    (tmp_path / "bad.rn").write_text(FAILING)
    results: dict[str, Any] = {}
    doubled: list[Any] = []
    async with (
        serve(toolmesh_settings, tmp_path, EXAMPLES / "slow_tools.py"),
        Mesh(settings=toolmesh_settings) as mesh,
    ):

        async def call(tool: str, arguments: dict[str, Any] | None = None) -> None:
            results[tool] = await mesh.call(tool, arguments or {})

        async def fast_calls() -> None:
            for i in range(20):
                doubled.append((await mesh.call("rune_double", {"x": i})).structured_content)
                await anyio.sleep(0.01)

        async with anyio.create_task_group() as tg:
            for tool in ("rune_panics", "rune_spins", "rune_deep", "rune_waits"):
                tg.start_soon(call, tool)
            tg.start_soon(call, "rune_even", {"x": 3})
            tg.start_soon(call, "rune_refuses")
            tg.start_soon(fast_calls)

        assert doubled == [2 * i for i in range(20)]
        panic = results["rune_panics"].error
        assert panic.code == "execution_failed"
        assert "bad.rn:3:5" in panic.message and "kaboom 42" in panic.message
        assert panic.details["kind"] == "RunePanic" and panic.details["line"] == 3
        assert results["rune_spins"].error.code == "timeout"
        assert results["rune_waits"].error.code == "timeout" and results["rune_waits"].duration_ms < 1000
        deep = results["rune_deep"].error
        assert deep.code == "execution_failed" and "recursion limit" in deep.message
        odd = results["rune_even"].error
        assert (
            odd.code == "execution_failed" and "Err(3 is odd)" in odd.message and "bad.rn:16" in odd.message
        )
        refused = results["rune_refuses"].error
        assert refused.code == "execution_failed" and "bad.rn:26" in refused.message
        assert 'Err({"reason": "closed", "retry": false})' in refused.message  # JSON, as the caller reads it
        assert refused.details["error"] == {"reason": "closed", "retry": False}

        # the endless loop's thread was stopped at the deadline: the process is idle again
        started = time.process_time()
        await anyio.sleep(0.5)
        assert time.process_time() - started < 0.2
        assert (await mesh.call("rune_double", {"x": 21})).structured_content == 42


RELAY = """\
#[param(name = "tool", type = "string", desc = "tool to call")]
#[param(name = "a", type = "integer", desc = "a")]
#[tool(desc = "calls another tool")]
pub async fn relay(tool, a) {
    let sum = toolmesh::call(tool, #{a: a, b: 1}).await?;
    Ok(#{sum: sum})
}
"""


async def test_a_tool_calls_a_tool_on_another_node(toolmesh_settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "relay.rn").write_text(RELAY)
    async with (
        serve(toolmesh_settings, EXAMPLES / "rune", tmp_path, name="rune-node"),
        serve(toolmesh_settings, EXAMPLES / "math_tools.py", name="math-node"),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        words = await mesh.call("rune_tag_words", {"tag": "rune"})
        assert words.structured_content == {"tag": "rune", "words": 460}
        assert words.node == "rune-node"
        relayed = await mesh.call("rune_relay", {"tool": "add", "a": 41})
        assert relayed.structured_content == {"sum": 42}
        failed = await mesh.call("rune_relay", {"tool": "no_such_tool", "a": 1})
        assert failed.error is not None and failed.error.code == "execution_failed"
        assert "unknown_tool" in failed.error.message


QUICK_THEN_SLOW = """\
#[param(name = "n", type = "integer", desc = "loop iterations")]
#[param(name = "v", type = "array", desc = "a list the tool pushes to")]
#[tool(desc = "cost depends on n")]
pub fn work(n, v) {
    v.push(0);
    let i = 0;
    while i < n { i += 1; }
    v.len()
}

async fn add_on_mesh(a, b) { toolmesh::call("add", #{a: a, b: b}).await }

#[param(name = "n", type = "integer", desc = "a number")]
#[param(name = "mesh", type = "boolean", desc = "add one through the mesh")]
#[tool(desc = "a sync tool that awaits the mesh only sometimes")]
pub fn maybe_mesh(n, mesh) { if mesh { add_on_mesh(n, 1).await.unwrap() } else { n } }
"""


async def test_a_quick_tool_that_turns_slow_still_answers_right(
    toolmesh_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quick sync tools are tried on the event loop first; a run needing more moves to a thread, unchanged,
    and the tool returns to the event loop once it has been quick in threads for longer."""
    monkeypatch.setattr(rune_executor, "FAST_SECONDS", 0.05)  # "quick" even on a loaded test machine
    (tmp_path / "work.rn").write_text(QUICK_THEN_SLOW)
    async with (
        serve(toolmesh_settings, tmp_path, EXAMPLES / "math_tools.py") as node,
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        for _ in range(5):  # quick runs: after three the tool is tried inline
            assert (await mesh.call("rune_work", {"n": 0, "v": [1]})).structured_content == 2
        entry = rune_plugin.catalog_of(node.kernel).tools["rune_work"]
        assert entry.inline
        slow = await mesh.call("rune_work", {"n": 200_000, "v": [1, 2]})
        assert slow.structured_content == 3  # the cut-short inline attempt's push did not leak into the rerun
        assert (entry.inline, entry.setbacks, entry.quick_runs_needed) == (False, 1, 6)
        # back on the event loop after six quick runs in worker threads (the slow run may count as one)
        assert (await mesh.call("rune_work", {"n": 0, "v": []})).structured_content == 1
        assert not entry.inline
        for _ in range(5):
            assert (await mesh.call("rune_work", {"n": 0, "v": []})).structured_content == 1
        assert entry.inline

        for n in range(4):
            assert (await mesh.call("rune_maybe_mesh", {"n": n, "mesh": False})).structured_content == n
        assert rune_plugin.catalog_of(node.kernel).tools["rune_maybe_mesh"].inline
        assert (await mesh.call("rune_maybe_mesh", {"n": 41, "mesh": True})).structured_content == 42
        assert rune_plugin.catalog_of(node.kernel).tools["rune_maybe_mesh"].setbacks == 1
