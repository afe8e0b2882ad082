"""ops tests serve Python tools only: loading no other plugin keeps them fast and independent."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _python_plugin_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLMESH_PLUGINS", "python")
