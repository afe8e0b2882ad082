"""The console in a real browser on two real nodes: catalog, tool forms, results, live, nodes, call detail."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect
from toolmesh.testing import eventually_sync, running_node

from tests.processes import toolmesh

from .conftest import TOOLS, wait_for_tools

ALL_TOOLS = [
    "add",
    "add_twice",
    "book_room",
    "count_slowly",
    "divide",
    "gradient",
    "rune_scale",
    "shout",
    "sign_in",
]


def field(page, path: str):
    return page.locator(f'#form-fields [data-path="{path}"]').first


def call_tool(page, console, tool: str, values: dict[str, str]) -> None:
    page.goto(f"{console.url}tools/{tool}")
    for path, value in values.items():
        field(page, path).locator("input, textarea, select").first.fill(value)
    page.click("#call-button")


def test_catalog_lists_every_node_and_plugin_and_filters(page, console, screenshots) -> None:
    wait_for_tools(page, console.url, ALL_TOOLS)
    assert page.locator("#counts").inner_text().startswith("9 of 9 tools · 2 nodes")
    plugins = {
        row.get_attribute("data-tool"): row.locator(".pill").first.inner_text()
        for row in page.locator("#catalog tbody tr").all()
    }
    assert plugins["add"] == "python" and plugins["rune_scale"] == "rune" and plugins["shout"] == "sandbox"
    assert page.locator('#catalog tr[data-tool="shout"] td.nodes').inner_text() == "node-b"
    page.screenshot(path=screenshots / "catalog.png", full_page=True)

    page.select_option('select[name="plugin"]', "rune")
    page.wait_for_url(re.compile(r"plugin=rune"))
    assert [row.get_attribute("data-tool") for row in page.locator("#catalog tbody tr").all()] == [
        "rune_scale"
    ]

    page.goto(console.url)
    page.fill('input[name="q"]', "upper-case")  # the description of the sandbox tool, as you type
    page.wait_for_url(re.compile(r"q=upper-case"))
    assert [row.get_attribute("data-tool") for row in page.locator("#catalog tbody tr").all()] == ["shout"]
    assert page.locator("#counts").inner_text().startswith("1 of 9 tools")

    page.goto(f"{console.url}?node=node-b")
    assert [row.get_attribute("data-tool") for row in page.locator("#catalog tbody tr").all()] == ["shout"]
    page.goto(f"{console.url}?tag=math")
    assert [row.get_attribute("data-tool") for row in page.locator("#catalog tbody tr").all()] == [
        "rune_scale"
    ]


def test_form_calls_return_the_right_results(page, console, screenshots) -> None:
    wait_for_tools(page, console.url, ALL_TOOLS)
    call_tool(page, console, "rune_scale", {"$.x": "6", "$.factor": "7"})
    page.wait_for_selector("#result .result-head")
    assert page.locator("#result .json-view").inner_text().strip() == "42"

    # The sandbox tool's ui_schema: its label, help text and textarea widget, and the default filled in.
    page.goto(f"{console.url}tools/shout")
    message = field(page, "$.message")
    assert "Message to shout" in message.locator("label").inner_text()
    assert "comes back in capitals" in message.inner_text()
    assert message.locator("textarea").count() == 1
    assert field(page, "$.times").locator("input").input_value() == "1"
    assert page.locator("#form-fields .field").first.get_attribute("data-path") == "$.message"  # ui order
    page.click("button[data-example='0']")  # the tool's example fills the form
    assert message.locator("textarea").input_value() == "hi"
    assert field(page, "$.times").locator("input").input_value() == "2"
    message.locator("textarea").fill("hi")
    field(page, "$.times").locator("input").fill("2")
    page.click("#call-button")
    page.wait_for_selector("#result .result-head")
    assert '"HI HI"' in page.locator("#result .json-view").inner_text()
    page.screenshot(path=screenshots / "tool-sandbox.png", full_page=True)

    # Nested object, enum as a select, defaults, a list
    page.goto(f"{console.url}tools/book_room")
    assert field(page, "$.room").locator("select").input_value() == '"double"'
    field(page, "$.guest").locator("input").fill("Ada")
    field(page, "$.nights").locator("input").fill("3")
    field(page, "$.room").locator("select").select_option(label="suite")
    field(page, "$.address.city").locator("input").fill("Lyon")
    field(page, "$.address.zip_code").locator("input").fill("69001")
    page.click("#form-fields .add-item")
    page.locator('#form-fields [data-path="$.extras"] li input').fill("late checkout")
    page.click("#call-button")
    page.wait_for_selector("#result .result-head")
    shown = page.locator("#result .block.text").inner_text()
    assert '"room":"suite"' in shown and '"city":"Lyon"' in shown and '"extras":["late checkout"]' in shown
    page.screenshot(path=screenshots / "tool-python.png", full_page=True)


def test_a_wrong_value_is_shown_on_its_field_without_a_round_trip(page, console, screenshots) -> None:
    wait_for_tools(page, console.url, ALL_TOOLS)
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    call_tool(page, console, "book_room", {"$.guest": "A", "$.nights": "20"})
    nights = field(page, "$.nights").locator(".field-error")
    assert "≤ 14" in nights.inner_text()
    assert "at least 2" in field(page, "$.guest").locator(".field-error").inner_text()
    field(page, "$.address.zip_code").locator("input").fill("12")
    page.click("#call-button")
    assert "does not match" in field(page, "$.address.zip_code").locator(".field-error").inner_text()
    assert "is required" in field(page, "$.address.city").locator(".field-error").inner_text()
    page.screenshot(path=screenshots / "tool-field-errors.png", full_page=True)
    assert posts == []  # nothing was sent


def test_a_node_side_invalid_arguments_is_shown_on_its_field(page, console) -> None:
    wait_for_tools(page, console.url, ALL_TOOLS)
    call_tool(page, console, "divide", {"$.a": "1", "$.b": "0"})
    page.wait_for_selector("#result .error-box")
    assert page.locator("#result .error-box").get_attribute("data-code") == "invalid_arguments"
    assert "Not retryable" in page.locator("#result .error-box").inner_text()
    assert field(page, "$.b").locator(".field-error").inner_text() == "must not be zero"
    assert field(page, "$.a").locator(".field-error").inner_text() == ""
    # The arguments passed the schema: the tool itself refused them, so the call ended in execute.
    page.click("#result .detail-link")
    page.wait_for_url(re.compile(r"/calls/"))
    ended = page.locator('#pipeline-steps li[data-status="ended"]')
    assert ended.get_attribute("data-step") == "execute"
    assert "b must not be zero" in ended.inner_text()
    assert page.locator('#pipeline-steps li[data-step="validate_arguments"]').get_attribute("data-status") == "passed"


def test_an_image_result_renders_as_an_image(page, console, screenshots) -> None:
    wait_for_tools(page, console.url, ALL_TOOLS)
    call_tool(page, console, "gradient", {"$.width": "120", "$.height": "40"})
    image = page.wait_for_selector("#result figure.image img")
    assert page.evaluate("(img) => [img.complete, img.naturalWidth, img.naturalHeight]", image) == [
        True,
        120,
        40,
    ]
    assert page.locator("#result figure.audio audio").get_attribute("src").startswith("data:audio/wav;base64,UklGR")
    assert page.locator("#result .resource-link a").get_attribute("href") == "https://example.org/gradients/1"
    assert "stops: 2" in page.locator("#result .block.resource").inner_text()
    page.screenshot(path=screenshots / "tool-image.png", full_page=True)


def test_progress_is_shown_and_a_long_call_can_be_cancelled(page, console, console_mesh) -> None:
    wait_for_tools(page, console.url, ALL_TOOLS)
    node = console_mesh.nodes["node-a"]
    call_tool(page, console, "count_slowly", {"$.steps": "50", "$.pause": "0.2"})
    expect(page.locator("#progress-text")).to_contain_text("step 2")
    assert not page.locator("#call-progress").is_hidden()
    page.click("#cancel-button")
    expect(page.locator("#call-status")).to_have_text("cancelled")
    eventually_sync(lambda: node.inflight == 0, timeout=5, what="the node stopping the cancelled call")
    assert page.locator("#call-button").is_enabled()


def test_a_cli_call_appears_in_live_within_a_second(page, console, console_mesh, screenshots) -> None:
    page.goto(f"{console.url}live")
    expect(page.locator("#live-state")).to_have_text("live")
    settings = console_mesh.settings
    env = {"TOOLMESH_NATS_URL": settings.nats_url, "TOOLMESH_PREFIX": settings.prefix}
    done = toolmesh("call", "add", '{"a": 40, "b": 2}', "--json", env=env)
    assert done.returncode == 0, done.stderr
    row = page.wait_for_selector('#live-calls tbody tr[data-tool="add"]', timeout=1000)  # the bound
    assert row.get_attribute("data-outcome") == "ok"
    assert "node-a" in row.inner_text()
    page.wait_for_selector('#live-summary tbody tr[data-tool="add"]')
    page.screenshot(path=screenshots / "live.png", full_page=True)

    row.query_selector("a").click()  # the call detail page of that call
    page.wait_for_url(re.compile(r"/calls/"))
    kinds = [item.get_attribute("data-kind") for item in page.locator("#timeline li[data-kind]").all()]
    assert kinds[0] == "started" and kinds[-1] == "finished"
    page.screenshot(path=screenshots / "call-detail.png", full_page=True)


def test_live_pauses_and_filters(page, console, console_mesh) -> None:
    page.goto(f"{console.url}live")
    expect(page.locator("#live-state")).to_have_text("live")
    call_tool_page = page.context.new_page()
    call_tool(call_tool_page, console, "divide", {"$.a": "1", "$.b": "0"})
    call_tool_page.wait_for_selector("#result .error-box")
    row = page.wait_for_selector('#live-calls tbody tr[data-tool="divide"]')
    assert "toolmesh-console" in row.inner_text()  # the caller the node's start event names
    page.select_option("#live-outcome", "ok")
    assert page.locator('#live-calls tbody tr[data-tool="divide"]').count() == 0
    page.select_option("#live-outcome", "error")
    assert (
        page.locator('#live-calls tbody tr[data-tool="divide"]').first.get_attribute("data-outcome")
        == "invalid_arguments"
    )
    page.click("#live-pause")
    before = page.locator("#live-calls tbody tr").count()
    call_tool(call_tool_page, console, "divide", {"$.a": "1", "$.b": "0"})
    call_tool_page.wait_for_selector("#result .error-box")
    page.wait_for_timeout(600)  # more than two batches: a paused view takes none of them
    assert page.locator("#live-calls tbody tr").count() == before
    page.click("#live-pause")
    call_tool(call_tool_page, console, "divide", {"$.a": "1", "$.b": "0"})
    expect(page.locator("#live-calls tbody tr")).not_to_have_count(before)


def test_a_node_that_stops_disappears_from_nodes(page, console, console_mesh, screenshots) -> None:
    page.goto(f"{console.url}nodes")
    page.wait_for_selector('#nodes tr[data-node="node-a"]')
    manager = console_mesh.portal.wrap_async_context_manager(
        running_node(console_mesh.settings, name="node-c", sources=[str(TOOLS / "scale.rn")])
    )
    manager.__enter__()
    try:
        row = page.wait_for_selector('#nodes tr[data-node="node-c"]')
        assert "rune" in row.inner_text() and "healthy" in row.inner_text()
        page.screenshot(path=screenshots / "nodes.png", full_page=True)
    finally:
        manager.__exit__(None, None, None)
    started = time.monotonic()
    page.wait_for_selector('#nodes tr[data-node="node-c"]', state="detached", timeout=15_000)
    assert page.locator('#nodes tr[data-node="node-a"]').count() == 1
    assert time.monotonic() - started < 15


@pytest.mark.parametrize("path", ["tools/no_such_tool", "calls/no-such-call"])
def test_unknown_pages_answer_not_found(page, console, path) -> None:
    answer = page.goto(f"{console.url}{path}")
    assert answer.status == 404 and "Not found" in page.content()


def pipeline_rows(page) -> list[str]:
    """The call detail page's derived pipeline rows, as "step:status"."""
    rows = page.locator("#timeline #pipeline-steps li[data-step]").all()
    return [f"{row.get_attribute('data-step')}:{row.get_attribute('data-status')}" for row in rows]


def test_call_detail_shows_nested_calls_and_their_parent(page, console, screenshots) -> None:
    wait_for_tools(page, console.url, ALL_TOOLS)
    call_tool(page, console, "add_twice", {"$.a": "1", "$.b": "2"})
    expect(page.locator("#result .json-view")).to_have_text("5")
    page.click("#result .detail-link")
    page.wait_for_url(re.compile(r"/calls/"))
    parent_url = page.url
    assert pipeline_rows(page) == [
        "resolve:passed", "admit:passed", "decide:passed", "validate_arguments:passed",
        "cache_lookup:skipped", "execute:passed", "validate_result:passed", "cache_store:skipped",
        "events:passed",
    ]  # add_twice has no cache policy
    assert "derived from the call's events and outcome" in page.locator("#pipeline").inner_text()
    nested = page.locator("#nested-calls tbody tr")
    expect(nested).to_have_count(2)
    assert [row.get_attribute("data-tool") for row in nested.all()] == ["add", "add"]
    assert "finished" in nested.first.inner_text()
    page.screenshot(path=screenshots / "call-detail-nested.png", full_page=True)
    nested.first.locator("a").click()
    page.wait_for_url(re.compile(r"/calls/"))
    assert page.locator(f'a[href="{parent_url.split(console.url.rstrip("/"))[1]}"]').count() == 1


def test_call_detail_shows_where_an_invalid_call_ended(page, console, console_mesh, screenshots) -> None:
    wait_for_tools(page, console.url, ALL_TOOLS)
    settings = console_mesh.settings
    env = {"TOOLMESH_NATS_URL": settings.nats_url, "TOOLMESH_PREFIX": settings.prefix}
    request_id = f"detail-invalid-{time.time_ns()}"
    done = toolmesh("call", "add", '{"a": "x", "b": 2}', "--json", "--id", request_id, env=env)
    assert done.returncode == 1 and "invalid_arguments" in done.stdout, (done.stdout, done.stderr)

    def failed_event_shown() -> bool:
        page.goto(f"{console.url}calls/{request_id}")
        return page.locator('#timeline li[data-kind="failed"]').count() == 1

    eventually_sync(failed_event_shown, timeout=10, interval=0.2, what="the call's failed event on its detail page")
    assert pipeline_rows(page) == [
        "resolve:passed", "admit:passed", "decide:passed", "validate_arguments:ended",
        "cache_lookup:not_reached", "execute:not_reached", "validate_result:not_reached",
        "cache_store:not_reached", "events:passed",
    ]
    ended = page.locator('#pipeline-steps li[data-status="ended"]')
    assert "invalid_arguments" in ended.inner_text() and "validate arguments" in ended.inner_text()
    # the derived rows sit between the call's start and the event that ended it
    kinds = page.locator("#timeline > li").evaluate_all(
        "items => items.map(item => item.dataset.kind || item.id)"
    )
    assert kinds == ["started", "pipeline", "failed"]
    page.screenshot(path=screenshots / "call-detail-invalid.png", full_page=True)
