"""Shared fixtures: the anyio backend; ``toolmesh_broker``/``toolmesh_settings`` come from ``toolmesh.testing``."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
