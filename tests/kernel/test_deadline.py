"""``within_deadline``: a step's value, its own errors, or ``DeadlineExceeded`` when time runs out."""

from __future__ import annotations

import asyncio
import time

import pytest
from toolmesh._pipeline.deadline import DeadlineExceeded, DeadlineWatch, within_deadline

pytestmark = pytest.mark.anyio


async def _value_after(seconds: float, value: object = "done") -> object:
    await asyncio.sleep(seconds)
    return value


async def _raise_own_timeout() -> None:
    await asyncio.sleep(0)
    raise TimeoutError("upstream timed out")


async def test_value_before_the_deadline() -> None:
    assert await within_deadline(time.monotonic() + 5, _value_after(0.001, 42)) == 42


async def test_no_deadline_waits_for_the_step() -> None:
    assert await within_deadline(None, _value_after(0.01)) == "done"


async def test_deadline_passing_cancels_the_step() -> None:
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(DeadlineExceeded):
        await within_deadline(time.monotonic() + 0.05, slow())
    assert cancelled.is_set()


async def test_a_deadline_already_past_still_raises_deadline_exceeded() -> None:
    with pytest.raises(DeadlineExceeded):
        await within_deadline(time.monotonic() - 1, _value_after(1))


async def test_the_steps_own_timeout_error_is_not_the_deadline() -> None:
    with pytest.raises(TimeoutError, match="upstream timed out"):
        await within_deadline(time.monotonic() + 5, _raise_own_timeout())


async def test_the_callers_cancellation_is_not_swallowed() -> None:
    task = asyncio.ensure_future(within_deadline(time.monotonic() + 5, _value_after(10)))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_each_step_ends_at_its_own_deadline_with_one_watch() -> None:
    """Deadlines added out of order (a later one first) each fire on time; the others keep running."""
    now = time.monotonic()

    async def timed(deadline: float) -> str:
        try:
            return str(await within_deadline(deadline, _value_after(0.3, "finished")))
        except DeadlineExceeded:
            return "expired"

    late, early, none = (
        asyncio.ensure_future(timed(now + 0.15)),
        asyncio.ensure_future(timed(now + 0.05)),  # earlier than the watch's armed timer: re-arms it
        asyncio.ensure_future(timed(now + 5)),
    )
    assert await asyncio.gather(late, early, none) == ["expired", "expired", "finished"]


async def test_a_step_that_swallows_the_cancellation_keeps_its_value_and_the_task_is_clean() -> None:
    async def stubborn() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return "cleaned up"
        return "slept"

    assert await within_deadline(time.monotonic() + 0.02, stubborn()) == "cleaned up"
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0  # no stray cancellation left for later awaits
    assert await within_deadline(time.monotonic() + 5, _value_after(0.001, "next")) == "next"


async def test_finished_steps_do_not_pile_up_in_the_watch() -> None:
    loop = asyncio.get_running_loop()
    watch = DeadlineWatch(loop)
    task = asyncio.current_task()
    assert task is not None
    for _ in range(5000):  # calls with a long timeout that finish at once
        watch.remove(watch.add(loop.time() + 60, task))
    assert len(watch._heap) <= DeadlineWatch._COMPACT_SLACK + 2
