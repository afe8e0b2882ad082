"""The installed distribution's version, read once from its metadata."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version

__all__ = ["package_version"]


@cache
def package_version() -> str:
    """``toolmesh``'s version as installed; ``0.0.0`` in a source tree that was never installed."""
    try:
        return version("toolmesh")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        return "0.0.0"
