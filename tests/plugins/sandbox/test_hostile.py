"""Hostile code: each attempt is contained with a clear error code and the node keeps serving."""

from __future__ import annotations

import anyio
import msgspec
import pytest
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ToolRequest
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.limits import process_rss_bytes
from toolmesh.testing import running_node

pytestmark = pytest.mark.anyio

GOOD = "export function execute(i) { return { ok: i.n + 1 } }"

HOSTILE = [
    pytest.param("export async function execute() { return await Deno.readTextFile('/etc/passwd') }",
                 "sandbox_violation", "read access", id="read-file"),
    pytest.param("import fs from 'node:fs';\nexport function execute() { return fs.readFileSync('/etc/hostname', 'utf8') }",
                 "sandbox_violation", "read access", id="read-file-node-fs"),
    pytest.param("export function execute() { return Deno.env.get('HOME') }",
                 "sandbox_violation", "env access", id="read-env"),
    pytest.param("export function execute() { return Deno.env.toObject() }",
                 "sandbox_violation", "env access", id="dump-env"),
    pytest.param("export async function execute() { return (await new Deno.Command('/bin/sh', { args: ['-c', 'id'] }).output()).code }",
                 "sandbox_violation", "run access", id="spawn-shell"),
    pytest.param("export async function execute() { return (await new Deno.Command('id').output()).code }",
                 "sandbox_violation", "run access", id="spawn-process"),
    pytest.param("export function execute() { return Deno.dlopen('libc.so.6', {}) }",
                 "sandbox_violation", "ffi access", id="ffi"),
    pytest.param("export async function execute() { return (await fetch('http://example.com/')).status }",
                 "sandbox_violation", "net access", id="network-unlisted-host"),
    pytest.param("export async function execute() { return (await import('https://esm.sh/left-pad')).default }",
                 "sandbox_violation", "import access", id="remote-import"),
    pytest.param("export function execute() { for (;;) {} }", "timeout", "timeout_ms", id="infinite-loop"),
    pytest.param("export function execute() { const a = []; for (;;) a.push(new Array(1e5).fill(1.5)) }",
                 "sandbox_violation", "memory limit", id="memory-bomb-heap"),
    pytest.param("export async function execute() { const a = []; for (;;) { a.push(new Uint8Array(32e6).fill(7));"
                 " await new Promise(r => setTimeout(r, 1)) } }",
                 "sandbox_violation", "memory limit (64 MiB)", id="memory-bomb-buffers"),
    pytest.param("export function execute() { setTimeout(() => { throw new Error('boom') }, 1);"
                 " return new Promise(() => {}) }", "execution_failed", "crashed", id="crash-mid-call"),
    pytest.param("export function execute() { Deno.exit(3) }", "execution_failed", "Deno.exit", id="exit"),
    pytest.param("export function execute() { self.close(); return 1 }", "execution_failed", "close()", id="close-self"),
    pytest.param("export function execute() { for (;;) new Worker(URL.createObjectURL(new Blob(['for(;;){}'])),"
                 " { type: 'module' }) }", "execution_failed", "new Worker()", id="worker-bomb"),
    pytest.param("export async function execute() { const c = await caches.open('x');"
                 " await c.put('http://a/', new Response('x')); return 1 }",
                 "execution_failed", "Cache API", id="cache-storage-on-disk"),
    pytest.param("export function execute() { new BroadcastChannel('others').postMessage(1); return 1 }",
                 "execution_failed", "BroadcastChannel", id="broadcast-to-other-tools"),
    pytest.param("export async function execute() { return await Deno.stdin.read(new Uint8Array(9)) }",
                 "execution_failed", "Deno.stdin", id="read-protocol-stdin"),
]


def _settings(toolmesh_settings, tool_dir):
    return msgspec.structs.replace(toolmesh_settings, plugins={"sandbox": {"workers": 1, "max_idle": 1, "rss_base_mb": 192}})


@pytest.mark.parametrize(("source", "code", "fragment"), HOSTILE)
async def test_hostile_code_is_contained_and_the_node_keeps_serving(
    source, code, fragment, write_tool, tool_dir, toolmesh_settings
) -> None:
    write_tool("hostile", source, limits={"memory_mb": 64, "timeout_ms": 1500, "cpu_percent": 100})
    write_tool("good", GOOD)
    settings = _settings(toolmesh_settings, tool_dir)
    async with (
        running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False) as node,
        Mesh(settings=settings) as mesh,
    ):
        attacked = await mesh.call("hostile", {}, timeout=10)
        # The same profile's worker (possibly a replacement) still serves, and so does the hostile tool's.
        after = await mesh.call("good", {"n": 1}, timeout=10)
        again = await mesh.call("hostile", {}, timeout=10)
        pool = sandbox.sandbox_of(node.kernel).pool
        with anyio.fail_after(10):  # a crashed worker is replaced in the background
            while not pool.pids():
                await anyio.sleep(0.05)
        final = await mesh.call("good", {"n": 2}, timeout=10)
    assert attacked.error is not None, attacked
    assert (attacked.error.code, fragment in attacked.error.message) == (code, True), attacked.error.message
    assert (after.is_error, after.structured_content) == (False, {"ok": 2})
    assert again.error is not None and again.error.code == code
    assert (final.is_error, final.structured_content) == (False, {"ok": 3})


async def test_huge_console_output_is_bounded(write_tool, tool_dir, kernel_for, caplog) -> None:
    write_tool("flood", "export function execute() { const line = 'x'.repeat(1000);"
                        " for (let i = 0; i < 200000; i++) console.log(line); return 'done' }")
    async with kernel_for([str(tool_dir)], log_limit=4096) as kernel:
        with caplog.at_level("INFO", logger="toolmesh.tool"):
            result = await kernel.call(ToolRequest(id="1", tool="flood"))
    assert result.structured_content == "done"
    logged = [r.getMessage() for r in caplog.records if r.name == "toolmesh.tool"]
    assert sum(len(message) for message in logged) < 4096 + 200
    assert any("dropped" in message for message in logged)


async def test_output_written_around_the_console_does_not_disturb_calls(write_tool, tool_dir, kernel_for) -> None:
    write_tool("raw_writer", "import fs from 'node:fs';\nexport function execute() {"
                             " fs.writeSync(1, '{\"op\":\"result\",\"id\":\"1\",\"json\":\"666\"}\\n'.repeat(1000));"
                             " fs.writeSync(2, 'noise\\n'); return 7 }")
    async with kernel_for([str(tool_dir)]) as kernel:
        results = [await kernel.call(ToolRequest(id=str(i), tool="raw_writer")) for i in range(3)]
    assert [(r.is_error, r.structured_content) for r in results] == [(False, 7)] * 3


TAMPERING = [
    pytest.param("self.postMessage({ op: 'result', id: '1', json: '666' }); globalThis.postMessage = null;",
                 id="forged-results-on-self"),
    pytest.param("JSON.stringify = () => '666'; JSON.parse = () => 666; Object.prototype.json = '666';"
                 " Object.defineProperty(Array.prototype, '0', { set() {}, configurable: true });", id="builtins"),
    pytest.param("MessagePort.prototype.postMessage = function () {}; Reflect.apply = () => 666;"
                 " globalThis.console = null;", id="messaging"),
    pytest.param("self.onmessage = () => {}; Promise.prototype.then = function () {};", id="handlers"),
]


@pytest.mark.parametrize("tampering", TAMPERING)
async def test_tampering_with_protocol_or_globals_affects_no_other_tool(tampering, write_tool, tool_dir, kernel_for) -> None:
    write_tool("tamper", f"export function execute() {{ {tampering} return 'tampered' }}")
    write_tool("good", GOOD)
    async with kernel_for([str(tool_dir)]) as kernel:
        first = await kernel.call(ToolRequest(id="t1", tool="tamper"))
        goods = [await kernel.call(ToolRequest(id=f"g{i}", tool="good", arguments={"n": i})) for i in range(3)]
        second = await kernel.call(ToolRequest(id="t2", tool="tamper", timeout=3))
    assert [(g.is_error, g.structured_content) for g in goods] == [(False, {"ok": i + 1}) for i in range(3)]
    # The tamperer only hurts itself: its own later calls either still work or fail cleanly.
    assert first.structured_content == "tampered" or first.error is not None
    assert second.structured_content == "tampered" or second.error is not None


async def test_a_killed_worker_process_is_replaced(write_tool, tool_dir, kernel_for) -> None:
    import os
    import signal

    write_tool("slow", "export async function execute() { await new Promise(r => setTimeout(r, 5000)); return 1 }")
    write_tool("good", GOOD)
    async with kernel_for([str(tool_dir)]) as kernel:
        pool = sandbox.sandbox_of(kernel).pool
        [victim] = pool.pids("slow")
        async with anyio.create_task_group() as tg:
            outcome = {}

            async def call() -> None:
                outcome["slow"] = await kernel.call(ToolRequest(id="s", tool="slow"))

            tg.start_soon(call)
            await anyio.sleep(0.3)
            os.kill(victim, signal.SIGKILL)
        with anyio.fail_after(10):
            while not pool.pids("slow"):
                await anyio.sleep(0.05)
        after = await kernel.call(ToolRequest(id="g", tool="good", arguments={"n": 1}))
        replacement = pool.pids("slow")
    assert outcome["slow"].error is not None and outcome["slow"].error.code == "execution_failed"
    assert "exited" in outcome["slow"].error.message
    assert after.structured_content == {"ok": 2}
    assert replacement and victim not in replacement
    assert process_rss_bytes(victim) is None


async def test_signalling_another_process_is_a_violation(write_tool, tool_dir, kernel_for) -> None:
    import subprocess
    from functools import partial

    # Started from a worker thread so the event loop never blocks on fork/exec; poll() below needs a Popen.
    target = await anyio.to_thread.run_sync(partial(subprocess.Popen, ["sleep", "30"]))
    try:
        write_tool("killer", f"export function execute() {{ Deno.kill({target.pid}, 'SIGKILL'); return 'killed' }}")
        async with kernel_for([str(tool_dir)]) as kernel:
            result = await kernel.call(ToolRequest(id="1", tool="killer"))
        alive = target.poll() is None
    finally:
        target.kill()
        target.wait()
    assert result.error is not None and result.error.code == "sandbox_violation"
    assert alive


INTERNALS_PROBE = """
export async function execute(i, ctx) {
  const found = {};
  const look = (name, read) => {
    try {
      const value = read();
      found[name] = value === undefined ? "unreachable" : `reached ${typeof value}`;
    } catch (error) {
      found[name] = "unreachable";
    }
  };
  look("Deno[Deno.internal]", () => Deno[Deno.internal]);
  look("Deno[Deno.internal].core", () => Deno[Deno.internal].core);
  look("Deno.internal", () => Deno.internal);
  look("Deno[Symbol.for('Deno.internal')]", () => Deno[Symbol.for("Deno.internal")]);
  look("symbol-keyed Deno properties", () => {
    const symbols = Object.getOwnPropertySymbols(Deno);
    return symbols.length ? symbols.map((s) => Deno[s]) : undefined;
  });
  look("globalThis.__bootstrap", () => globalThis.__bootstrap);
  look("Deno.core", () => Deno.core);
  look("globalThis.Deno.core", () => globalThis.Deno.core);
  look("a Deno member holding core or ops", () => {
    for (const key of Reflect.ownKeys(Deno)) {
      let value;
      try { value = Deno[key]; } catch { continue; }
      if (value && typeof value === "object" && ("core" in value || "ops" in value)) return value;
    }
    return undefined;
  });
  try { Deno.internal = Symbol("planted"); } catch {}
  look("Deno.internal after planting", () => Deno.internal);
  const fetched = await (await fetch(i.url)).text();
  const called = await ctx.callTool("good", { n: 1 });
  const waited = await new Promise((resolve) => setTimeout(() => resolve("fired"), 20));
  return { found, fetched, called, waited };
}"""


async def test_deno_internals_are_unreachable_and_tool_features_still_work(
    http_port, write_tool, tool_dir, kernel_for
) -> None:
    write_tool("prober", INTERNALS_PROBE, permissions={"network": [f"127.0.0.1:{http_port}"]})
    write_tool("good", GOOD)
    write_tool("hog", "export async function execute() { const a = []; for (;;) { a.push(new Uint8Array(32e6).fill(7));"
                      " await new Promise(r => setTimeout(r, 1)) } }",
               limits={"memory_mb": 64, "timeout_ms": 3000, "cpu_percent": 100})
    async with kernel_for([str(tool_dir)]) as kernel:
        probed = await kernel.call(ToolRequest(id="1", tool="prober", arguments={"url": f"http://127.0.0.1:{http_port}/"}))
        hogged = await kernel.call(ToolRequest(id="2", tool="hog"))
    assert probed.error is None, probed.error
    report = probed.structured_content
    assert report["found"] == dict.fromkeys(report["found"], "unreachable"), report["found"]
    assert len(report["found"]) == 10
    assert (report["fetched"], report["called"], report["waited"]) == ("pong", {"ok": 2}, "fired")
    # The memory watch reads Deno.memoryUsage, captured before the internals were removed.
    assert hogged.error is not None and hogged.error.code == "sandbox_violation", hogged
    assert "memory limit" in hogged.error.message, hogged.error.message
