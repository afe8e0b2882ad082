"""Tool selection: exact, normalized, fuzzy at crewAI's threshold, and the error listing the tools."""

from __future__ import annotations

import random
import string
from difflib import SequenceMatcher

import pytest
from toolmesh.contracts import ToolSpec
from toolmesh.plugins.crew import (
    ToolSelectionError,
    ToolSelector,
    fuzzy_match,
    normalize_tool_name,
    selection,
)

BASE = "abcdefghijklmnopqrstuvwxyza"  # 27 characters: 4 substitutions → 46/54 = 0.8519, 5 → 0.8148


def _substitute(name: str, positions: list[int]) -> str:
    chars = list(name)
    for position in positions:
        chars[position] = "0"
    return "".join(chars)


def _selector(*names: str) -> ToolSelector:
    return ToolSelector(ToolSpec(name=name, description=f"The {name} tool.") for name in names)


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("search_web", "search_web"),
        ("Search the Web", "search_the_web"),
        ("searchWeb", "search_web"),
        ("HTTPRequest", "http_request"),
        ("  café--menu ", "cafe_menu"),
        ("'quoted' name", "quoted_name"),
    ],
)
def test_normalize_tool_name(raw: str, normalized: str) -> None:
    assert normalize_tool_name(raw) == normalized


def test_long_names_are_cut_with_a_hash_suffix() -> None:
    first, second = normalize_tool_name("x" * 80), normalize_tool_name("x" * 81)
    assert len(first) == len(second) == 64
    assert first.startswith("x" * 55 + "_") and first != second


@pytest.mark.parametrize(
    ("written", "selected"),
    [
        ("search_web", "search_web"),
        ("Search Web", "search_web"),
        ("SEARCH-WEB", "search_web"),
        ("searchWeb", "search_web"),
        ("serch_web", "search_web"),
        ("read_fiel", "read_file"),
    ],
)
def test_exact_normalized_then_fuzzy(written: str, selected: str) -> None:
    assert _selector("search_web", "read_file", "add").select(written).name == selected


@pytest.mark.parametrize(
    ("positions", "ratio", "selected"),
    [
        ([3, 9, 15, 21], 46 / 54, True),  # just above 0.85
        ([3, 8, 13, 18, 23], 44 / 54, False),  # just below
    ],
)
def test_fuzzy_threshold(positions: list[int], ratio: float, selected: bool) -> None:
    written = _substitute(BASE, positions)
    assert SequenceMatcher(None, BASE, written).ratio() == pytest.approx(ratio)
    assert (_selector(BASE, "other").find(written) is not None) is selected


def test_ratio_exactly_at_threshold_is_rejected() -> None:
    name = "abcdefghijklmnopqrst"
    written = _substitute(name, [3, 9, 15])
    assert SequenceMatcher(None, name, written).ratio() == 0.85
    assert _selector(name).find(written) is None


def test_best_ratio_wins_and_ties_keep_catalog_order() -> None:
    assert _selector("search_webs", "search_web").select("search_wef").name == "search_web"
    assert _selector("abcdefghiX", "abcdefghiY").select("abcdefghiZ").name == "abcdefghiX"


def test_unknown_name_lists_available_tools() -> None:
    with pytest.raises(ToolSelectionError) as caught:
        _selector("search_web", "add").select("translate")
    assert caught.value.code == "unknown_tool"
    assert "Action 'translate' doesn't exist" in caught.value.message
    assert "Tool Name: search_web" in caught.value.message and "Tool Name: add" in caught.value.message


def test_missing_name_says_so() -> None:
    with pytest.raises(ToolSelectionError, match="I forgot the Action name"):
        _selector("add").select("  ")


@pytest.mark.parametrize("accelerated", [True, False])
def test_prefilter_agrees_with_plain_difflib_on_a_large_catalog(accelerated: bool, monkeypatch) -> None:
    if not accelerated:
        monkeypatch.setattr(selection, "HAS_RAPIDFUZZ", False)
    rng = random.Random(7)
    names = ["".join(rng.choices(string.ascii_lowercase + "_", k=rng.randint(6, 30))) for _ in range(800)]
    for _ in range(20):
        base = rng.choice(names)
        written = "".join(ch if rng.random() > 0.1 else rng.choice(string.ascii_lowercase) for ch in base)
        ratios = [SequenceMatcher(None, name, written).ratio() for name in names]
        best = max(range(len(names)), key=lambda index: (ratios[index], -index))
        expected = best if ratios[best] > 0.85 else None
        assert fuzzy_match(written, names) == expected
