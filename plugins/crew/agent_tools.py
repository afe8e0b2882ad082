"""crewAI's agent tools: delegate work and ask questions over NATS, read files inside a root, add images.

Agents answer on ``<prefix>.crew.agent.<role>`` (request-reply; the role
normalized like a tool name): :func:`serve_agent` subscribes a handler there,
and the delegate / ask tools send ``{"kind", "from", "task" | "question",
"context"}`` and return the reply's ``result``.
"""

from __future__ import annotations

import base64
import json
import logging
import mimetypes
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import nats.errors
from nats.aio.client import Client as NATS
from nats.aio.subscription import Subscription
from toolmesh import CallTimeout, ToolUnavailable, nats_error
from toolmesh.contracts import ImageContent, ResourceLink, TextContent, ToolSpec

from .errors import CoworkerError, PathOutsideRoot
from .local_tools import LocalTool
from .selection import normalize_tool_name

_log = logging.getLogger("toolmesh.crew")

__all__ = [
    "ADD_IMAGE",
    "ASK_QUESTION",
    "DELEGATE_WORK",
    "READ_FILE",
    "AgentHandler",
    "add_image_tool",
    "agent_subject",
    "ask_question_tool",
    "delegate_work_tool",
    "read_file_tool",
    "serve_agent",
]

DELEGATE_WORK = "delegate_work_to_coworker"
ASK_QUESTION = "ask_question_to_coworker"
READ_FILE = "read_file"
ADD_IMAGE = "add_image_to_content"
DEFAULT_IMAGE_ACTION = (
    "Please provide a detailed description of this image, including all visual elements, context, and any"
    " notable"
    " details you can observe."
)

AgentHandler = Callable[[str, str, str, str | None], Awaitable[str] | str]
"""``handler(kind, text, context, from_role)`` → the answer; ``kind`` is ``delegate`` or ``ask``."""


def agent_subject(prefix: str, role: str) -> str:
    """The request-reply subject of the agent with ``role``."""
    token = normalize_tool_name(role)
    if not token:
        raise ValueError(f"agent role {role!r} has no letters or digits to address it by")
    return f"{prefix}.crew.agent.{token}"


async def serve_agent(nc: NATS, prefix: str, role: str, handler: AgentHandler) -> Subscription:
    """Answer delegations and questions for ``role`` until the returned subscription is unsubscribed."""

    async def on_request(msg: Any) -> None:
        try:
            request = json.loads(msg.data)
            answer = handler(
                request["kind"], request["text"], request.get("context", ""), request.get("from")
            )
            if hasattr(answer, "__await__"):
                answer = await answer
            reply = {"result": str(answer)}
        except Exception as exc:  # noqa: BLE001 - isolation boundary around the agent's handler
            _log.warning("agent %s failed to answer: %r", role, exc, exc_info=True)
            reply = {"error": f"{type(exc).__name__}: {exc}"}  # the asking agent gets it as its observation
        await msg.respond(json.dumps(reply).encode())

    return await nc.subscribe(agent_subject(prefix, role), queue="toolmesh-crew", cb=on_request)


def _coworker(raw: Any, coworkers: dict[str, str]) -> str:
    # crewAI accepts the coworker as a string, a list, or a JSON list in a string.
    if isinstance(raw, str) and raw.strip().startswith("["):
        try:
            raw = json.loads(raw)
        except ValueError:
            pass
    if isinstance(raw, list):
        raw = raw[0] if raw else ""
    role = coworkers.get(normalize_tool_name(str(raw or "").strip().strip('"')))
    if role is None:
        options = "\n".join(f"- {name}" for name in coworkers.values())
        raise CoworkerError(
            "Error executing tool. coworker mentioned not found, it must be one of the following options:\n"
            + options
        )
    return role


def _coworker_tool(
    nc: NATS,
    prefix: str,
    coworkers: Iterable[str],
    *,
    name: str,
    kind: str,
    field: str,
    intro: str,
    from_role: str | None,
    timeout: float,
) -> LocalTool:
    roles = {normalize_tool_name(role): role for role in coworkers}
    listing = ", ".join(roles.values())

    async def run(arguments: dict[str, Any]) -> str:
        role = _coworker(arguments.get("coworker"), roles)
        body = {
            "kind": kind,
            "text": str(arguments.get(field, "")),
            "context": str(arguments.get("context", "")),
            "from": from_role,
        }
        subject = agent_subject(prefix, role)
        try:
            reply = await nc.request(subject, json.dumps(body).encode(), timeout=timeout)
        except nats.errors.Error as exc:
            error = nats_error(exc, subject, f"the {kind} for coworker {role!r}")
            if not isinstance(error, (ToolUnavailable, CallTimeout)):
                raise error from exc
            raise CoworkerError(
                f"Error executing task with agent '{role}'. Error: no answer ({type(exc).__name__});"
                " the coworker is not running, try another coworker or do it yourself",
                "coworker_unavailable",
            ) from error
        answer = json.loads(reply.data)
        if "error" in answer:
            raise CoworkerError(
                f"Error executing task with agent '{role}'. Error: {answer['error']}", "coworker_failed"
            )
        return str(answer["result"])

    spec = ToolSpec(
        name=name,
        description=(
            f"{intro} one of the following coworkers: {listing}\n"
            f"The input to this tool should be the coworker, the {field} you have for them, and ALL necessary"
            " context, they know nothing about it, so share absolutely everything you know, don't reference"
            " things but instead explain them."
        ),
        source="crew",
        input_schema={
            "type": "object",
            "properties": {
                field: {"type": "string", "description": f"The {field} for the coworker"},
                "context": {"type": "string", "description": "Everything the coworker needs to know"},
                "coworker": {"type": ["string", "array"], "description": f"One of: {listing}"},
            },
            "required": [field, "context", "coworker"],
        },
    )
    return LocalTool(spec=spec, function=run)


def delegate_work_tool(
    nc: NATS, prefix: str, coworkers: Iterable[str], *, from_role: str | None = None, timeout: float = 60.0
) -> LocalTool:
    """crewAI's "Delegate work to coworker", answered by the coworker's :func:`serve_agent`."""
    return _coworker_tool(
        nc,
        prefix,
        coworkers,
        name=DELEGATE_WORK,
        kind="delegate",
        field="task",
        intro="Delegate a specific task to",
        from_role=from_role,
        timeout=timeout,
    )


def ask_question_tool(
    nc: NATS, prefix: str, coworkers: Iterable[str], *, from_role: str | None = None, timeout: float = 60.0
) -> LocalTool:
    """crewAI's "Ask question to coworker", answered by the coworker's :func:`serve_agent`."""
    return _coworker_tool(
        nc,
        prefix,
        coworkers,
        name=ASK_QUESTION,
        kind="ask",
        field="question",
        intro="Ask a specific question to",
        from_role=from_role,
        timeout=timeout,
    )


def read_file_tool(root: str | Path, *, max_bytes: int = 1_000_000) -> LocalTool:
    """Read a text file under ``root`` (lines ``start_line`` … on); paths escaping ``root`` are refused."""
    jail = Path(root).resolve()

    def read_file(arguments: dict[str, Any]) -> str:
        wanted = str(arguments.get("file_path", ""))
        target = (jail / wanted).resolve()
        if not target.is_relative_to(jail):
            raise PathOutsideRoot(
                f"{wanted!r} is outside the readable folder {jail}; give a path inside it (relative paths"
                " are resolved from it)"
            )
        if not target.is_file():
            return f"Error: File not found at path: {wanted}"
        if target.stat().st_size > max_bytes:
            return (
                f"Error: {wanted} is larger than {max_bytes} bytes; read part of it (start_line, line_count)"
            )
        lines = target.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        start = max(int(arguments.get("start_line") or 1), 1) - 1
        count = arguments.get("line_count")
        selected = lines[start:] if count is None else lines[start : start + int(count)]
        return "".join(selected)

    spec = ToolSpec(
        name=READ_FILE,
        description=f"Read a file's content (under {jail}); optionally from start_line for line_count lines.",
        source="crew",
        input_schema={
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file, relative to the folder"},
                "start_line": {"type": "integer", "minimum": 1},
                "line_count": {"type": ["integer", "null"], "minimum": 0},
            },
            "required": ["file_path"],
        },
    )
    return LocalTool(spec=spec, function=read_file)


def add_image_tool() -> LocalTool:
    """crewAI's "Add image to content": the image (by URL or data URL) plus what to do with it."""

    def add_image(arguments: dict[str, Any]) -> list[Any]:
        url = str(arguments.get("image_url", ""))
        action = str(arguments.get("action") or DEFAULT_IMAGE_ACTION)
        if url.startswith("data:") and ";base64," in url:
            header, data = url[len("data:") :].split(";base64,", 1)
            base64.b64decode(data, validate=True)
            image: Any = ImageContent(data=data, mime_type=header or "image/png")
        else:
            mime = mimetypes.guess_type(url)[0]
            image = ResourceLink(uri=url, name=url.rsplit("/", 1)[-1] or "image", mime_type=mime)
        return [TextContent(text=action), image]

    spec = ToolSpec(
        name=ADD_IMAGE,
        description="See image to understand its content, you can optionally ask a question about the image",
        source="crew",
        input_schema={
            "type": "object",
            "properties": {
                "image_url": {"type": "string", "description": "The URL or data URL of the image"},
                "action": {"type": "string", "description": "What to do with the image (optional)"},
            },
            "required": ["image_url"],
        },
    )
    return LocalTool(spec=spec, function=add_image)
