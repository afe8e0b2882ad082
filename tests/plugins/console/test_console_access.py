"""The console's guards, attacked for real: missing and wrong tokens, cross-site and rebound requests,
listening beyond loopback without a token, secrets reaching the page, calls outside the console's grants."""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from playwright.sync_api import expect
from toolmesh.testing import eventually_sync, running_node, test_settings

from tests.processes import ROOT

from .conftest import TOOLS, ConsoleProcess, console_command, start_console, wait_for_tools

TOKEN = secrets.token_urlsafe(24)
IDENTITY_SECRET = secrets.token_hex(16)


def fetch(
    url: str,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: Any = None,
    read: bool = True,
    limit: int | None = 2048,
) -> tuple[int, dict[str, str], str]:
    """Status, headers and (the first ``limit`` bytes of; ``None``: all of) the body of ``url``."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    opener = urllib.request.build_opener(_NoRedirect())
    try:
        with opener.open(request, timeout=10) as answer:
            text = answer.read(limit if limit is not None else -1).decode(errors="replace") if read else ""
            return answer.status, dict(answer.headers), text
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode(errors="replace")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def csrf_of(console: ConsoleProcess, headers: dict[str, str] | None = None) -> str:
    status, _, page = fetch(console.url, headers=headers)
    assert status == 200, page
    found = re.search(r'name="csrf-token" content="([^"]+)"', page)
    assert found
    return found.group(1)


@pytest.fixture(scope="module")
def guarded(console_mesh) -> Iterator[ConsoleProcess]:
    started = start_console(console_mesh.settings, env={"TOOLMESH_CONSOLE_TOKEN": TOKEN})
    started.token = TOKEN
    try:
        yield started
    finally:
        started.stop()


BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    "path",
    [
        "",
        "tools/add",
        "live",
        "live/stream",
        "nodes",
        "nodes/table",
        "calls/anything",
        "api/calls/anything",
        "static/console.css",
    ],
)
def test_every_request_without_the_token_is_refused(guarded, path) -> None:
    status, _, text = fetch(guarded.url + path)
    assert status == 401 and "token is required" in text
    status, _, _ = fetch(guarded.url + path, headers={"Authorization": "Bearer " + TOKEN[:-1] + "x"})
    assert status == 401
    status, _, _ = fetch(guarded.url + path, headers={"Cookie": "toolmesh_console=forged"})
    assert status == 401
    status, _, _ = fetch(guarded.url + path, headers=BEARER, read=path != "live/stream")
    assert status in (200, 404)  # 404: the call ids that do not exist


def test_a_call_without_the_token_is_refused_and_nothing_runs(guarded, console_mesh) -> None:
    before = console_mesh.nodes["node-a"].inflight
    status, _, _ = fetch(
        guarded.url + "api/tools/add/calls",
        method="POST",
        body={"arguments": {"a": 1, "b": 2}},
        headers={"X-Console-CSRF": "guess", "Content-Type": "application/json"},
    )
    assert status == 401 and console_mesh.nodes["node-a"].inflight == before
    # the console and the mesh still answer the token holder
    csrf = csrf_of(guarded, BEARER)
    status, _, text = fetch(
        guarded.url + "api/tools/add/calls",
        method="POST",
        body={"arguments": {"a": 1, "b": 2}},
        headers={**BEARER, "X-Console-CSRF": csrf},
    )
    assert status == 202
    call_id = json.loads(text)["id"]

    def finished() -> Any:
        state = json.loads(fetch(f"{guarded.url}api/calls/{call_id}", headers=BEARER)[2])
        return state if state["status"] != "running" else None

    assert eventually_sync(finished, timeout=10)["result"]["structured_content"] == 3


def test_the_token_in_the_address_signs_the_browser_in(page, guarded, screenshots) -> None:
    refused = page.goto(guarded.url)
    assert refused.status == 401
    page.screenshot(path=screenshots / "refused-without-token.png")
    page.goto(f"{guarded.url}live?token={TOKEN}")
    assert page.url == f"{guarded.url}live"  # the token left the address bar
    cookie = next(c for c in page.context.cookies() if c["name"] == "toolmesh_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
    expect(page.locator("#live-state")).to_have_text("live")  # the live stream took the cookie
    wait_for_tools(page, guarded.url, ["add"])
    page.goto(f"{guarded.url}tools/add")
    page.locator('[data-path="$.a"] input').fill("2")
    page.locator('[data-path="$.b"] input').fill("3")
    page.click("#call-button")
    expect(page.locator("#result .json-view")).to_have_text("5")


def test_cross_site_requests_are_refused(guarded, console) -> None:
    for target, auth in ((guarded, BEARER), (console, {})):
        url = target.url + "api/tools/add/calls"
        body = {"arguments": {"a": 1, "b": 1}}
        csrf = csrf_of(target, auth)
        assert fetch(url, method="POST", body=body, headers=auth)[0] == 403  # no CSRF token
        assert fetch(url, method="POST", body=body, headers={**auth, "X-Console-CSRF": "forged"})[0] == 403
        foreign = {**auth, "X-Console-CSRF": csrf, "Origin": "http://attacker.example"}
        assert fetch(url, method="POST", body=body, headers=foreign)[0] == 403
        assert fetch(url, method="POST", body=body, headers={**auth, "X-Console-CSRF": csrf})[0] == 202
        cancel = target.url + "api/calls/anything/cancel"
        assert fetch(cancel, method="POST", headers=auth)[0] == 403


def test_a_console_without_token_answers_loopback_names_only(console) -> None:
    # A page of another site whose name was rebound to 127.0.0.1 sends its own Host: refused.
    assert fetch(console.url, headers={"Host": "attacker.example"})[0] == 421
    assert fetch(console.url, headers={"Host": "localhost"})[0] == 200


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--host", "0.0.0.0"], "--token"),
        (["--host", "0.0.0.0", "--token", "short"], "shorter than 16"),
    ],
)
def test_listening_beyond_loopback_needs_a_token(console_mesh, args, needle) -> None:
    done = subprocess.run(
        console_command(console_mesh.settings, *args),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=30,
        check=False,
        env={"PATH": "/usr/bin:/bin", "TOOLMESH_CONSOLE_TOKEN": ""},
    )
    assert done.returncode == 2 and needle in done.stderr


def test_secrets_never_reach_the_page(page, console, screenshots) -> None:
    wait_for_tools(page, console.url, ["sign_in"])
    page.goto(f"{console.url}tools/sign_in")
    html = page.content()
    assert "header-s3cr3t-value" not in html and "env-s3cr3t-value" not in html
    assert "accounts.example.org" in html  # the rest of meta is shown
    page.locator('[data-path="$.user"] input').fill("ada")
    page.locator('[data-path="$.password"] input').fill("hunter2-s3cr3t")
    page.click("#call-button")
    expect(page.locator("#result .json-view")).to_contain_text("signed in ada")
    page.click("#result .detail-link")
    page.wait_for_url(re.compile(r"/calls/"))
    detail = page.content()
    assert "hunter2-s3cr3t" not in detail and '"***"' in detail
    state = page.request.get(page.url.replace("/calls/", "/api/calls/")).text()
    assert "hunter2-s3cr3t" not in state
    page.screenshot(path=screenshots / "call-detail-redacted.png", full_page=True)


@pytest.fixture(scope="module")
def guarded_mesh(toolmesh_broker) -> Iterator[Any]:
    """A node that signs its catalog and lets identity console-op call `add` only."""
    import anyio.from_thread

    settings = test_settings(toolmesh_broker.url, identity_secret=IDENTITY_SECRET)
    settings = msgspec.structs.replace(
        settings, plugins={"authorization": {"identities": {"console-op": ["add"]}}}
    )
    with anyio.from_thread.start_blocking_portal("asyncio") as portal:
        node = portal.wrap_async_context_manager(
            running_node(settings, name="node-guarded", sources=[str(TOOLS / "console_python_tools.py")])
        )
        node.__enter__()
        try:
            yield settings
        finally:
            node.__exit__(None, None, None)


def test_calls_carry_the_console_identity_through_authorization(guarded_mesh) -> None:
    started = start_console(
        guarded_mesh, env={"TOOLMESH_IDENTITY": "console-op", "TOOLMESH_IDENTITY_SECRET": IDENTITY_SECRET}
    )
    anonymous = start_console(guarded_mesh)
    try:
        outcomes = {}
        for name, target in (("signed", started), ("anonymous", anonymous)):
            csrf = csrf_of(target)
            for tool, arguments in (("add", {"a": 1, "b": 2}), ("divide", {"a": 1, "b": 2})):
                eventually_sync(
                    lambda target=target, tool=tool: fetch(f"{target.url}tools/{tool}")[0] == 200,
                    timeout=10,
                    what=f"{tool} in the catalog",
                )
                status, _, text = fetch(
                    f"{target.url}api/tools/{tool}/calls",
                    method="POST",
                    body={"arguments": arguments},
                    headers={"X-Console-CSRF": csrf},
                )
                assert status == 202, text
                call_id = json.loads(text)["id"]

                def done(target: ConsoleProcess = target, call_id: str = call_id) -> Any:
                    state = json.loads(fetch(f"{target.url}api/calls/{call_id}")[2])
                    return state if state["status"] != "running" else None

                result = eventually_sync(done, timeout=10)["result"]
                outcomes[name, tool] = (
                    result["error"]["code"] if result["is_error"] else result["structured_content"]
                )
    finally:
        started.stop()
        anonymous.stop()
    assert outcomes == {
        ("signed", "add"): 3,
        ("signed", "divide"): "rejected",
        ("anonymous", "add"): "rejected",
        ("anonymous", "divide"): "rejected",
    }
