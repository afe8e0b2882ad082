"""Tools for the security examples: a public echo, a restricted admin tool, a secret argument, a hang.

``docs/operations.md`` and the security tests serve these with an
``[authorization]`` policy and with the NATS permissions of
``ops/nats/permissions.conf``.
"""

from __future__ import annotations

from typing import Annotated

import anyio
import msgspec
import toolmesh


@toolmesh.tool
def echo(message: str) -> str:
    """Return the message unchanged (everybody may call it)."""
    return message


@toolmesh.tool(name="math.add")
def math_add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@toolmesh.tool(name="admin.wipe")
def admin_wipe(confirm: bool = False) -> str:
    """Pretend to wipe everything (only administrators may call it)."""
    return "wiped" if confirm else "nothing done"


@toolmesh.tool
def login(user: str, api_key: Annotated[str, msgspec.Meta(min_length=12, extra_json_schema={"writeOnly": True})]) -> str:
    """Check a user's API key (the key is a secret: never logged, never quoted in errors)."""
    return f"{user} logged in"


@toolmesh.tool(timeout=3600)
async def hang(seconds: float = 3600.0) -> str:
    """Never answer in practice: a stand-in for a tool stuck on a dead dependency."""
    await anyio.sleep(seconds)
    return "woke up"
