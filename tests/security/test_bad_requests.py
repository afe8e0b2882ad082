"""Malformed requests get ``bad_request`` at once; the node keeps serving and logs no traceback.

Each body is published raw on a real node's request subject (real nats-server),
as any NATS client could: tool names that are not tool names, JSON nested far
beyond anything a tool needs (down to ten thousand levels, past Python's
recursion limit), and the ``toolmesh call`` command fed the same input.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.to_thread
import msgspec
import pytest
import toolmesh
import toolmesh.plugins.python as python_plugin
from toolmesh import Mesh, Settings
from toolmesh.contracts import ToolResult, decode_result
from toolmesh.testing import running_node

from tests.processes import toolmesh as run_toolmesh

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_blocking_calls")]  # nothing blocks the loop

DEPTH = 64
"""The default ``max_argument_depth``."""


@toolmesh.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@toolmesh.tool
def echo(value: Any) -> Any:
    """Return the value unchanged."""
    return value


def _nested(levels: int, opener: str = "[", closer: str = "]", inner: str = "1") -> str:
    return opener * levels + inner + closer * levels


def _body(arguments: str, **fields: str) -> bytes:
    extra = "".join(f', "{key}": {value}' for key, value in fields.items())
    return f'{{"id": "r1", "arguments": {arguments}{extra}}}'.encode()


BAD_NAMES = [
    pytest.param(b'{"id": "r1", "tool": "add\\u0000", "arguments": {"a": 1, "b": 2}}', "'add\\x00'", id="nul"),
    pytest.param(b'{"id": "r1", "tool": "add\\n", "arguments": {}}', "'add\\n'", id="newline"),
    pytest.param(b'{"id": "r1", "tool": "a b", "arguments": {}}', "'a b'", id="space"),
    pytest.param(b'{"id": "r1", "tool": "add>", "arguments": {}}', "'add>'", id="wildcard"),
    pytest.param(b'{"id": "r1", "tool": "\xc3\xa4dd", "arguments": {}}', "'\u00e4dd'", id="non-ascii"),
    pytest.param(('{"id": "r1", "tool": "' + "x" * 5000 + '", "arguments": {}}').encode(), "(5000 characters)",
                 id="too-long"),
    pytest.param(b'{"id": "r1", "arguments": {"a": 1, "b": 2}, "chain": ["ok", "add\\u0000"]}', "'add\\x00'",
                 id="nul-in-chain"),
    pytest.param(b'{"id": "r1", "arguments": {"a": 1, "b": 2}, "chain": [""]}', "''", id="empty-in-chain"),
]

TOO_DEEP = [
    pytest.param(_body('{"a": ' + _nested(10_000) + ', "b": 1}'), id="arrays-10000"),
    pytest.param(_body('{"a": ' + _nested(1_000) + ', "b": 1}'), id="arrays-1000"),
    pytest.param(_body('{"a": ' + _nested(900, '{"k": ', "}") + ', "b": 1}'), id="objects-900"),
    pytest.param(_body('{"a": ' + _nested(DEPTH) + ', "b": 1}'), id="just-over-the-limit"),
    pytest.param(_body('{"a": 1, "b": 2}', meta='{"m": ' + _nested(500) + "}"), id="in-meta"),
]


async def _request(mesh: Mesh, tool: str, body: bytes) -> ToolResult:
    assert mesh.nc is not None
    reply = await mesh.nc.request(mesh.subjects.request(tool), body, timeout=10)
    return decode_result(reply.data)


def _tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.exc_info or record.levelno >= logging.ERROR]


def _serve(settings: Settings) -> Any:
    return running_node(settings, sources=[add, echo], plugins=[python_plugin], load_entrypoints=False)


@pytest.mark.parametrize(("body", "shown"), BAD_NAMES)
async def test_an_invalid_tool_name_in_the_body_is_a_bad_request(
    body: bytes, shown: str, toolmesh_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    async with _serve(toolmesh_settings), Mesh(settings=toolmesh_settings) as mesh:
        refused = await _request(mesh, "add", body)
        assert refused.error is not None and refused.error.code == "bad_request", refused
        assert "not a valid tool name" in refused.error.message or "not a tool name" in refused.error.message
        assert shown in refused.error.message
        assert len(refused.error.message) < 600
        assert (await mesh.call("add", {"a": 1, "b": 2})).structured_content == 3
    assert _tracebacks(caplog) == []


@pytest.mark.parametrize("body", TOO_DEEP)
async def test_deeply_nested_json_is_a_bad_request(
    body: bytes, toolmesh_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    async with _serve(toolmesh_settings), Mesh(settings=toolmesh_settings) as mesh:
        refused = await _request(mesh, "add", body)
        assert refused.error is not None and refused.error.code == "bad_request", refused
        assert f"more than {DEPTH} levels deep" in refused.error.message
        assert "max_argument_depth" in refused.error.message
        assert (await mesh.call("add", {"a": 1, "b": 2})).structured_content == 3
    assert _tracebacks(caplog) == []


async def test_nesting_up_to_the_limit_is_served(toolmesh_settings: Settings) -> None:
    """The arguments object is level one: a value nested to the limit arrives whole, brackets in strings do not count."""
    deepest = _nested(DEPTH - 1, inner='"]]]]{{{{[[[["')
    async with _serve(toolmesh_settings), Mesh(settings=toolmesh_settings) as mesh:
        echoed = await _request(mesh, "echo", _body('{"value": ' + deepest + "}"))
        assert echoed.error is None, echoed.error
        value = echoed.structured_content
        for _ in range(DEPTH - 1):
            value = value[0]
        assert value == "]]]]{{{{[[[["


async def test_a_lower_limit_is_a_setting(toolmesh_settings: Settings) -> None:
    settings = msgspec.structs.replace(toolmesh_settings, max_argument_depth=3)
    async with _serve(settings), Mesh(settings=settings) as mesh:
        assert (await mesh.call("echo", {"value": [[1]]})).structured_content == [[1]]
        refused = await mesh.call("echo", {"value": [[[1]]]})
        assert refused.error is not None and refused.error.code == "bad_request"
        assert "more than 3 levels deep" in refused.error.message


async def test_toolmesh_call_refuses_such_input_cleanly(toolmesh_settings: Settings) -> None:
    """The command line neither crashes on deep JSON nor sends a bad name; the node refuses deep arguments."""
    connection = ["--nats", toolmesh_settings.connect_url, "--prefix", toolmesh_settings.prefix]

    def call(*args: str) -> Any:
        return run_toolmesh("call", *args, *connection)

    async with _serve(toolmesh_settings):
        too_deep_to_parse = await anyio.to_thread.run_sync(call, "add", '{"a": ' + _nested(10_000) + ', "b": 1}')
        too_deep_to_send = await anyio.to_thread.run_sync(call, "echo", '{"value": ' + _nested(200) + "}")
        bad_name = await anyio.to_thread.run_sync(call, "add\x01", '{"a": 1, "b": 2}')
        deep_assignment = await anyio.to_thread.run_sync(call, "add", "-a", "a=" + _nested(10_000), "-a", "b=1")
    for parsed in (too_deep_to_parse, deep_assignment):
        assert parsed.returncode == 2 and "Traceback" not in parsed.stderr  # a usage error
        assert "too deeply" in parsed.stderr
    assert too_deep_to_send.returncode == 1 and "bad_request" in too_deep_to_send.stderr
    assert f"more than {DEPTH} levels deep" in too_deep_to_send.stderr
    assert bad_name.returncode == 1 and "Traceback" not in bad_name.stderr
    assert "invalid tool name" in bad_name.stderr
