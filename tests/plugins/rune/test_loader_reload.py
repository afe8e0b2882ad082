"""Hot reload on a real mesh: add, edit, break, fix and delete Rune files while calls run."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import toolmesh.plugins.python as python_plugin
import toolmesh.plugins.rune as rune_plugin
from toolmesh import ConfigError, Kernel, Mesh, Settings
from toolmesh.contracts import ToolEvent
from toolmesh.plugins.rune import RuneSettings
from toolmesh.plugins.rune.loader import LoadedFile
from toolmesh.testing import eventually, running_node
from watchfiles import Change

from tests.event_subscriptions import follow_events, kinds_of

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
RELOAD_WITHIN = 1.0  # seconds, from the issue


def versioned(version: str, *, broken: bool = False) -> str:
    return f"""\
#[tool(desc = "which version serves", version = "{version}.0.0")]
pub fn version() {{ "v{version}" }}

/// Sleeps through the mesh, then answers with the version it started on.
#[param(name = "seconds", type = "number", desc = "how long")]
#[tool(desc = "slow")]
pub async fn slow(seconds) {{
    toolmesh::call("sleep", #{{seconds: seconds}}).await?;
    Ok("v{version}")
}}
{"pub fn oops( {" if broken else ""}
"""


async def within(seconds: float, check: Callable[[], Awaitable[bool]]) -> float:
    """Poll ``check`` until it holds; returns how long that took (fails after ``seconds``)."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds}s")
        await anyio.sleep(0.02)
    return time.monotonic() - started


async def test_add_edit_break_fix_delete_while_calls_run(
    toolmesh_settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="toolmesh.rune")
    tools = tmp_path / "tools"
    tools.mkdir()
    base = tools / "base.rn"
    base.write_text(versioned("1"))
    events: list[ToolEvent] = []
    answers: list[Any] = []
    async with (
        running_node(
            toolmesh_settings,
            sources=[str(tools), str(EXAMPLES / "slow_tools.py")],
            plugins=[rune_plugin, python_plugin],
            load_entrypoints=False,
        ),
        Mesh(settings=toolmesh_settings) as mesh,
        anyio.create_task_group() as tg,
    ):

        calling = anyio.CancelScope()

        async def keep_calling() -> None:
            with calling:
                while True:
                    answers.append(await mesh.call("rune_version"))
                    await anyio.sleep(0.01)

        async def listed() -> dict[str, Any]:
            return {spec.name: spec for spec in await mesh.list_tools()}

        async def answers_with(text: str) -> bool:
            return (await mesh.call("rune_version")).structured_content == text

        events = await follow_events(mesh, tg, None, lambda: mesh.call("rune_version"))
        tg.start_soon(keep_calling)

        # add
        (tools / "extra.rn").write_text('#[tool(desc = "added later")]\npub fn extra() { "extra" }')

        async def extra_served() -> bool:
            return (
                "rune_extra" in await listed()
                and (await mesh.call("rune_extra")).structured_content == "extra"
            )

        timings = {"add": await within(RELOAD_WITHIN, extra_served)}

        # edit while a call on the old version is in flight
        in_flight: dict[str, Any] = {}

        slow = mesh.new_request("rune_slow", {"seconds": 0.8})

        async def slow_call() -> None:
            in_flight["result"] = await mesh.send(slow)

        tg.start_soon(slow_call)
        await eventually(lambda: "started" in kinds_of(events, slow.id), timeout=10)
        base.write_text(versioned("2"))
        timings["edit"] = await within(RELOAD_WITHIN, lambda: answers_with("v2"))
        assert (await listed())["rune_version"].version == "2.0.0"
        await within(2.0, lambda: _true_if(in_flight))
        assert in_flight["result"].structured_content == "v1"  # finished on the version it started with

        # break: the last good version keeps serving, the error is reported
        base.write_text(versioned("3", broken=True))

        async def failure_reported() -> bool:
            return any(event.kind == "reload_failed" for event in events)

        timings["break"] = await within(RELOAD_WITHIN, failure_reported)
        failed = next(event for event in events if event.kind == "reload_failed")
        assert failed.tool in ("rune_version", "rune_slow") and failed.attributes["kept_last_good"] is True
        problem = failed.attributes["problems"][0]
        assert problem["file"] == str(base) and problem["line"] == 11 and "syntax error" in problem["message"]
        assert await answers_with("v2")
        assert (await listed())["rune_version"].available
        logged = [r.getMessage() for r in caplog.records if r.name == "toolmesh.rune"]
        assert any("its last good version keeps serving" in m and f"{base}:11:" in m for m in logged), logged

        # fix
        base.write_text(versioned("3"))
        timings["fix"] = await within(RELOAD_WITHIN, lambda: answers_with("v3"))

        # delete
        (tools / "extra.rn").unlink()

        async def extra_gone() -> bool:
            return "rune_extra" not in await listed()

        timings["delete"] = await within(RELOAD_WITHIN, extra_gone)
        gone = await mesh.call("rune_extra")
        assert gone.error is not None and gone.error.code == "unknown_tool"

        # a new file that never loaded is listed as unavailable, with the reason
        (tools / "broken.rn").write_text('#[tool(desc = "d")]\npub fn f(x) { x }')

        async def placeholder() -> bool:
            spec = (await listed()).get("rune_broken")
            return spec is not None and not spec.available

        await within(RELOAD_WITHIN, placeholder)
        reason = (await listed())["rune_broken"].unavailable_reason
        assert "broken.rn:1:1" in reason and "parameter `x`" in reason

        # the folder's last file goes, then a new one comes: the folder is still watched
        calling.cancel()
        base.unlink()
        (tools / "broken.rn").unlink()

        async def all_gone() -> bool:
            return not any(name.startswith("rune_") for name in await listed())

        await within(RELOAD_WITHIN, all_gone)
        (tools / "again.rn").write_text('#[tool(desc = "back")]\npub fn again() { "again" }')

        async def back() -> bool:
            return (await mesh.call("rune_again")).structured_content == "again"

        await within(RELOAD_WITHIN, back)

        tg.cancel_scope.cancel()

    assert answers and all(not result.is_error for result in answers), [
        r.error for r in answers if r.is_error
    ]
    assert {result.structured_content for result in answers} <= {"v1", "v2", "v3"}
    kinds = {(event.kind, event.attributes.get("change")) for event in events if event.kind == "reloaded"}
    assert {("reloaded", "added"), ("reloaded", "modified"), ("reloaded", "removed")} <= kinds
    assert max(timings.values()) <= RELOAD_WITHIN, timings


async def _true_if(found: dict[str, Any]) -> bool:
    return bool(found)


async def test_watch_false_turns_reloading_off(toolmesh_settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "v.rn").write_text(versioned("1"))
    settings = msgspec.structs.replace(toolmesh_settings, plugins={"rune": {"watch": False}})
    async with (
        running_node(
            settings, sources=[str(tmp_path)], plugins=[rune_plugin], load_entrypoints=False
        ) as node,
        Mesh(settings=settings) as mesh,
    ):
        (tmp_path / "v.rn").write_text(versioned("2"))
        await anyio.sleep(0.5)
        assert (await mesh.call("rune_version")).structured_content == "v1"
        await node.kernel.refresh_tools()  # an explicit refresh still picks the edit up
        assert (await mesh.call("rune_version")).structured_content == "v2"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"watch": "yes"}, "watch must be true or false"),
        ({"debounce_ms": 0}, "debounce_ms must be an integer"),
    ],
)
def test_bad_rune_settings_are_refused(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RuneSettings.from_table(table)


async def test_a_single_file_source_is_watched_too(toolmesh_settings: Settings, tmp_path: Path) -> None:
    served = tmp_path / "one.rn"
    served.write_text(versioned("1"))
    (tmp_path / "other.rn").write_text('#[tool(desc = "not served")]\npub fn other() { 1 }')
    async with (
        running_node(toolmesh_settings, sources=[str(served)], plugins=[rune_plugin], load_entrypoints=False),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        served.write_text(versioned("2"))
        (tmp_path / "other.rn").write_text('#[tool(desc = "still not served")]\npub fn other() { 2 }')

        async def edited() -> bool:
            return (await mesh.call("rune_version")).structured_content == "v2"

        await within(RELOAD_WITHIN, edited)
        assert "rune_other" not in {spec.name for spec in await mesh.list_tools()}


async def test_an_empty_folder_is_served_and_its_first_tool_picked_up(
    toolmesh_settings: Settings, tmp_path: Path
) -> None:
    async with (
        running_node(
            toolmesh_settings, sources=[str(tmp_path)], plugins=[rune_plugin], load_entrypoints=False
        ),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        assert not [spec for spec in await mesh.list_tools() if spec.name.startswith("rune_")]
        (tmp_path / "first.rn").write_text('#[tool(desc = "first")]\npub fn first() { 1 }')

        async def served() -> bool:
            return (await mesh.call("rune_first")).structured_content == 1

        await within(RELOAD_WITHIN, served)


async def test_folders_created_and_moved_away_are_rescanned(
    toolmesh_settings: Settings, tmp_path: Path
) -> None:
    """The watcher reports a new folder (whose files may predate the watch on it) and a folder
    moved away (no event for its files): both make the node scan its sources again."""
    served, elsewhere = tmp_path / "served", tmp_path / "elsewhere"
    served.mkdir()
    elsewhere.mkdir()
    (served / "base.rn").write_text(versioned("1"))
    async with (
        running_node(toolmesh_settings, sources=[str(served)], plugins=[rune_plugin], load_entrypoints=False),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        (elsewhere / "pack").mkdir()
        (elsewhere / "pack" / "packed.rn").write_text('#[tool(desc = "packed")]\npub fn packed() { 1 }')
        (elsewhere / "pack").rename(served / "pack")  # moved in: one event, for the folder

        async def names() -> set[str]:
            return {spec.name for spec in await mesh.list_tools()}

        async def moved_in() -> bool:
            return "rune_packed" in await names()

        await within(RELOAD_WITHIN, moved_in)

        (served / "fresh").mkdir()  # created, and written to before the watcher watches it
        (served / "fresh" / "fresh.rn").write_text('#[tool(desc = "fresh")]\npub fn fresh() { 2 }')

        async def created() -> bool:
            return "rune_fresh" in await names()

        await within(RELOAD_WITHIN, created)

        (served / "pack").rename(elsewhere / "pack")  # moved away: one event, for the folder

        async def moved_away() -> bool:
            return "rune_packed" not in await names()

        await within(RELOAD_WITHIN, moved_away)
        assert (await mesh.call("rune_version")).structured_content == "v1"


RELAY = """\
#[param(name = "tool", type = "string", desc = "tool to call")]
#[tool(desc = "calls a tool of another node")]
pub async fn relay(tool) { toolmesh::call(tool, #{}).await }
"""


async def test_a_tool_added_on_one_node_is_callable_from_another_within_a_second(
    toolmesh_settings: Settings, tmp_path: Path
) -> None:
    served, relaying = tmp_path / "served", tmp_path / "relaying"
    served.mkdir()
    relaying.mkdir()
    (served / "base.rn").write_text(versioned("1"))
    (relaying / "relay.rn").write_text(RELAY)
    plugins = [rune_plugin]
    async with (
        running_node(toolmesh_settings, sources=[str(served)], plugins=plugins, name="serving"),
        running_node(toolmesh_settings, sources=[str(relaying)], plugins=plugins, name="relaying"),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        assert (await mesh.call("rune_relay", {"tool": "rune_version"})).structured_content == "v1"
        (served / "added.rn").write_text('#[tool(desc = "added")]\npub fn added() { "new" }')

        async def relayed() -> bool:
            result = await mesh.call("rune_relay", {"tool": "rune_added"})
            assert result.node == "relaying"
            return result.structured_content == "new"

        await within(RELOAD_WITHIN, relayed)
        (served / "base.rn").write_text(versioned("2"))

        async def edited() -> bool:
            return (await mesh.call("rune_relay", {"tool": "rune_version"})).structured_content == "v2"

        await within(RELOAD_WITHIN, edited)


def test_which_changes_call_for_a_scan(tmp_path: Path) -> None:
    served = tmp_path / "served"
    (served / "sub").mkdir(parents=True)
    (served / ".git" / "objects" / "ab").mkdir(parents=True)
    (served / "sub" / "a.rn").write_text("")
    catalog = rune_plugin.catalog_of(Kernel([rune_plugin], load_entrypoints=False))
    catalog.good = {str(served / "sub" / "a.rn"): LoadedFile(str(served / "sub" / "a.rn"), "", None)}

    def wanted(change: Change, path: Path) -> bool:
        return catalog._wanted(change, str(path), dirs={served}, singles=frozenset())

    assert wanted(Change.modified, served / "sub" / "a.rn")
    assert wanted(Change.added, served / "sub")  # a new folder
    assert wanted(Change.deleted, served / "sub")  # a folder with a served file went away
    assert not wanted(Change.deleted, served / "other")  # nothing served was in it
    assert not wanted(Change.added, served / ".git" / "objects" / "ab")  # git at work
    assert not wanted(Change.modified, served / ".git" / "x.rn")
    assert not wanted(Change.modified, served / ".#a.rn")  # an editor's lock file
    assert not wanted(Change.modified, served / "notes.txt")
    assert not wanted(Change.modified, tmp_path / "elsewhere.rn")


@pytest.mark.slow
async def test_many_reloads_under_constant_load(toolmesh_settings: Settings, tmp_path: Path) -> None:
    """Thirty edits, each within a second, while four callers never see an error."""
    tool_file = tmp_path / "v.rn"
    tool_file.write_text(versioned("0"))
    results: list[Any] = []
    async with (
        running_node(
            toolmesh_settings, sources=[str(tmp_path)], plugins=[rune_plugin], load_entrypoints=False
        ),
        Mesh(settings=toolmesh_settings) as mesh,
        anyio.create_task_group() as tg,
    ):

        async def caller() -> None:
            while True:
                results.append(await mesh.call("rune_version"))

        for _ in range(4):
            tg.start_soon(caller)
        for version in range(1, 31):
            tool_file.write_text(versioned(str(version)))

            async def current(expected: str = f"v{version}") -> bool:
                return (await mesh.call("rune_version")).structured_content == expected

            await within(RELOAD_WITHIN, current)
        tg.cancel_scope.cancel()
    assert len(results) > 100 and not [result.error for result in results if result.is_error]
