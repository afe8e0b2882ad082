"""What the live view keeps stays bounded under any call rate, and its figures are right."""

from __future__ import annotations

import time

from toolmesh.plugins.console.catalog_view import public_meta
from toolmesh.plugins.console.live_feed import RECENT_ROWS, TIMELINES, WINDOW_SAMPLES, LiveFeed

from .call_events import call_events


def calls(feed: LiveFeed, count: int, *, tool: str = "t", node: str = "n", failed_every: int = 0) -> None:
    now = time.time()
    for index in range(count):
        for event in call_events(
            tool,
            f"{tool}-{index}",
            node,
            timestamp=now,
            duration_ms=float(index % 100 + 1),
            failed=bool(failed_every and index % failed_every == 0),
            started_attributes={"caller": "ops", "agent": "toolmesh-console"},
        ):
            feed.add(event)


def test_memory_stays_bounded_under_a_flood() -> None:
    feed = LiveFeed()
    calls(feed, 3 * WINDOW_SAMPLES // 2)
    assert len(feed.rows) == RECENT_ROWS
    assert len(feed.timelines) == TIMELINES
    assert len(feed.tools["t"].samples) == WINDOW_SAMPLES
    assert feed.in_flight_on("n") == 0


def test_a_reader_far_behind_skips_to_the_latest_rows_and_is_told_how_many() -> None:
    feed = LiveFeed()
    calls(feed, 100)
    rows, skipped = feed.since(0, 30)
    assert [row.seq for row in rows] == list(range(71, 101)) and skipped == 70
    assert feed.since(100, 30) == ([], 0)
    calls(feed, RECENT_ROWS + 10, tool="u")
    rows, skipped = feed.since(50, 10_000)
    assert rows[0].seq == feed.rows[0].seq and skipped == feed.rows[0].seq - 51


def test_rows_name_the_caller_from_the_start_and_the_figures_are_right() -> None:
    feed = LiveFeed()
    calls(feed, 100, failed_every=10)
    assert feed.rows[-1].caller == "ops (toolmesh-console)"
    (row,) = feed.summary()
    assert row["p50_ms"] == 50.0 and row["p99_ms"] == 99.0 and row["error_rate"] == 0.1
    assert row["calls_per_s"] == 100 / feed.window


def test_secret_looking_meta_never_reaches_the_page() -> None:
    meta = {
        "author": "ada",
        "headers": {"Authorization": "Bearer x"},
        "extra_env": {"K": "v"},
        "api_key": "k",
        "limits": {"memory_mb": 64},
        "servers": [{"url": "https://a", "token": "t"}],
    }
    assert public_meta(meta) == {
        "author": "ada",
        "headers": "(hidden)",
        "extra_env": "(hidden)",
        "api_key": "(hidden)",
        "limits": {"memory_mb": 64},
        "servers": [{"url": "https://a", "token": "(hidden)"}],
    }
