"""The results bucket of durable calls: what it holds under a request id, and whom an entry may answer.

Request ids are not secrets: they travel in events, callbacks and logs. So an
entry never answers "whoever knows the id". Each names the call it belongs to,
a :class:`CallBinding` (the tool, a SHA-256 digest of the arguments and the
caller's verified identity, ``None`` for an anonymous caller), and a stored
result answers only a call with the same binding. Anything else (another
tool, other arguments, another caller, an entry toolmesh cannot attribute) is
refused with ``bad_request``: the id is taken, use a fresh one.

The value under ``result_key(id)`` is a JSON :class:`StoredEntry`: while the
call runs it counts the started attempts, afterwards it holds the result. An
entry with a result and no binding is a *tombstone*: the id was used by a
durable message that was removed without running (undecodable, say), so no
retry can ever get a result for it.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from typing import Any, Final

import anyio
import msgspec
import nats.errors
from nats.js.errors import KeyNotFoundError, NotFoundError
from nats.js.kv import KeyValue
from toolmesh._errors import tool_error
from toolmesh.contracts import ErrorCode, ToolError, ToolRequest, ToolResult

__all__ = [
    "UNREADABLE",
    "CallBinding",
    "StoredEntry",
    "arguments_digest",
    "decode_entry",
    "id_taken",
    "not_finished",
    "read_entry",
    "result_key",
    "wait_for_result",
]

_KEY_PATTERN = re.compile(r"[-/_=a-zA-Z0-9]+(\.[-/_=a-zA-Z0-9]+)*")
_POLL_START, _POLL_MAX = 0.02, 0.5
_log = logging.getLogger("toolmesh.durable")


def result_key(request_id: str) -> str:
    """The key-value key of a request id: the id itself when it is a valid key, else its SHA-256."""
    if len(request_id) <= 200 and _KEY_PATTERN.fullmatch(request_id):
        return request_id
    return "sha256=" + hashlib.sha256(request_id.encode()).hexdigest()


def arguments_digest(arguments: dict[str, Any]) -> str:
    """``sha256=<hex>`` of the arguments as canonical JSON (keys sorted), so equal arguments match."""
    return "sha256=" + hashlib.sha256(msgspec.json.encode(arguments, order="sorted")).hexdigest()


class CallBinding(msgspec.Struct, frozen=True, kw_only=True):
    """The call a stored entry belongs to: tool, argument digest and verified caller identity."""

    tool: str
    arguments: str
    identity: str | None = None

    @classmethod
    def of(cls, request: ToolRequest, identity: str | None) -> CallBinding:
        """The binding of ``request`` made by ``identity`` (the verified one; ``None`` = anonymous)."""
        return cls(tool=request.tool, arguments=arguments_digest(request.arguments), identity=identity)


class StoredEntry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """The value under a request id: the started attempts while it runs, then its result."""

    call: CallBinding | None = None
    """``None`` on a tombstone (and on the attempt markers of versions before bindings)."""
    result: ToolResult | None = None
    attempts: int = 0

    def belongs_to(self, binding: CallBinding) -> bool:
        """True when this entry may answer the call ``binding`` (an unbound marker may: it has no result)."""
        if self.attempts < 0:  # UNREADABLE
            return False
        if self.call is None:
            return self.result is None
        return self.call == binding


UNREADABLE: Final = StoredEntry(attempts=-1)
"""What :func:`read_entry` returns for a value that is not a ``StoredEntry`` (overwritten, or an old format)."""

_entry_decoder = msgspec.json.Decoder(StoredEntry)


def decode_entry(data: bytes) -> StoredEntry:
    """Decode a stored value; :data:`UNREADABLE` when it is not a ``StoredEntry``."""
    try:
        entry = _entry_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return UNREADABLE
    if entry.call is None and entry.result is None and entry.attempts <= 0:
        return UNREADABLE  # says nothing: not written by toolmesh
    return entry


async def read_entry(kv: KeyValue, request_id: str) -> StoredEntry | None:
    """The entry under ``request_id`` (``None``: nothing stored); broker trouble raises."""
    try:
        entry = await kv.get(result_key(request_id))
    except (KeyNotFoundError, NotFoundError):
        return None
    return decode_entry(entry.value) if entry.value else None


def id_taken(request_id: str, tool: str) -> ToolResult:
    """The refusal of a call whose id already belongs to another call: its stored result is never served."""
    return ToolResult.failure(
        request_id,
        tool,
        ToolError(
            code=ErrorCode.BAD_REQUEST,
            message=(
                f"request id {request_id!r} was used by another durable call (another tool, other arguments"
                " or another caller); a stored result answers only the call that made it: use a fresh id"
                " for every new call"
            ),
            details={"durable": True, "request_id": request_id},
        ),
    )


def not_finished(request: ToolRequest, wait: float, entry: StoredEntry | None, readable: bool = True) -> ToolResult:
    """The retryable answer for a call with no result yet, saying truthfully where it stands."""
    if not readable:
        where = "the results store could not be read just now"
    elif entry is not None and entry.attempts > 0:
        where = f"it is running on a node (attempt {entry.attempts})"
    else:
        where = f"no node has started it yet: it waits in the queue until a node serving {request.tool!r} takes it"
    return ToolResult.failure(
        request.id,
        request.tool,
        tool_error(
            ErrorCode.TIMEOUT,
            f"no result for durable call {request.id!r} of {request.tool!r} within {wait:g}s; {where}:"
            " call again with the same id to get its result",
            details={"durable": True, "request_id": request.id},
        ),
    )


async def _read_within(kv: KeyValue, request_id: str, limit: float) -> tuple[bool, StoredEntry | None]:
    """``(True, entry)`` if the bucket answers within ``limit`` s, else ``(False, None)``.

    For callers waiting for an answer only: a bucket that cannot be read right now
    (a stream-leader election, a reconnect) reads as "no result yet", so the caller
    gets a retryable answer by its deadline instead of an exception.  A node deciding
    whether to run a call must not read it that way (it uses :func:`read_entry`).
    """
    with anyio.move_on_after(limit):
        try:
            return True, await read_entry(kv, request_id)
        except nats.errors.Error as exc:  # unreadable for now: the caller asks again with the same id
            _log.debug("results bucket not readable for %s: %r", request_id, exc)
    return False, None


def _answer(request: ToolRequest, binding: CallBinding, entry: StoredEntry | None) -> ToolResult | None:
    """What ``entry`` answers ``request``: its result, a refusal, or ``None`` while there is no result."""
    if entry is None:
        return None
    if not entry.belongs_to(binding):
        return id_taken(request.id, request.tool)
    return entry.result


async def wait_for_result(
    kv: KeyValue,
    request: ToolRequest,
    binding: CallBinding,
    wait: float,
    *,
    look: float = _POLL_START,
    waited: float | None = None,
) -> ToolResult:
    """Poll until ``request`` has a result bound to ``binding`` or ``wait`` s passed.

    Returns the stored result, :func:`id_taken` as soon as the id turns out to
    belong to another call, or :func:`not_finished` at the deadline (naming
    ``waited`` s, default ``wait``); each read of the bucket may take ``look`` s.
    """
    deadline = time.monotonic() + wait
    pause = _POLL_START
    while True:
        readable, entry = await _read_within(kv, request.id, max(look, deadline - time.monotonic()))
        answer = _answer(request, binding, entry)
        if answer is not None:
            return answer
        if time.monotonic() >= deadline:
            return not_finished(request, wait if waited is None else waited, entry, readable)
        await anyio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, _POLL_MAX)
