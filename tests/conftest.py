"""Shared fixtures: the anyio backend and ``no_blocking_calls`` (broker and settings: ``toolmesh.testing``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.blocking_calls import watching_the_loop


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def no_blocking_calls() -> Iterator[None]:
    """Fail the test when toolmesh code blocks the event loop (see tests/blocking_calls.py)."""
    yield from watching_the_loop()
