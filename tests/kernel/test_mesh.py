"""The client side of a mesh, apart from calls (covered with the node tests)."""

from __future__ import annotations

import os
import re

import anyio
import pytest
from toolmesh import Mesh
from toolmesh._transport.broker import EmbeddedBroker
from toolmesh._transport.mesh import new_request_id
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


def test_request_ids_are_unique_and_safe_as_keys_and_subject_tokens() -> None:
    ids = [new_request_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    # used as JetStream KV keys (durable results) and as subject tokens (callbacks)
    assert all(re.fullmatch(r"[A-Za-z0-9_\-]+", request_id) for request_id in ids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_repeat_its_parents_request_ids() -> None:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next id and leave without running any cleanup
        os.write(writer, new_request_id().encode())
        os._exit(0)
    os.close(writer)
    os.waitpid(pid, 0)
    child_id = os.read(reader, 200).decode()
    os.close(reader)
    assert child_id and child_id != new_request_id()
    assert child_id[:16] != new_request_id()[:16]
