"""Close-name suggestions for a tool name nobody serves."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_names"]


def close_names(name: str, candidates: Iterable[str], limit: int = 3) -> tuple[str, ...]:
    """Up to ``limit`` candidates similar to ``name`` (edit similarity, then substring)."""
    pool = list(candidates)
    close = difflib.get_close_matches(name, pool, n=limit, cutoff=0.6)
    lowered = name.lower()
    extra = [candidate for candidate in pool if lowered in candidate.lower() and candidate not in close]
    return tuple((close + extra)[:limit])
