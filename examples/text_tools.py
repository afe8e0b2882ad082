"""Text tools."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

import msgspec
import toolmesh


@toolmesh.tool(tags=["text"])
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


@toolmesh.tool(tags=["text"])
def slugify(text: str, separator: str = "-") -> str:
    """Turn a title into a URL slug ("Hello, World!" → "hello-world").

    Args:
        text: the text to turn into a slug
        separator: what joins the words
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return separator.join(re.findall(r"[a-z0-9]+", ascii_text.lower()))


@toolmesh.tool(tags=["text"])
async def echo(message: str) -> str:
    """Return the message unchanged (an async tool)."""
    return message


@toolmesh.tool(tags=["text"])
def shout(text: str, times: Annotated[int, msgspec.Meta(ge=1, le=10)] = 1) -> str:
    """Upper-case a text, repeated 1 to 10 times."""
    return " ".join([text.upper()] * times)
