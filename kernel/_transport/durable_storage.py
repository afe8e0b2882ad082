"""Where durable calls wait and their results stay: the JetStream stream, consumers and bucket.

Created on first use by whichever node or client needs them (see :mod:`toolmesh._transport.durable`).
"""

from __future__ import annotations

import logging

import nats.errors
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, KeyValueConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BucketNotFoundError, NotFoundError
from nats.js.kv import KeyValue
from toolmesh._config import Settings
from toolmesh._errors import BrokerError
from toolmesh.contracts import QUEUE_GROUP, encode_token

__all__ = ["MAX_ACK_PENDING", "consumer_name", "ensure_consumer", "ensure_durable_storage"]

_log = logging.getLogger("toolmesh.durable")

MAX_ACK_PENDING = 1024
"""Durable calls of one tool handed out and not yet acked, across all nodes: bounds node memory."""


def consumer_name(tool: str) -> str:
    """The durable consumer of ``tool`` (consumer names may not contain ``.``; tokens do not)."""
    return "tool_" + encode_token(tool)


async def ensure_durable_storage(js: JetStreamContext, settings: Settings) -> KeyValue:
    """Create the work-queue stream and the results bucket when missing; returns the bucket."""
    subjects = settings.subjects
    ttl = settings.durable_result_ttl
    try:
        try:
            await js.stream_info(subjects.durable_stream)
        except NotFoundError:
            await js.add_stream(
                StreamConfig(
                    name=subjects.durable_stream,
                    subjects=[f"{subjects.prefix}.durable.*"],
                    retention=RetentionPolicy.WORK_QUEUE,
                    storage=StorageType.FILE,
                    num_replicas=settings.durable_replicas,
                    # a repeat of an id within the result TTL is dropped at the door
                    duplicate_window=ttl,
                )
            )
        try:
            return await js.key_value(subjects.results_bucket)
        except BucketNotFoundError:
            config = KeyValueConfig(
                bucket=subjects.results_bucket,
                history=1,
                ttl=ttl,
                storage=StorageType.FILE,
                replicas=settings.durable_replicas,
            )
            try:
                return await js.create_key_value(config=config)
            except nats.errors.Error as exc:  # another node created it first (else opening it fails too)
                _log.debug("results bucket %s not created here: %r", subjects.results_bucket, exc)
                return await js.key_value(subjects.results_bucket)
    except nats.errors.Error as exc:
        raise BrokerError(
            f"cannot set up durable calls on stream {subjects.durable_stream!r} ({type(exc).__name__}: {exc});"
            " durable calls need JetStream (nats-server -js) and permission to use it"
        ) from exc


async def ensure_consumer(js: JetStreamContext, settings: Settings, tool: str) -> None:
    """Create the push consumer that hands durable calls of ``tool`` to the nodes serving it.

    It delivers to the tool's ordinary request subject in the node queue group,
    so nodes need no extra subscription.  An existing consumer is left as it is.
    """

    subjects = settings.subjects
    name = consumer_name(tool)
    try:
        await js.consumer_info(subjects.durable_stream, name)
        return
    except NotFoundError:
        pass
    config = ConsumerConfig(
        durable_name=name,
        deliver_subject=subjects.request(tool),
        deliver_group=QUEUE_GROUP,
        filter_subject=subjects.durable(tool),
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=settings.durable_ack_wait,
        # Unlimited: a node at its limit hands calls back (nak), which counts as a delivery.
        # Calls that keep killing nodes are bounded by durable_max_attempts instead.
        max_deliver=-1,
        max_ack_pending=MAX_ACK_PENDING,
    )
    try:
        await js.add_consumer(subjects.durable_stream, config=config)
    except nats.errors.Error as exc:  # a concurrent creator may have won; check it exists
        try:
            await js.consumer_info(subjects.durable_stream, name)
        except NotFoundError:
            raise BrokerError(f"cannot create the durable consumer {name!r} for tool {tool!r}: {exc}") from exc
