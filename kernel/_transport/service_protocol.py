"""Answer the NATS service protocol (``$SRV.PING|INFO|STATS``) so standard NATS tooling lists nodes.

The response bodies are nats.py's own ``nats.micro`` types; the dispatch is
ours because a node's endpoints (its tools) come and go at run time and run
concurrently, which ``nats.micro.Service`` does not support.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.micro.service import (
    EndpointInfo,
    EndpointStats,
    ServiceInfo,
    ServicePing,
    ServiceStats,
    ServiceVerb,
    control_subject,
)

__all__ = ["SERVICE_NAME", "EndpointCounters", "ServiceResponder"]

SERVICE_NAME = "toolmesh"
"""The service name every node answers to (``nats micro ls`` shows it)."""


@dataclass
class EndpointCounters:
    """Per-tool request statistics, as ``$SRV.STATS`` reports them."""

    subject: str
    num_requests: int = 0
    num_errors: int = 0
    processing_time: int = 0  # nanoseconds, as the protocol wants
    last_error: str | None = None

    def record(self, duration_ns: int, error: str | None) -> None:
        """Count one served request."""
        self.num_requests += 1
        self.processing_time += duration_ns
        if error is not None:
            self.num_errors += 1
            self.last_error = error


class ServiceResponder:
    """Subscribes to the control subjects of one node and answers them."""

    def __init__(
        self,
        nc: NATS,
        *,
        node: str,
        version: str,
        queue_group: str,
        endpoints: dict[str, EndpointCounters],
        metadata: dict[str, str],
    ) -> None:
        self.nc = nc
        self.node = node
        self.version = version
        self.queue_group = queue_group
        self.endpoints = endpoints
        self.metadata = metadata
        self.started = datetime.now(UTC)
        self._subscriptions: list[Subscription] = []

    async def start(self) -> None:
        """Subscribe to ``$SRV.<verb>``, ``$SRV.<verb>.toolmesh`` and ``$SRV.<verb>.toolmesh.<node>``."""
        handlers = {ServiceVerb.PING: self._ping, ServiceVerb.INFO: self._info, ServiceVerb.STATS: self._stats}
        for verb, handler in handlers.items():
            for subject in (
                control_subject(verb),
                control_subject(verb, SERVICE_NAME),
                control_subject(verb, SERVICE_NAME, self.node),
            ):
                self._subscriptions.append(await self.nc.subscribe(subject, cb=handler))

    async def stop(self) -> None:
        """Stop answering."""
        for subscription in self._subscriptions:
            await subscription.unsubscribe()
        self._subscriptions.clear()

    async def _reply(self, msg: Msg, body: dict[str, Any]) -> None:
        if msg.reply:
            await self.nc.publish(msg.reply, json.dumps(body).encode())

    async def _ping(self, msg: Msg) -> None:
        ping = ServicePing(id=self.node, name=SERVICE_NAME, version=self.version, metadata=self.metadata)
        await self._reply(msg, ping.to_dict())

    async def _info(self, msg: Msg) -> None:
        info = ServiceInfo(
            name=SERVICE_NAME,
            id=self.node,
            version=self.version,
            description="toolmesh node: each endpoint is a tool",
            endpoints=[
                EndpointInfo(name=name, subject=counters.subject, queue_group=self.queue_group)
                for name, counters in sorted(self.endpoints.items())
            ],
            metadata=self.metadata,
        )
        await self._reply(msg, info.to_dict())

    async def _stats(self, msg: Msg) -> None:
        stats = ServiceStats(
            id=self.node,
            name=SERVICE_NAME,
            version=self.version,
            started=self.started,
            metadata=self.metadata,
            endpoints=[
                EndpointStats(
                    name=name,
                    subject=counters.subject,
                    queue_group=self.queue_group,
                    num_requests=counters.num_requests,
                    num_errors=counters.num_errors,
                    processing_time=counters.processing_time,
                    average_processing_time=counters.processing_time // max(1, counters.num_requests),
                    last_error=counters.last_error,
                )
                for name, counters in sorted(self.endpoints.items())
            ],
        )
        await self._reply(msg, stats.to_dict())
