"""callTool through the mesh, breadcrumbs (JetStream) with their permissions, and subscriptions."""

from __future__ import annotations

import anyio
import anyio.to_thread
import msgspec
import pytest
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ToolRequest
from toolmesh.plugins import sandbox
from toolmesh.testing import running_node

pytestmark = pytest.mark.anyio

DOUBLE = "export function execute(i) { return { doubled: i.n * 2 } }"
CALLER = (
    "export async function execute(i, ctx) {\n"
    "  const first = await ctx.callTool('double', { n: i.n });\n"
    "  let failure = null;\n"
    "  try { await ctx.callTool('no_such_tool', {}); } catch (e) { failure = e.name; }\n"
    "  return { result: first.doubled, failure };\n}\n"
)
CRUMBS = (
    "export async function execute(i, ctx) {\n"
    "  const made = await ctx.breadcrumbs.create({ schema_name: 'note.v1', title: 'n', tags: ['t:1'], context: { v: 1 } });\n"
    "  const got = await ctx.breadcrumbs.get(made.id);\n"
    "  const changed = await ctx.breadcrumbs.update(made.id, { context: { w: 2 } });\n"
    "  const found = await ctx.breadcrumbs.query({ schema_name: 'note.v1', tag: 't:1' });\n"
    "  return { same: got.id === made.id, version: changed.version, context: changed.context,"
    " found: found.map(c => c.id).includes(made.id) };\n}\n"
)
NOTE_ACCESS = {"network": False, "breadcrumbs": {"read": ["note.v1"], "write": ["note.v1"]}}


def _settings(toolmesh_settings, **sandbox_settings):
    return msgspec.structs.replace(toolmesh_settings, plugins={"sandbox": {"workers": 1, "max_idle": 1, **sandbox_settings}})


async def test_call_tool_goes_through_the_mesh(write_tool, tool_dir, toolmesh_settings) -> None:
    write_tool("double", DOUBLE)
    write_tool("caller", CALLER)
    settings = _settings(toolmesh_settings)
    async with (
        running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False),
        Mesh(settings=settings) as mesh,
    ):
        result = await mesh.call("caller", {"n": 21}, timeout=10)
    assert result.structured_content == {"result": 42, "failure": "unknown_tool"}


async def test_breadcrumbs_in_jetstream_within_permissions(write_tool, tool_dir, toolmesh_settings) -> None:
    write_tool("crumbs", CRUMBS, permissions=NOTE_ACCESS)
    settings = _settings(toolmesh_settings)
    async with running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False) as node:
        async with Mesh(settings=settings) as mesh:
            result = await mesh.call("crumbs", {}, timeout=10)
        store = sandbox.sandbox_of(node.kernel).breadcrumbs
        stored = await store.query("note.v1", None, 10)
    assert result.structured_content == {"same": True, "version": 2, "context": {"v": 1, "w": 2}, "found": True}
    assert type(store).__name__ == "NatsBreadcrumbs"
    assert [crumb.context for crumb in stored] == [{"v": 1, "w": 2}]


FORBIDDEN = [
    pytest.param("await ctx.breadcrumbs.create({ schema_name: 'secret.v1', title: 'x' })", "create", id="create"),
    pytest.param("try { await ctx.breadcrumbs.create({ schema_name: 'secret.v1' }) } catch {}", "create",
                 id="create-caught"),
    pytest.param("await ctx.breadcrumbs.query({ schema_name: 'secret.v1' })", "read", id="query"),
]


@pytest.mark.parametrize(("statement", "action"), FORBIDDEN)
async def test_a_breadcrumb_schema_not_permitted_is_a_violation(statement, action, write_tool, tool_dir, kernel_for) -> None:
    write_tool("sneaky", f"export async function execute(i, ctx) {{ {statement}; return 'done' }}", permissions=NOTE_ACCESS)
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(ToolRequest(id="1", tool="sneaky"))
        store = sandbox.sandbox_of(kernel).breadcrumbs
        leaked = await store.query("secret.v1", None, 10)
    assert result.error is not None and result.error.code == "sandbox_violation"
    assert f"may not {action} breadcrumbs of schema 'secret.v1'" in result.error.message
    assert leaked == []


async def test_subscriptions_run_the_tool_once_per_matching_breadcrumb(write_tool, tool_dir, toolmesh_settings) -> None:
    write_tool("writer", "export async function execute(i, ctx) {"
                         " return (await ctx.breadcrumbs.create({ schema_name: 'tick.v1', title: 't', tags: i.tags })).id }",
               permissions={"breadcrumbs": {"write": ["tick.v1"]}})
    write_tool("listener", "export async function execute(i, ctx) { const e = ctx.request.trigger_event;"
                           " await ctx.breadcrumbs.create({ schema_name: 'heard.v1', title: e.breadcrumb.id,"
                           " tags: [e.event] }); return 1 }",
               permissions={"breadcrumbs": {"write": ["heard.v1"], "read": ["heard.v1"]}},
               subscriptions=[{"schema_name": "tick.v1", "tag": "interval:daily", "description": "daily"}])
    settings = _settings(toolmesh_settings)
    async with (
        running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False) as first,
        running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False),
        Mesh(settings=settings) as mesh,
    ):
        matching = (await mesh.call("writer", {"tags": ["interval:daily"]}, timeout=10)).structured_content
        other = (await mesh.call("writer", {"tags": ["interval:hourly"]}, timeout=10)).structured_content
        store = sandbox.sandbox_of(first.kernel).breadcrumbs
        heard = []
        with anyio.move_on_after(5):
            while not heard:
                heard = await store.query("heard.v1", None, 10)
                await anyio.sleep(0.05)
        await anyio.sleep(0.5)  # a second (duplicate) run would show up by now
        heard = await store.query("heard.v1", None, 10)
    assert [(crumb.title, crumb.tags) for crumb in heard] == [(matching, ("created",))]
    assert other != matching


async def test_subscriptions_without_nats_use_the_memory_store(write_tool, tool_dir, kernel_for) -> None:
    write_tool("writer", "export async function execute(i, ctx) {"
                         " return (await ctx.breadcrumbs.create({ schema_name: 'tick.v1', title: 't' })).id }",
               permissions={"breadcrumbs": {"write": ["tick.v1"]}})
    write_tool("listener", "export function execute(i, ctx) { return ctx.request.trigger_event.breadcrumb.id }",
               subscriptions=[{"schema_name": "tick.v1"}])
    async with kernel_for([str(tool_dir)]) as kernel:
        made = (await kernel.call(ToolRequest(id="1", tool="writer"))).structured_content
        subscriptions = sandbox.sandbox_of(kernel).subscriptions
        with anyio.fail_after(5):
            while not subscriptions.runs:
                await anyio.sleep(0.02)
    [(tool, trigger)] = subscriptions.runs
    assert (tool, trigger["schema_name"], trigger["event"], trigger["breadcrumb"]["id"]) == (
        "listener", "tick.v1", "created", made)


async def test_documents_published_on_the_mesh_are_served(write_tool, tool_dir, toolmesh_settings) -> None:
    from toolmesh.plugins.sandbox.cli import sandbox_app
    from typer.testing import CliRunner

    settings = _settings(toolmesh_settings, mesh_tools=True)
    path = write_tool("published", "export function execute(i) { return { v: i.v ?? 1 } }")
    async with running_node(settings, plugins=[sandbox], load_entrypoints=False) as node:
        invoked = await anyio.to_thread.run_sync(
            lambda: CliRunner().invoke(sandbox_app, ["publish", str(path), "--nats", settings.nats_url,
                                                     "--prefix", settings.prefix]))
        assert invoked.exit_code == 0, invoked.output
        async with Mesh(settings=settings) as mesh:
            with anyio.fail_after(10):
                while node.kernel.get_tool("published") is None:
                    await anyio.sleep(0.05)
            result = await mesh.call("published", {"v": 5}, timeout=10)
            # A non-conforming document is refused with every problem, and serves nothing.
            store = sandbox.sandbox_of(node.kernel).breadcrumbs
            await store.put("tool.code.v1.bad", {"schema_name": "tool.code.v1", "title": "", "context": {"name": "bad"}})
            state = sandbox.sandbox_of(node.kernel)
            with anyio.fail_after(5):
                while "tool.code.v1.bad" not in state.mesh_problems:
                    await anyio.sleep(0.05)
    assert result.structured_content == {"v": 5}
    assert {p.path for p in state.mesh_problems["tool.code.v1.bad"]} >= {"$.title", "$.context"}
    assert node.kernel.get_tool("bad") is None
