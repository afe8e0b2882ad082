"""``[mcp.servers.NAME]`` tables of ``toolmesh.toml``: which MCP servers a node connects to.

::

    [mcp.servers.files]
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-filesystem", "/data"]
    env = { LOG_LEVEL = "warn" }

    [mcp.servers.search]
    url = "https://search.example.com/mcp"
    headers = { Authorization = "Bearer ..." }
    mode = "on-demand"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import msgspec
from toolmesh import ConfigError

__all__ = ["MODES", "ServerConfig", "load_server_configs"]

MODES = ("native", "on-demand")
"""``native``: one persistent MCP session per node; ``on-demand``: connect, call, close."""

_SERVER_NAME = re.compile(r"[A-Za-z0-9_\-]{1,64}")


class ServerConfig(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """One MCP server the node serves as ``NAME_TOOL`` tools; give ``command`` (stdio) or ``url`` (HTTP)."""

    name: str = ""
    command: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    env: dict[str, str] = msgspec.field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    mode: Literal["native", "on-demand"] = "native"
    connect_timeout: float = 15.0
    """Seconds to wait for the session to initialize and list its tools."""
    ping_interval: float = 10.0
    """A native session is pinged this often; a missed answer marks its tools unavailable."""
    max_backoff: float = 30.0
    """Longest pause between reconnection attempts."""
    tool_timeout: float | None = None
    """Deadline of this server's tools in seconds (default: the node's ``default_timeout``).  Calls may
    ask for less, never more; ``optional`` task tools are called as tasks when more than a minute is left."""

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command else "http"

    def describe(self) -> str:
        """How the server is reached, for messages."""
        return f"'{self.command} {' '.join(self.args)}'".replace(" '", "'") if self.command else str(self.url)


def load_server_configs(plugin_settings: Mapping[str, Any]) -> list[ServerConfig]:
    """The servers of the ``mcp`` table (``Settings.plugins["mcp"]``), validated with clear messages."""
    servers = plugin_settings.get("servers", {}) or {}
    if not isinstance(servers, Mapping):
        raise ConfigError("[mcp.servers] must be a table of [mcp.servers.NAME] tables")
    configs = []
    for name, table in servers.items():
        if not _SERVER_NAME.fullmatch(name):
            raise ConfigError(
                f"MCP server name {name!r} is not valid: use 1-64 characters of A-Z, a-z, 0-9, '_' and '-'"
            )
        if not isinstance(table, Mapping):
            raise ConfigError(f"[mcp.servers.{name}] must be a table with 'command' or 'url'")
        try:
            config = msgspec.convert({**table, "name": name}, ServerConfig, strict=False)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"[mcp.servers.{name}]: {exc}") from exc
        if config.tool_timeout is not None and not config.tool_timeout > 0:
            raise ConfigError(f"[mcp.servers.{name}] tool_timeout must be a positive number of seconds")
        if bool(config.command) == bool(config.url):
            raise ConfigError(
                f"[mcp.servers.{name}] needs exactly one of 'command' (stdio) or 'url' (Streamable HTTP)"
            )
        configs.append(config)
    return configs
