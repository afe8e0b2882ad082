"""Every reliability test also fails if toolmesh code blocks the event loop while it runs."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_blocking_calls(no_blocking_calls: None) -> None:
    """Applies ``no_blocking_calls`` (tests/conftest.py) to every test here."""
