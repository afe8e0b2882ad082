"""Python tools of the console tests: every kind of field, an image, progress, a check only the node makes."""

from __future__ import annotations

import base64
import io
import struct
import wave
import zlib
from typing import Annotated, Literal

import anyio
import msgspec
import toolmesh
from toolmesh.contracts import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent


class Address(msgspec.Struct):
    city: str
    zip_code: Annotated[str, msgspec.Meta(pattern=r"^[0-9]{5}$")]


@toolmesh.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@toolmesh.tool
def book_room(
    guest: Annotated[str, msgspec.Meta(min_length=2, description="Who stays")],
    nights: Annotated[int, msgspec.Meta(ge=1, le=14, description="How many nights")],
    room: Literal["single", "double", "suite"] = "double",
    breakfast: bool = True,
    address: Address | None = None,
    extras: list[str] = [],  # noqa: B006 - a default the schema shows, never mutated
) -> dict:
    """Book a hotel room: bounded numbers, an enum, a nested object and a list."""
    return {
        "guest": guest,
        "nights": nights,
        "room": room,
        "breakfast": breakfast,
        "city": address.city if address else None,
        "extras": extras,
    }


@toolmesh.tool
def divide(a: float, b: float) -> float:
    """Divide a by b; the node refuses b = 0 as an invalid argument of b."""
    if b == 0:
        raise toolmesh.InvalidArguments(
            "b must not be zero; pass another divisor",
            details={"issues": [{"path": "$.b", "message": "must not be zero"}]},
        )
    return a / b


def _png(width: int, height: int) -> bytes:
    rows = b"".join(
        b"\x00" + b"".join(bytes((40 + 200 * x // width, 90, 160 + 90 * y // height)) for x in range(width))
        for y in range(height)
    )

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _silence() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 800)
    return out.getvalue()


@toolmesh.tool
def gradient(width: int = 64, height: int = 32):  # no return annotation: content blocks, no output schema
    """A PNG gradient of the given size as an image block, with a sound, a link and an embedded resource."""
    data = base64.b64encode(_png(width, height)).decode()
    return [
        TextContent(text=f"a {width}x{height} gradient"),
        ImageContent(data=data, mime_type="image/png"),
        AudioContent(data=base64.b64encode(_silence()).decode(), mime_type="audio/wav"),
        ResourceLink(
            uri="https://example.org/gradients/1", name="gradient-1", description="where it is kept"
        ),
        EmbeddedResource(
            resource={"uri": "mem://gradient.txt", "mimeType": "text/plain", "text": "stops: 2"}
        ),
    ]


@toolmesh.tool
async def count_slowly(steps: int, context: toolmesh.CallContext, pause: float = 0.3) -> int:
    """Count to steps, reporting progress after each step."""
    for step in range(1, steps + 1):
        await anyio.sleep(pause)
        await context.progress(step, steps, f"step {step}")
    return steps


@toolmesh.tool(
    meta={
        "upstream": {
            "url": "https://accounts.example.org",
            "headers": {"Authorization": "Bearer header-s3cr3t-value"},
        },
        "env": {"ACCOUNTS_KEY": "env-s3cr3t-value"},
    }
)
def sign_in(user: str, password: str) -> str:
    """Sign a user in (checks nothing): shows what the console keeps of secret arguments and meta."""
    return f"signed in {user}"


@toolmesh.tool
async def add_twice(a: int, b: int, context: toolmesh.CallContext) -> int:
    """Add b to a twice, through two nested calls of add."""
    assert context.call_tool is not None
    first = await context.call_tool("add", {"a": a, "b": b})
    second = await context.call_tool("add", {"a": first.structured_content, "b": b})
    return second.structured_content
