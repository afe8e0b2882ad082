"""``toolmesh mcp serve`` shows and applies the gateway's own session limits."""

from __future__ import annotations

from toolmesh.plugins.mcp import cli, http_security, session_admission


def test_the_command_line_defaults_are_the_gateways() -> None:
    # The command module spells them out so that `toolmesh --help` need not import the gateway.
    for name in ("DEFAULT_MAX_SESSIONS", "DEFAULT_MAX_CLIENT_SESSIONS", "DEFAULT_UNUSED_TIMEOUT", "DEFAULT_IDLE_TIMEOUT"):
        assert getattr(cli, name) == getattr(session_admission, name), name
    assert cli.TOKEN_ENV == http_security.TOKEN_ENV
