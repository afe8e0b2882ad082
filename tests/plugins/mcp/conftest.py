"""Fixtures of the MCP tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.plugins.mcp.peers import HttpFixtureServer


@pytest.fixture
def http_fixture_server() -> Iterator[HttpFixtureServer]:
    server = HttpFixtureServer().start()
    try:
        yield server
    finally:
        server.kill()
