"""Tool selection: exact name, then normalized name, then fuzzy (crewAI's ``SequenceMatcher`` ratio > 0.85).

The fuzzy measure is exactly crewAI's — ``difflib.SequenceMatcher(None, tool,
wanted).ratio()`` on normalized names, best ratio first, catalog order on
ties.  To stay fast on large catalogs, candidates are first filtered by an
exact upper bound of that ratio: difflib's matching blocks form a common
subsequence, so ``ratio <= 2*LCS/(la+lb)`` (rapidfuzz's Indel ``ratio``) and
``ratio <= 2*min(la,lb)/(la+lb)``; only names that pass the bound are scored
with difflib.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher

from toolmesh.contracts import ToolSpec

from .errors import ToolSelectionError
from .prompts import describe_tools

try:  # optional accelerator (the ``crew`` extra installs it)
    from rapidfuzz import fuzz as _fuzz
    from rapidfuzz import process as _process

    HAS_RAPIDFUZZ = True
except ImportError:  # pragma: no cover - exercised only without the extra
    HAS_RAPIDFUZZ = False  # _fuzz and _process stay unbound: every use is behind this flag

__all__ = ["FUZZY_THRESHOLD", "ToolSelector", "fuzzy_match", "normalize_tool_name"]

FUZZY_THRESHOLD = 0.85
"""A misspelt name selects a tool when the similarity ratio is strictly above this (crewAI's cut-off)."""

MAX_NAME_LENGTH = 64
"""Normalized names are cut to this length (OpenAI/Bedrock limit), with a hash suffix."""

_CAMEL_UPPER_LOWER = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_LOWER_UPPER = re.compile(r"([a-z])([A-Z])")
_QUOTES = re.compile(r"[\'\"]+")
_DISALLOWED = re.compile(r"[^a-zA-Z0-9]+")
_UNDERSCORES = re.compile(r"_+")


def normalize_tool_name(name: str) -> str:
    """crewAI's name normalization: ASCII, camelCase split, lower case, runs of other characters → ``_``."""
    name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    name = _CAMEL_UPPER_LOWER.sub(r"\1_\2", name)
    name = _CAMEL_LOWER_UPPER.sub(r"\1_\2", name)
    name = _QUOTES.sub("", name.lower())
    name = _UNDERSCORES.sub("_", _DISALLOWED.sub("_", name)).strip("_")
    if len(name) > MAX_NAME_LENGTH:
        suffix = "_" + hashlib.sha256(name.encode()).hexdigest()[:8]
        name = name[: MAX_NAME_LENGTH - len(suffix)].rstrip("_") + suffix
    return name


def _length_bound_ok(la: int, lb: int) -> bool:
    return la + lb > 0 and 2 * min(la, lb) / (la + lb) > FUZZY_THRESHOLD


def fuzzy_match(wanted: str, names: Sequence[str]) -> int | None:
    """Index of the name crewAI would pick for ``wanted`` (both already normalized), or ``None``."""
    if not wanted:
        return None
    if HAS_RAPIDFUZZ and len(names) > 32:
        hits = _process.extract(
            wanted, names, scorer=_fuzz.ratio, score_cutoff=FUZZY_THRESHOLD * 100 - 1e-6, limit=None
        )
        candidates: Iterable[int] = sorted(hit[2] for hit in hits)
    else:
        la = len(wanted)
        candidates = (index for index, name in enumerate(names) if _length_bound_ok(len(name), la))
    best: tuple[float, int] | None = None
    # crewAI compares SequenceMatcher(None, tool, wanted): keep ``wanted`` as the second sequence, whose
    # index difflib builds once, and swap the first.
    matcher = SequenceMatcher(None, "", wanted)
    for index in candidates:
        matcher.set_seq1(names[index])
        if matcher.real_quick_ratio() <= FUZZY_THRESHOLD or matcher.quick_ratio() <= FUZZY_THRESHOLD:
            continue
        ratio = matcher.ratio()
        if ratio > FUZZY_THRESHOLD and (best is None or ratio > best[0]):
            best = (ratio, index)
    return None if best is None else best[1]


class ToolSelector:
    """Resolves the names agents write to the tools of a catalog (built once per catalog)."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self.specs: list[ToolSpec] = list(specs)
        self._exact = {spec.name: spec for spec in self.specs}
        self._normalized_names = [normalize_tool_name(spec.name) for spec in self.specs]
        self._normalized: dict[str, ToolSpec] = {}
        for name, spec in zip(self._normalized_names, self.specs, strict=True):
            self._normalized.setdefault(name, spec)
        self._description: str | None = None

    @property
    def description(self) -> str:
        """The tools as listed to the agent in selection errors."""
        if self._description is None:
            self._description = describe_tools(self.specs)
        return self._description

    def find(self, name: str) -> ToolSpec | None:
        """The tool ``name`` designates (exact, normalized, then fuzzy), or ``None``."""
        spec = self._exact.get(name)
        if spec is not None:
            return spec
        wanted = normalize_tool_name(name)
        spec = self._normalized.get(wanted)
        if spec is not None:
            return spec
        index = fuzzy_match(wanted, self._normalized_names)
        return None if index is None else self.specs[index]

    def select(self, name: str) -> ToolSpec:
        """Like :meth:`find`, but raise ``ToolSelectionError`` listing the available tools."""
        spec = self.find(name)
        if spec is not None:
            return spec
        if name.strip():
            raise ToolSelectionError(
                f"Action '{name}' doesn't exist, these are the only available Actions:\n{self.description}"
            )
        raise ToolSelectionError(
            f"I forgot the Action name, these are the only available Actions:\n{self.description}"
        )
