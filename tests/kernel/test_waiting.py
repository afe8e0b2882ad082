"""toolmesh.testing's waiting helpers: poll until a condition holds, fail naming it when it never does."""

from __future__ import annotations

import time

import anyio
import anyio.lowlevel
import pytest
from toolmesh.testing import eventually, eventually_sync

pytestmark = pytest.mark.anyio


async def test_eventually_returns_the_first_truthy_value_of_a_plain_or_async_check() -> None:
    calls: list[int] = []

    def plain() -> list[int] | None:
        calls.append(1)
        return calls if len(calls) == 3 else None

    async def awaited() -> str:
        await anyio.lowlevel.checkpoint()
        return "ready"

    assert await eventually(plain, timeout=5, interval=0) == [1, 1, 1]
    assert await eventually(awaited, timeout=5) == "ready"


async def test_eventually_fails_naming_the_condition_and_its_last_value() -> None:
    failure = r"the queue emptying did not hold within 0.1 s \(last value: 0\)"
    with pytest.raises(AssertionError, match=failure):
        await eventually(lambda: 0, timeout=0.1, what="the queue emptying")


async def test_a_check_that_hangs_is_cancelled_at_the_deadline() -> None:
    async def hangs() -> bool:
        await anyio.sleep_forever()
        return True  # pragma: no cover - never reached

    with anyio.fail_after(10), pytest.raises(AssertionError, match="hangs"):
        await eventually(hangs, timeout=0.1)


def test_eventually_sync_polls_from_the_calling_thread() -> None:
    deadline = time.monotonic() + 0.05
    assert eventually_sync(lambda: time.monotonic() > deadline, timeout=5) is True
    with pytest.raises(AssertionError, match="did not hold within 0.05 s"):
        eventually_sync(lambda: "", timeout=0.05)
