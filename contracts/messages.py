"""The messages of a tool call: ``ToolRequest`` in, ``ToolResult`` out, ``ToolEvent`` aside.

These names are the public protocol: a client in any language publishes a
``ToolRequest`` as JSON on ``tool.request.<token>`` and reads a ``ToolResult``
from the reply.  Fields are only ever added, with defaults.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .content import ContentBlock, TextContent
from .errors import ErrorCode

__all__ = ["Caller", "CancelRequest", "ToolCallback", "ToolError", "ToolEvent", "ToolRequest", "ToolResult"]


class Caller(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """Who is calling: an identity plus the agent/crew context, all optional."""

    identity: str | None = None
    agent: str | None = None
    crew: str | None = None
    task: str | None = None


class ToolRequest(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """One call of one tool.

    ``id`` is the idempotency key.  A client publishing on the tool's own
    subject may leave ``tool`` (taken from the subject) and ``id`` (the node
    makes one up) empty.  ``timeout`` is in seconds from receipt;
    ``deadline`` an absolute UNIX time; the node honours the earlier of the two
    and the tool's own timeout.  ``cache`` ``False`` bypasses the cache.
    """

    id: str = ""
    tool: str = ""
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    caller: Caller | None = None
    timeout: float | None = None
    deadline: float | None = None
    cache: bool | None = None
    meta: dict[str, Any] | None = None
    callback: str | None = None
    """Subject where the tool may send ``ToolCallback`` messages to the caller while it runs."""
    durable: bool | None = None
    """``True`` asks for the durable path: the request is kept in a JetStream work queue
    until a node has stored its result, and a repeat with the same ``id`` returns that result."""
    chain: tuple[str, ...] = ()
    """The tools whose running calls led to this one, outermost first (empty for a caller's own
    call).  Nodes build it for nested calls and refuse a call whose chain reaches ``max_call_depth``."""


class ToolError(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """Why a call failed: a stable ``code`` and a message a person can act on."""

    code: ErrorCode
    message: str
    details: dict[str, Any] | None = None
    retryable: bool = False
    suggestions: tuple[str, ...] = ()


class ToolResult(msgspec.Struct, kw_only=True, frozen=True):
    """The outcome of a call; every field is always present on the wire.

    ``content`` holds MCP content blocks, ``structured_content`` the JSON value
    (checked against ``output_schema``); on failure ``is_error`` is true and
    ``error`` says why.  ``node`` names the node that answered.
    """

    id: str
    tool: str
    is_error: bool = False
    content: list[ContentBlock] = msgspec.field(default_factory=list)
    structured_content: Any = None
    error: ToolError | None = None
    node: str | None = None
    cached: bool = False
    duration_ms: float | None = None
    result_as_answer: bool = False

    @property
    def text(self) -> str:
        """The text blocks of ``content`` joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))

    @classmethod
    def failure(cls, request_id: str, tool: str, error: ToolError) -> ToolResult:
        """An error result whose text content repeats the message for plain clients."""
        return cls(
            id=request_id,
            tool=tool,
            is_error=True,
            content=[TextContent(text=f"{error.code.value}: {error.message}")],
            error=error,
        )


class ToolEvent(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """A lifecycle event published on ``tool.event.<kind>.<token>``.

    ``kind`` is e.g. ``started``, ``finished``, ``failed``, ``cache_hit``,
    ``rejected``, ``progress``; ``attributes`` carries kind-specific details.
    """

    kind: str
    tool: str
    request_id: str | None = None
    node: str | None = None
    timestamp: float = 0.0
    duration_ms: float | None = None
    error_code: ErrorCode | None = None
    attributes: dict[str, Any] | None = None


class ToolCallback(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """A message from a running tool to its caller, on the request's ``callback`` subject.

    ``progress`` and ``log`` are notifications; ``sampling`` and ``elicitation``
    are requests whose reply (JSON) is the caller's answer — they let a tool ask
    the caller's model or a person, as MCP does.
    """

    kind: str
    request_id: str
    data: dict[str, Any] = msgspec.field(default_factory=dict)


class CancelRequest(msgspec.Struct, kw_only=True, frozen=True):
    """Published on ``<prefix>.cancel`` when a caller gives up: the node serving ``id`` cancels it.

    Only the call's caller may cancel it: a call made with a signed identity takes a
    cancel signed for the same identity; an anonymous call one whose ``inbox`` is the
    caller's connection inbox, under which the call's reply subject lies.
    """

    id: str
    inbox: str | None = None
    """The caller's connection inbox (``<prefix>.result.<client>.<connection>``): proof of
    an anonymous caller that it sent the call."""
