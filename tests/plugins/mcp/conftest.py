"""Fixtures of the MCP tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.plugins.mcp.peers import HttpFixtureServer


@pytest.fixture(autouse=True)
def _no_blocking_calls(no_blocking_calls: None) -> None:
    """Every MCP test also fails if toolmesh code blocks the event loop (tests/blocking_calls.py)."""


@pytest.fixture
def http_fixture_server() -> Iterator[HttpFixtureServer]:
    server = HttpFixtureServer().start()
    try:
        yield server
    finally:
        server.kill()
