"""The fixture tools of the MCP conformance suite, as an ordinary toolmesh tool set.

Serve them with ``toolmesh up examples/mcp_conformance`` and expose the mesh
with ``toolmesh mcp serve --http 127.0.0.1:PORT``; the suite then calls them
through the whole path: MCP client → gateway → NATS → node → tool.  Logging,
progress, sampling and elicitation travel back over the call's callback
channel.  Each tool returns MCP content blocks (a list of them), so none
declares an output schema.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import toolmesh
from toolmesh import CallContext, ExecutionFailed
from toolmesh.contracts import AudioContent, EmbeddedResource, ImageContent, TextContent

RED_PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red PNG."""

SILENT_WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="
"""A WAV file with no samples."""


@toolmesh.tool
def test_simple_text():
    """Returns a simple text block."""
    return [TextContent(text="This is a simple text response for testing.")]


@toolmesh.tool
def test_image_content():
    """Returns a 1x1 PNG image."""
    return [ImageContent(data=RED_PIXEL_PNG, mime_type="image/png")]


@toolmesh.tool
def test_audio_content():
    """Returns a tiny WAV file."""
    return [AudioContent(data=SILENT_WAV, mime_type="audio/wav")]


@toolmesh.tool
def test_embedded_resource():
    """Returns an embedded text resource."""
    return [
        EmbeddedResource(
            resource={
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            }
        )
    ]


@toolmesh.tool
def test_multiple_content_types():
    """Returns text, an image and an embedded resource."""
    return [
        TextContent(text="Multiple content types test:"),
        ImageContent(data=RED_PIXEL_PNG, mime_type="image/png"),
        EmbeddedResource(
            resource={
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": json.dumps({"test": "data", "value": 123}),
            }
        ),
    ]


@toolmesh.tool
async def test_tool_with_logging(context: CallContext):
    """Sends three log messages while it runs."""
    await context.log("info", "Tool execution started")
    await anyio.sleep(0.05)
    await context.log("info", "Tool processing data")
    await anyio.sleep(0.05)
    await context.log("info", "Tool execution completed")
    return [TextContent(text="Tool with logging executed successfully")]


@toolmesh.tool
async def test_tool_with_progress(context: CallContext):
    """Reports progress 0, 50 and 100 of 100."""
    for step, value in enumerate((0, 50, 100)):
        if step:
            await anyio.sleep(0.05)
        await context.progress(value, 100)
    return [TextContent(text="Tool with progress executed successfully")]


@toolmesh.tool
def test_error_handling():
    """Always fails."""
    raise ExecutionFailed("This tool intentionally returns an error for testing")


@toolmesh.tool
async def test_sampling(prompt: str, context: CallContext):
    """Asks the caller's model to answer ``prompt``."""
    answer: dict[str, Any] = await context.ask(
        "sampling",
        {"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 100},
    )
    content = answer.get("content") or {}
    text = content.get("text", "") if isinstance(content, dict) else json.dumps(content)
    return [TextContent(text=f"LLM response: {text}")]


@toolmesh.tool
async def test_elicitation(message: str, context: CallContext):
    """Asks a person for a user name and an email address."""
    answer = await context.ask(
        "elicitation",
        {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        },
    )
    return [
        TextContent(
            text=f"User response: action={answer.get('action')}, content={json.dumps(answer.get('content'))}"
        )
    ]


@toolmesh.tool
async def test_elicitation_sep1034_defaults(context: CallContext):
    """Elicitation whose fields all have defaults (SEP-1034)."""
    answer = await context.ask(
        "elicitation",
        {
            "message": "Please review and update the form fields with defaults",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active",
                    },
                    "verified": {"type": "boolean", "description": "Verification status", "default": True},
                },
                "required": [],
            },
        },
    )
    return [
        TextContent(
            text=f"Elicitation completed: action={answer.get('action')}, content={json.dumps(answer.get('content'))}"
        )
    ]


@toolmesh.tool
async def test_elicitation_sep1330_enums(context: CallContext):
    """Elicitation with the five enum forms of SEP-1330."""
    answer = await context.ask(
        "elicitation",
        {
            "message": "Please select options from the enum fields",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "description": "Untitled single-select",
                        "enum": ["option1", "option2", "option3"],
                    },
                    "titledSingle": {
                        "type": "string",
                        "description": "Titled single-select",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"},
                        ],
                    },
                    "legacyEnum": {
                        "type": "string",
                        "description": "Legacy titled enum",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"],
                    },
                    "untitledMulti": {
                        "type": "array",
                        "description": "Untitled multi-select",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    },
                    "titledMulti": {
                        "type": "array",
                        "description": "Titled multi-select",
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"},
                            ]
                        },
                    },
                },
                "required": [],
            },
        },
    )
    return [
        TextContent(
            text=f"Elicitation completed: action={answer.get('action')}, content={json.dumps(answer.get('content'))}"
        )
    ]
