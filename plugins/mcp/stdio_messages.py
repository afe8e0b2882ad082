"""Malformed JSON-RPC on the stdio transport is answered, not dropped.

The SDK's stdio reader turns a line it cannot validate into an exception the
server only logs, so a client that sends bad JSON, a non-object, a wrong
``jsonrpc`` or a request without ``method`` waits forever.  ``CheckedLines``
sits between stdin and that reader: well-formed lines pass on unchanged,
every other line gets the JSON-RPC 2.0 error it deserves (-32700 for text that
is not JSON, -32600 for JSON that is not a valid message) on the server's own
write stream, with the request's id when it can be read and ``null``
otherwise.  A malformed *response* (a message with ``result`` or ``error`` but
no ``method``) is logged and dropped: answering it would look to the client
like an error for one of its own requests.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import anyio
import mcp_types as types
import msgspec
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["CheckedLines", "malformed_message_error"]

_log = logging.getLogger("toolmesh.mcp.gateway")
_MAX_DETAIL = 200


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _readable_id(message: dict[str, Any]) -> str | int | None:
    request_id = message.get("id")
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return request_id
    return None


def _first_problem(exc: ValidationError) -> str:
    """The shortest useful account of why a JSON object is no JSON-RPC message."""
    problems = sorted(exc.errors(include_url=False, include_input=False), key=lambda error: len(error["loc"]))
    if not problems:
        return str(exc)[:_MAX_DETAIL]
    problem = problems[0]
    where = ".".join(str(part) for part in problem["loc"][1:]) or "message"
    return f"{where}: {problem['msg']}"[:_MAX_DETAIL]


def malformed_message_error(line: str) -> types.JSONRPCError | None:
    """The error answering ``line``, or ``None`` when it is one well-formed JSON-RPC message (or a response)."""
    try:
        parsed = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        as_json = exc
    else:
        if not isinstance(parsed, types.JSONRPCNotification) or '"id"' not in line:
            return None
        # A request whose id is no string or integer passes as a notification and would go unanswered.
        message = msgspec.json.decode(line)
        if "id" not in message:
            return None
        return _error(
            None,
            types.INVALID_REQUEST,
            f'Invalid request: "id" must be a string or an integer, got {message["id"]!r}'[:_MAX_DETAIL],
        )
    try:
        message = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        return _error(
            None, types.PARSE_ERROR, f"Parse error: {exc}; send one JSON-RPC message per line, as JSON"
        )
    if isinstance(message, list):
        return _error(
            None,
            types.INVALID_REQUEST,
            "Invalid request: JSON-RPC batches (arrays) are not part of MCP; send one message per line",
        )
    if not isinstance(message, dict):
        return _error(
            None,
            types.INVALID_REQUEST,
            f"Invalid request: a JSON-RPC message is a JSON object, got {type(message).__name__}",
        )
    request_id = _readable_id(message)
    if message.get("jsonrpc") != "2.0":
        return _error(
            request_id,
            types.INVALID_REQUEST,
            f'Invalid request: "jsonrpc" must be "2.0", got {message.get("jsonrpc")!r}'[:_MAX_DETAIL],
        )
    if "method" not in message:
        if "result" in message or "error" in message:
            return None  # a response: there is nobody to answer; the SDK logs and drops it
        return _error(request_id, types.INVALID_REQUEST, 'Invalid request: "method" is missing')
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        return _error(request_id, types.INVALID_REQUEST, f"Invalid request: {_first_problem(exc)}")
    return _error(request_id, types.INVALID_REQUEST, f"Invalid request: {_first_problem(as_json)}")


class CheckedLines:
    """The lines of ``source`` that are well-formed JSON-RPC; the others are answered on the attached stream."""

    def __init__(self, source: AsyncIterable[str]) -> None:
        self.source = source
        self.answered = 0
        """How many malformed messages got an error reply."""
        self._replies: Any = None
        self._attached = anyio.Event()

    def attach(self, write_stream: Any) -> None:
        """Send error replies on ``write_stream`` (the server's own, so replies never tear its frames)."""
        self._replies = write_stream
        self._attached.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.source:
            if not line.strip():
                continue  # a blank line carries no message
            error = malformed_message_error(line)
            if error is None:
                yield line
                continue
            await self._answer(error)

    async def _answer(self, error: types.JSONRPCError) -> None:
        _log.warning("malformed JSON-RPC on stdin (code %s): %s", error.error.code, error.error.message)
        await self._attached.wait()
        try:
            await self._replies.send(SessionMessage(error))
            self.answered += 1
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            _log.debug("no reply to a malformed message: the server is closing")
