"""Running code tools: TypeScript and JavaScript, results, failures, console output."""

from __future__ import annotations

from pathlib import Path

import anyio
import msgspec
import pytest
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ToolRequest
from toolmesh.plugins import sandbox
from toolmesh.testing import running_node

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "sandbox"


def _request(tool: str, **arguments: object) -> ToolRequest:
    return ToolRequest(id=f"r-{tool}", tool=tool, arguments=dict(arguments))


async def test_typescript_and_javascript_examples_over_nats(toolmesh_settings) -> None:
    settings = msgspec.structs.replace(toolmesh_settings, plugins={"sandbox": {"workers": 1}})
    async with (
        running_node(settings, sources=[str(EXAMPLES)], plugins=[sandbox], load_entrypoints=False) as node,
        Mesh(settings=settings) as mesh,
    ):
        added = await mesh.call("add_numbers", {"a": 2, "b": 40})
        slug = await mesh.call("make_slug", {"text": "Hello, Deno World"})
        note = await mesh.call("take_note", {"text": "call the plumber", "tag": "urgent"})
        state = sandbox.sandbox_of(node.kernel)
        with anyio.fail_after(10):  # note_echo subscribes to urgent notes and bootstraps once
            while not state.subscriptions.runs or "note_echo" not in state.bootstrapper.results:
                await anyio.sleep(0.05)
    assert (added.is_error, added.structured_content) == (False, {"sum": 42})
    assert (slug.is_error, slug.structured_content) == (False, {"slug": "hello-deno-world"})
    assert note.structured_content["notes_with_tag"] == 1
    assert state.subscriptions.runs[0][1]["breadcrumb"]["id"] == note.structured_content["id"]
    assert state.bootstrapper.results["note_echo"].structured_content == {"seen": None}


async def test_typescript_types_are_stripped_and_async_code_awaited(write_tool, tool_dir, kernel_for) -> None:
    write_tool(
        "ts_async",
        "type In = { n: number };\n"
        "export async function execute(input: In): Promise<number[]> {\n"
        "  await new Promise((r) => setTimeout(r, 5));\n"
        "  return Array.from({ length: input.n }, (_, i: number) => i * i);\n}\n",
        language="typescript",
    )
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(_request("ts_async", n=4))
    assert (result.is_error, result.structured_content) == (False, [0, 1, 4, 9])


async def test_output_is_validated_against_output_schema(write_tool, tool_dir, kernel_for) -> None:
    write_tool("wrong_output", "export function execute() { return { count: 'many' } }",
               output_schema={"type": "object", "properties": {"count": {"type": "integer"}}})
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(_request("wrong_output"))
    assert result.error is not None and result.error.code == "execution_failed"
    assert "output_schema" in result.error.message and "$.count" in result.error.message


async def test_input_is_validated_before_the_sandbox_runs(write_tool, tool_dir, kernel_for) -> None:
    write_tool("needs_n", "export function execute(i) { return i.n }",
               input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(_request("needs_n", n="x"))
    assert result.error is not None and result.error.code == "invalid_arguments"


async def test_a_thrown_error_is_execution_failed_with_its_message(write_tool, tool_dir, kernel_for) -> None:
    write_tool("thrower", "export function execute() { throw new RangeError('n must be positive') }")
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(_request("thrower"))
        again = await kernel.call(_request("thrower"))
    assert result.error is not None and result.error.code == "execution_failed"
    assert "RangeError: n must be positive" in result.error.message
    assert "<thrower>" in result.error.details["stack"] and "base64" not in result.error.details["stack"]
    assert again.error is not None and again.error.code == "execution_failed"


async def test_a_result_that_is_not_json_is_execution_failed(write_tool, tool_dir, kernel_for) -> None:
    write_tool("bigint", "export function execute() { return { n: 10n } }")
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(_request("bigint"))
    assert result.error is not None and result.error.code == "execution_failed"
    assert "not JSON" in result.error.message


async def test_console_output_becomes_the_call_logs(write_tool, tool_dir, kernel_for, caplog) -> None:
    write_tool("chatty", "export function execute(i, ctx) { console.log('one', {a: 1}); console.error('two');"
                         " ctx.log('three'); return 1 }")
    async with kernel_for([str(tool_dir)]) as kernel:
        with caplog.at_level("INFO", logger="toolmesh.tool"):
            result = await kernel.call(_request("chatty"))
    assert result.structured_content == 1
    messages = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "toolmesh.tool"]
    assert messages == [("INFO", 'chatty: one {"a":1}'), ("ERROR", "chatty: two"), ("INFO", "chatty: three")]


async def test_request_context_is_given_to_execute(write_tool, tool_dir, kernel_for) -> None:
    write_tool("whoami", "export function execute(i, ctx) { return { id: ctx.request.id, tool: ctx.request.tool,"
                         " trigger: ctx.request.trigger_event ?? null, secrets: Object.keys(ctx.secrets) } }")
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(_request("whoami"))
    assert result.structured_content == {"id": "r-whoami", "tool": "whoami", "trigger": None, "secrets": []}


async def test_concurrent_calls_run_in_parallel_isolates(write_tool, tool_dir, kernel_for) -> None:

    write_tool("sleepy", "export async function execute(i) { await new Promise(r => setTimeout(r, 300)); return i.k }")
    results = {}
    async with kernel_for([str(tool_dir)]) as kernel:
        started = anyio.current_time()

        async def one(k: int) -> None:
            results[k] = (await kernel.call(ToolRequest(id=str(k), tool="sleepy", arguments={"k": k}))).structured_content

        async with anyio.create_task_group() as tg:
            for k in range(4):
                tg.start_soon(one, k)
        elapsed = anyio.current_time() - started
    assert results == {0: 0, 1: 1, 2: 2, 3: 3}
    assert elapsed < 1.15  # one after another would take at least 1.2 s


async def test_a_result_over_the_payload_limit_is_too_large(write_tool, tool_dir, kernel_for) -> None:
    write_tool("huge", "export function execute(i) { return 'x'.repeat(i.n) }")
    async with kernel_for([str(tool_dir)]) as kernel:
        huge = await kernel.call(_request("huge", n=2 * 1024 * 1024))
        fits = await kernel.call(_request("huge", n=10))
    assert huge.error is not None and huge.error.code == "too_large"
    assert fits.structured_content == "x" * 10


async def test_refresh_reloads_changed_code_and_drops_removed_tools(write_tool, tool_dir, kernel_for) -> None:
    write_tool("version", "export function execute() { return 1 }")
    gone = write_tool("gone", "export function execute() { return 'here' }")
    async with kernel_for([str(tool_dir)]) as kernel:
        before = await kernel.call(_request("version"))
        write_tool("version", "export function execute() { return 2 }")
        gone.unlink()
        await kernel.refresh_tools()
        after = await kernel.call(_request("version"))
        removed = await kernel.call(_request("gone"))
    assert (before.structured_content, after.structured_content) == (1, 2)
    assert removed.error is not None and removed.error.code == "unknown_tool"


async def test_every_call_starts_from_a_fresh_module(write_tool, tool_dir, kernel_for) -> None:
    write_tool("counter", "let calls = 0;\nexport function execute() { globalThis.seen = (globalThis.seen ?? 0) + 1;"
                          " return [++calls, globalThis.seen] }")
    async with kernel_for([str(tool_dir)]) as kernel:
        counts = [(await kernel.call(_request("counter"))).structured_content for _ in range(3)]
    assert counts == [[1, 1]] * 3
