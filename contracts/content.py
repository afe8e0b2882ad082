"""MCP content blocks carried in ``ToolResult.content``.

The field names follow the Model Context Protocol (2025-11-25) so blocks pass
between MCP peers and the mesh unchanged; ``type`` is the union tag.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceLink",
    "TextContent",
]


class _Block(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, tag_field="type"):
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class TextContent(_Block, tag="text", frozen=True):
    """Plain text, the block every client can show."""

    text: str


class ImageContent(_Block, tag="image", frozen=True):
    """A base64-encoded image."""

    data: str
    mime_type: str = msgspec.field(name="mimeType")


class AudioContent(_Block, tag="audio", frozen=True):
    """Base64-encoded audio."""

    data: str
    mime_type: str = msgspec.field(name="mimeType")


class ResourceLink(_Block, tag="resource_link", frozen=True):
    """A link to a resource the client may fetch."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = msgspec.field(default=None, name="mimeType")
    size: int | None = None


class EmbeddedResource(_Block, tag="resource", frozen=True):
    """A resource's contents inline (``{"uri", "text"}`` or ``{"uri", "blob"}``)."""

    resource: dict[str, Any]


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
"""Any MCP content block."""
