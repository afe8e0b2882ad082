"""Test helpers for plugin authors: a real ``nats-server`` and running nodes, no mocks.

Installed as a pytest plugin (entry point ``pytest11``), it provides:

``toolmesh_state_dir`` (session, automatic)
    A private state directory in ``TOOLMESH_STATE_DIR`` (inherited by child
    processes), so no test reads or writes the user's own embedded-broker
    credentials and store.
``toolmesh_broker`` (session)
    An ``EmbeddedBroker`` on a free loopback port, started once per session.
``toolmesh_settings``
    ``Settings`` joined to that broker, with a subject prefix unique to the test
    and a short catalog TTL.

and the async context manager :func:`running_node` to serve tools in a test::

    async def test_add(toolmesh_settings):
        async with running_node(toolmesh_settings, sources=["examples/"]) as node:
            async with Mesh(settings=toolmesh_settings) as mesh:
                assert (await mesh.call("add", {"a": 1, "b": 2})).structured_content == 3

To wait for something that happens elsewhere (another node, a process, a
message), poll it with :func:`eventually` (or :func:`eventually_sync` outside an
event loop) instead of sleeping a fixed time::

    await eventually(lambda: node.inflight == 0, timeout=5)
"""

from __future__ import annotations

import inspect
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import anyio
import msgspec
import pytest
from toolmesh._config import Settings
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh._transport.broker_state import STATE_DIR_ENV
from toolmesh._transport.node import Node

__all__ = ["eventually", "eventually_sync", "running_node", "test_settings"]

T = TypeVar("T")


def test_settings(url: str, **overrides: Any) -> Settings:
    """Settings for a test: joined to ``url``, a unique prefix, fast heartbeats."""
    values: dict[str, Any] = {
        "nats_url": url,
        "prefix": f"t{uuid.uuid4().hex[:12]}",
        "heartbeat": 0.2,
        "catalog_ttl": 1.0,
        "default_timeout": 10.0,
    }
    values.update(overrides)
    return Settings(**values)


test_settings.__test__ = False  # type: ignore[attr-defined]  # not a test despite its name


@asynccontextmanager
async def running_node(
    settings: Settings,
    *,
    sources: Iterable[Any] = (),
    plugins: Iterable[object] = (),
    load_entrypoints: bool = True,
    name: str | None = None,
) -> AsyncIterator[Node]:
    """Serve a node for the duration of the block, then drain it."""
    if name is not None:
        settings = msgspec.structs.replace(settings, node_name=name)
    node = Node(settings=settings, sources=sources, plugins=plugins, load_entrypoints=load_entrypoints)
    async with anyio.create_task_group() as tg:
        await tg.start(node.serve)
        try:
            yield node
        finally:
            node.stop()


async def eventually(
    check: Callable[[], T | Awaitable[T]], *, timeout: float = 10.0, interval: float = 0.02, what: str = ""
) -> T:
    """Poll ``check`` (plain or async) until it returns a truthy value, and return that value.

    Fails with an ``AssertionError`` naming ``what`` (or ``check``) and its last value after ``timeout``
    seconds; a ``check`` that hangs is cancelled at the deadline.
    """
    last: object = None
    with anyio.move_on_after(timeout):
        while True:
            outcome = check()
            value: T = cast(T, await outcome) if inspect.isawaitable(outcome) else outcome
            if value:
                return value
            last = value
            await anyio.sleep(interval)
    raise AssertionError(f"{what or _described(check)} did not hold within {timeout} s (last value: {last!r})")


def eventually_sync(
    check: Callable[[], T], *, timeout: float = 10.0, interval: float = 0.02, what: str = ""
) -> T:
    """:func:`eventually` for code outside an event loop: polls ``check`` from the calling thread."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"{what or _described(check)} did not hold within {timeout} s (last value: {value!r})"
            )
        time.sleep(interval)


def _described(check: Callable[..., Any]) -> str:
    code = getattr(check, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return f"{getattr(check, '__qualname__', repr(check))}{where}"


@pytest.fixture(scope="session", autouse=True)
def toolmesh_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``TOOLMESH_STATE_DIR`` pointed at a directory of this session's own, for it and its child processes."""
    path = tmp_path_factory.mktemp("toolmesh-state")
    previous = os.environ.get(STATE_DIR_ENV)
    os.environ[STATE_DIR_ENV] = str(path)
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop(STATE_DIR_ENV, None)
        else:
            os.environ[STATE_DIR_ENV] = previous


@pytest.fixture(scope="session")
def toolmesh_broker() -> Iterator[EmbeddedBroker]:
    """A real nats-server (JetStream on) for the whole test session."""
    with EmbeddedBroker(0) as broker:
        yield broker


@pytest.fixture
def toolmesh_settings(toolmesh_broker: EmbeddedBroker) -> Settings:
    """Settings on the session broker with a prefix of this test's own."""
    return test_settings(toolmesh_broker.url)
