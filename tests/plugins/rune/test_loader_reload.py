"""Hot reload on a real mesh: add, edit, break, fix and delete Rune files while calls run."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import toolmesh.plugins.python as python_plugin
import toolmesh.plugins.rune as rune_plugin
from toolmesh import ConfigError, Mesh, Settings
from toolmesh.contracts import ToolEvent
from toolmesh.plugins.rune import RuneSettings
from toolmesh.testing import running_node

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


async def test_add_edit_break_fix_delete_while_calls_run(toolmesh_settings: Settings, tmp_path: Path) -> None:
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

        async def collect() -> None:
            async for event in mesh.events():
                if event.kind in ("reloaded", "reload_failed"):
                    events.append(event)

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

        tg.start_soon(collect)
        await anyio.sleep(0.1)  # the event subscription is in place
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

        async def slow_call() -> None:
            in_flight["result"] = await mesh.call("rune_slow", {"seconds": 0.8})

        tg.start_soon(slow_call)
        await anyio.sleep(0.2)
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
    kinds = {(event.kind, event.attributes.get("change")) for event in events}
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
