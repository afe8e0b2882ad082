"""The client side of a mesh, apart from calls (covered with the node tests)."""

from __future__ import annotations

import anyio
import pytest

from toolmesh import Mesh
from toolmesh.broker import EmbeddedBroker
from toolmesh.testing import test_settings

pytestmark = pytest.mark.anyio


async def test_closing_after_the_broker_went_away_does_not_raise() -> None:
    """A node that stops its embedded broker right after answering must not turn the caller's exit into an error."""
    with EmbeddedBroker(0) as broker:
        mesh = await Mesh(settings=test_settings(broker.url)).connect()
    assert mesh.nc is not None
    with anyio.fail_after(10):
        while not mesh.nc.is_reconnecting:  # the client noticed that the broker is gone
            await anyio.sleep(0.01)
        await mesh.close()
    assert mesh.nc is None
