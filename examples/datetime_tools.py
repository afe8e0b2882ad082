"""Date and time tools."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import toolmesh


@toolmesh.tool(tags=["time"])
def now(timezone: str = "UTC") -> str:
    """The current time in a timezone (IANA name such as "Europe/Paris"), ISO 8601."""
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown timezone {timezone!r}: use an IANA name such as 'Europe/Paris'") from exc
    return datetime.now(zone).isoformat(timespec="seconds")
