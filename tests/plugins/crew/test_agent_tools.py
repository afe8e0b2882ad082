"""Agent tools: delegation and questions over NATS, read-file's root jail, add-image; rounds over the mesh."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from toolmesh import Mesh, Reject
from toolmesh.contracts import ImageContent, ResourceLink
from toolmesh.plugins import crew
from toolmesh.plugins.crew import (
    Round,
    ToolCall,
    Toolset,
    ToolUsage,
    add_image_tool,
    agent_subject,
    ask_question_tool,
    delegate_work_tool,
    read_file_tool,
    serve_agent,
)
from toolmesh.testing import running_node

from .conftest import standard_tools

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop


def test_agent_subject() -> None:
    assert agent_subject("tool", "Senior Researcher") == "tool.crew.agent.senior_researcher"
    with pytest.raises(ValueError, match="no letters or digits"):
        agent_subject("tool", "!!")


async def test_delegate_and_ask_over_nats(toolmesh_settings) -> None:
    prefix = toolmesh_settings.prefix
    heard: list[tuple[str, str, str, str | None]] = []

    async def writer(kind: str, text: str, context: str, sender: str | None) -> str:
        heard.append((kind, text, context, sender))
        return f"{kind} done: {text}"

    async with Mesh(settings=toolmesh_settings) as mesh:
        assert mesh.nc is not None
        subscription = await serve_agent(mesh.nc, prefix, "Senior Writer", writer)
        tools = [
            delegate_work_tool(mesh.nc, prefix, ["Senior Writer", "Editor"], from_role="lead", timeout=1),
            ask_question_tool(mesh.nc, prefix, ["Senior Writer", "Editor"], from_role="lead", timeout=1),
        ]
        usage = ToolUsage(mesh, local_tools=tools)
        delegated = await usage.use(
            {
                "name": "Delegate work to coworker",
                "arguments": {"task": "draft", "context": "about cats", "coworker": "senior writer"},
            },
            agent="lead",
            task="t",
        )
        asked = await usage.use(
            {
                "name": "ask_question_to_coworker",
                "arguments": {"question": "tone?", "context": "blog", "coworker": '["Senior Writer"]'},
            },
            agent="lead",
            task="t",
        )
        unknown = await usage.use(
            {
                "name": "ask_question_to_coworker",
                "arguments": {"question": "q", "context": "c", "coworker": "Boss"},
            },
            agent="lead",
        )
        absent = await usage.use(
            {
                "name": "ask_question_to_coworker",
                "arguments": {"question": "q", "context": "c", "coworker": "Editor"},
            },
            agent="lead",
        )
        await subscription.unsubscribe()
    assert delegated.text == "delegate done: draft" and asked.text == "ask done: tone?"
    assert heard == [("delegate", "draft", "about cats", "lead"), ("ask", "tone?", "blog", "lead")]
    assert usage.delegations["t"] == 2
    assert (
        delegated.events[-1].attributes["delegations"] == 0
        and asked.events[-1].attributes["delegations"] == 1
    )
    assert unknown.code == "unknown_coworker" and "- Senior Writer\n- Editor" in unknown.text
    assert absent.code == "coworker_unavailable"


@pytest.mark.parametrize(
    ("path", "arguments", "expected"),
    [
        ("notes.txt", {}, "one\ntwo\nthree\n"),
        ("notes.txt", {"start_line": 2, "line_count": 1}, "two\n"),
        ("sub/deep.txt", {}, "deep"),
        ("missing.txt", {}, "Error: File not found at path: missing.txt"),
    ],
)
async def test_read_file_inside_root(tmp_path: Path, path: str, arguments: dict, expected: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "sub" / "deep.txt").write_text("deep")
    usage = ToolUsage(None, local_tools=[read_file_tool(tmp_path)])
    observation = await usage.use({"name": "read_file", "arguments": {"file_path": path, **arguments}})
    assert (observation.ok, observation.text) == (True, expected)


@pytest.mark.parametrize(
    "escape", ["../secret.txt", "/etc/passwd", "sub/../../secret.txt", "link/secret.txt"]
)
async def test_read_file_jail(tmp_path: Path, escape: str) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("TOP-SECRET-CONTENT")
    (root / "link").symlink_to(tmp_path)
    usage = ToolUsage(None, local_tools=[read_file_tool(root)])
    observation = await usage.use({"name": "read_file", "arguments": {"file_path": escape}})
    assert observation.code == "path_outside_root"
    assert "is outside the readable folder" in observation.text
    assert "TOP-SECRET-CONTENT" not in observation.text


async def test_add_image() -> None:
    usage = ToolUsage(None, local_tools=[add_image_tool()])
    data = base64.b64encode(b"\x89PNG").decode()
    linked = await usage.use(
        {"name": "Add image to content", "arguments": {"image_url": "https://x.test/cat.png"}}
    )
    inline = await usage.use(
        {
            "name": "add_image_to_content",
            "arguments": {"image_url": f"data:image/png;base64,{data}", "action": "Count cats"},
        }
    )
    assert linked.text.startswith("Please provide a detailed description")
    assert (
        isinstance(linked.result.content[1], ResourceLink)
        and linked.result.content[1].mime_type == "image/png"
    )
    assert inline.text == "Count cats"
    assert inline.result.content[1] == ImageContent(data=data, mime_type="image/png")


async def test_round_execute_over_mesh(toolmesh_settings, tools_plugin, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("A")
    specs = [spec for spec, _ in standard_tools()]
    tools = Toolset("crew", specs).add(read_file_tool(tmp_path))
    tools.add_hook(lambda call, spec: Reject("no failing today"), tool="flaky")
    async with (
        running_node(toolmesh_settings, plugins=[tools_plugin, crew], load_entrypoints=False),
        Mesh(settings=toolmesh_settings) as mesh,
    ):
        plan = await Round(
            tools.resolve(),
            [
                ToolCall("1", "add", {"a": 1, "b": 2}),
                ToolCall("2", "read_file", {"file_path": "a.txt"}),
                ToolCall("3", "flaky", {"reason": "x"}),
            ],
        ).apply_hooks()
        committed = await plan.execute(mesh, local_tools=tools.local_tools)
    assert [(result.call_id, result.content, result.rejected) for result in committed] == [
        ("1", 3, False),
        ("2", "A", False),
        ("3", "Tool call rejected: no failing today", True),
    ]
    assert tools_plugin.runs == {"add": 1}
