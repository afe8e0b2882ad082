"""Async functions run on anyio and may await host coroutines."""

import anyio
import anyio.lowlevel
import pytest
from toolmesh.plugins.rune.lang import RuneRuntimeError, compile_source


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_call_async_awaits_host_coroutine() -> None:
    calls = []

    async def fetch(q: str) -> str:
        await anyio.lowlevel.checkpoint()
        calls.append(q)
        return q.upper()

    src = (
        "async fn tool(q) { let a = host::fetch(q).await; let b = helper(a).await; `${b}!` }\n"
        "async fn helper(x) { x + x }"
    )
    unit = compile_source(src, "a.rn", modules={"host": {"fetch": fetch}})
    assert await unit.call_async("tool", "hi") == "HIHI!"
    assert calls == ["hi"]


@pytest.mark.anyio
async def test_sync_function_via_call_async() -> None:
    unit = compile_source("fn add(a, b) { a + b }")
    assert await unit.call_async("add", 2, 3) == 5


def test_async_fn_called_synchronously_resolves() -> None:
    unit = compile_source("async fn f() { 1 } async fn main() { f().await + 1 }")
    assert unit.call("main") == 2


def test_host_coroutine_needs_call_async() -> None:
    async def co() -> int:
        return 1

    unit = compile_source("fn main() { host::co().await }", modules={"host": {"co": co}})
    with pytest.raises(RuneRuntimeError, match="call_async"):
        unit.call("main")


@pytest.mark.anyio
async def test_concurrent_runs_keep_separate_output_and_budget() -> None:
    import io

    unit = compile_source(
        'async fn tool(tag, n) { for i in 0..n { print!("{}", tag); host::pause().await; } n }',
        modules={"host": {"pause": lambda: anyio.lowlevel.checkpoint()}},
    )
    outs = {"a": io.StringIO(), "b": io.StringIO()}
    results = {}

    async def one(tag: str, n: int) -> None:
        results[tag] = await unit.call_async("tool", tag, n, stdout=outs[tag], budget=1_000)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "a", 20)
        tg.start_soon(one, "b", 30)
    assert results == {"a": 20, "b": 30}
    assert outs["a"].getvalue() == "a" * 20 and outs["b"].getvalue() == "b" * 30
