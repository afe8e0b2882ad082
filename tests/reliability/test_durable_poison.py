"""Poison messages in the durable stream: removed at once with one log line each, never redelivered in a loop.

Garbage is published straight into the work-queue stream of a real nats-server
(as a broken client or a compromised publisher would), more of it than one
tool's pending-ack cap; valid durable calls must still run, and nothing may
stay pending.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from pathlib import Path

import anyio
import nats.errors
import pytest
from toolmesh._transport.durable import MAX_ACK_PENDING, DurableWorker
from toolmesh._transport.durable_storage import consumer_name
from toolmesh._transport.mesh import Mesh
from toolmesh.contracts import ErrorCode, ToolResult, decode_result
from toolmesh.testing import running_node, test_settings

pytestmark = pytest.mark.anyio

TOOLS = str(Path(__file__).with_name("recording_tools.py"))
MAX_PAYLOAD = 64 * 1024
_SEQUENCE = re.compile(r"durable message #(\d+) on ")


def _python() -> list[object]:
    from toolmesh.plugins import python

    return [python]


def _poison() -> list[tuple[bytes, dict[str, str]]]:
    """Bodies and headers no node can serve, each with a Nats-Msg-Id of its own unless the case is its absence."""
    deep = b'{"id":"p-deep","arguments":{"x":' + b"[" * 3000 + b"]" * 3000 + b"}}"
    cases: list[tuple[bytes, dict[str, str]]] = [
        (b"\xff\xfe not json at all", {}),
        (b"[]", {}),
        (b'"a string"', {}),
        (b'{"id": 5, "tool": true}', {}),
        (b'{"id": "p-args", "arguments": [1, 2]}', {}),
        (b'{"id": "p-big", "arguments": {"x": "' + b"x" * (MAX_PAYLOAD + 10) + b'"}}', {}),
        (deep, {}),
        (b'{"id": "p-nul", "tool": "pause\\u0000"}', {}),
        (b'{"id": "p-other", "tool": "record"}', {}),
        (b'{"id": "p-forged", "arguments": {"seconds": 0}}', {"Toolmesh-Identity": "alice"}),
        (b'{"id": "p-body-id", "arguments": {"seconds": 0}}', {}),  # its Nats-Msg-Id is not its id
        (b"no id header", {"Nats-Msg-Id": ""}),
        (b"taken id", {"Nats-Msg-Id": "victim-1"}),
    ]
    return cases + [(b"\x00garbage %d" % i, {}) for i in range(MAX_ACK_PENDING + 80)]


async def _wait_until_drained(js, settings, tool: str, timeout: float = 60) -> tuple[int, int, int]:
    deadline = time.monotonic() + timeout
    while True:
        info = await js.consumer_info(settings.subjects.durable_stream, consumer_name(tool))
        stream = await js.stream_info(settings.subjects.durable_stream)
        state = (stream.state.messages, info.num_pending, info.num_ack_pending)
        if state == (0, 0, 0) or time.monotonic() > deadline:
            return state
        await anyio.sleep(0.1)


async def test_garbage_in_the_durable_stream_is_removed_once_and_valid_calls_still_run(toolmesh_broker, caplog):
    """1,100+ undecodable, oversized, wrong-type and mislabelled messages: each answered, logged once, terminated;
    durable calls published after them run; the stream and the consumer are empty; no traceback."""
    caplog.set_level(logging.WARNING)
    settings = test_settings(toolmesh_broker.url, durable_ack_wait=1, max_payload=MAX_PAYLOAD)
    async with (
        running_node(settings, sources=[TOOLS], load_entrypoints=False, plugins=_python()),
        Mesh(settings=settings) as mesh,
    ):
        assert not (await mesh.call("pause", {"seconds": 0}, durable=True)).is_error  # stream and consumer
        js = mesh.nc.jetstream()
        replies: list[bytes] = []

        async def collect(msg) -> None:
            replies.append(msg.data)

        inbox = mesh.nc.new_inbox()
        await mesh.nc.subscribe(inbox, cb=collect)
        subject = settings.subjects.durable("pause")
        poison = _poison()
        for i, (body, headers) in enumerate(poison):
            headers = {"Nats-Msg-Id": f"poison-{i}", "Toolmesh-Reply": inbox, **headers}
            headers = {name: value for name, value in headers.items() if value}
            await js.publish(subject, body, headers=headers)
        valid = []
        async with anyio.create_task_group() as tg:
            async def call(i: int) -> None:
                valid.append(await mesh.call("pause", {"seconds": 0}, durable=True, id=f"ok-{i}", timeout=30))

            for i in range(5):
                tg.start_soon(call, i)
        drained = await _wait_until_drained(js, settings, "pause")
        await anyio.sleep(settings.durable_ack_wait * 2)  # a message left un-acked would come back by now
        after = await _wait_until_drained(js, settings, "pause", timeout=0)
        victim = await mesh.call("pause", {"seconds": 0}, durable=True, id="victim-1", timeout=2)
        await mesh.nc.flush()
    assert [result.error for result in valid] == [None] * 5
    assert drained == (0, 0, 0) and after == (0, 0, 0), (drained, after)
    assert len(replies) == len(poison)  # each caller heard why at once
    codes = Counter(decode_result(reply).error.code for reply in replies)
    assert set(codes) <= {ErrorCode.BAD_REQUEST, ErrorCode.TOO_LARGE, ErrorCode.REJECTED, ErrorCode.INTERNAL}, codes
    lines = [record for record in caplog.records if record.name.startswith("toolmesh")]
    assert all(record.exc_info is None for record in lines), [r.getMessage() for r in lines if r.exc_info][:3]
    removed = Counter(int(match.group(1)) for record in lines if (match := _SEQUENCE.search(record.getMessage())))
    assert len(removed) == len(poison) and max(removed.values()) == 1, removed.most_common(3)
    assert len(lines) <= len(poison) + 5, [record.getMessage() for record in lines[-5:]]
    # The id the garbage used stays taken: its caller is told so, not that the call "stays queued".
    assert victim.error.code == ErrorCode.BAD_REQUEST and "use a fresh id" in victim.error.message, victim


async def test_a_handler_fault_removes_the_message_and_broker_trouble_keeps_it(toolmesh_broker, caplog, monkeypatch):
    """An exception while serving a durable delivery: a fault of its own removes it (the caller hears `internal`
    at once, one log line, no redelivery); a broker timeout keeps it, and the call runs on its redelivery."""
    caplog.set_level(logging.WARNING)
    begin, finish = DurableWorker.begin, DurableWorker.finish
    failures = {"fault-1": ValueError("cannot serve this one"), "flaky-1": nats.errors.TimeoutError()}
    late_failures = {"fault-2": KeyError("fails after the tool ran")}

    async def failing_begin(self: DurableWorker, msg, request) -> ToolResult | None:
        fault = failures.pop(request.id, None)
        if fault is not None:
            raise fault
        return await begin(self, msg, request)

    async def failing_finish(self: DurableWorker, msg, result: ToolResult) -> None:
        fault = late_failures.pop(result.id, None)
        if fault is not None:
            raise fault
        await finish(self, msg, result)

    monkeypatch.setattr(DurableWorker, "begin", failing_begin)
    monkeypatch.setattr(DurableWorker, "finish", failing_finish)
    settings = test_settings(toolmesh_broker.url, durable_ack_wait=1)
    async with (
        running_node(settings, sources=[TOOLS], load_entrypoints=False, plugins=_python()),
        Mesh(settings=settings) as mesh,
    ):
        fault = await mesh.call("pause", {"seconds": 0}, durable=True, id="fault-1", timeout=20)
        late = await mesh.call("pause", {"seconds": 0}, durable=True, id="fault-2", timeout=20)
        flaky = await mesh.call("pause", {"seconds": 0.1}, durable=True, id="flaky-1", timeout=20)
        await anyio.sleep(settings.durable_ack_wait * 2)
        retry = await mesh.call("pause", {"seconds": 0}, durable=True, id="fault-1", timeout=2)
        late_retry = await mesh.call("pause", {"seconds": 0}, durable=True, id="fault-2", timeout=2)
        state = await _wait_until_drained(mesh.nc.jetstream(), settings, "pause", timeout=0)
    assert fault.error.code == ErrorCode.INTERNAL and "fresh id" in fault.error.message, fault  # not a timeout
    assert flaky.structured_content == 0.1, flaky  # kept, redelivered, run
    assert late.error.code == ErrorCode.INTERNAL, late
    # The removal is remembered under the id, also over the call's own attempt marker: a retry is
    # told the call will not run, not that it is "running (attempt 1)".
    assert retry.error == fault.error and late_retry.error == late.error, (retry, late_retry)
    assert state == (0, 0, 0)
    messages = [record.getMessage() for record in caplog.records if record.name.startswith("toolmesh")]
    assert sum("cannot serve this one" in message for message in messages) == 1, messages
    assert sum("fails after the tool ran" in message for message in messages) == 1, messages
    assert sum("stays queued after a broker error" in message for message in messages) == 1, messages
    assert all(record.exc_info is None for record in caplog.records if record.name.startswith("toolmesh"))
