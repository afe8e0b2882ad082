"""Bootstrap: run enabled tools at node start, by priority, honouring ``wait_for``, once per mesh.

Order: higher ``priority`` first, but never before the tools a tool waits
for (a topological order that prefers priority).  ``once`` tools run one
after another and are awaited; ``continuous`` tools start in the background
and are supervised: when a run ends (crash or return) it starts again after
a backoff that doubles up to ``MAX_BACKOFF``.  A ``wait_for`` on a ``once``
tool waits for it to finish, on a ``continuous`` tool for it to start.

Only one node of a mesh runs a given bootstrap: ``once`` takes a key in the
JetStream KV bucket ``toolmesh_bootstrap_<prefix>`` (a node that finds the
key taken skips the tool).  The key names the tool *and* a digest of its
version, code and bootstrap input (``once_key``): "once" means once per
mesh for each version of a document, so a restart of the whole mesh with
unchanged documents runs nothing again and a changed one runs once more.
``continuous`` holds a key with a short TTL in
``toolmesh_bootstrap_live_<prefix>`` that it refreshes; other nodes retry and
take over when the holder stops.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc
import msgspec
import nats.errors
from nats.aio.client import Client as NATS
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue
from toolmesh.contracts import ToolRequest, ToolResult
from toolmesh.contracts.tool_code import CodeBootstrap

from .document import CodeTool

__all__ = ["STARTUP_SCHEMA", "BootstrapLocks", "Bootstrapper", "bootstrap_order", "once_key"]

STARTUP_SCHEMA = "system.startup.v1"
"""``schema_name`` of the trigger event a bootstrap run receives."""

MAX_BACKOFF = 30.0
"""Longest pause before a continuous tool is restarted."""

_log = logging.getLogger("toolmesh.sandbox.bootstrap")

Caller = Callable[[ToolRequest], Awaitable[ToolResult]]


def _settings(tool: CodeTool) -> CodeBootstrap:
    return tool.document.context.bootstrap or CodeBootstrap()


def bootstrap_order(tools: list[CodeTool]) -> tuple[list[CodeTool], dict[str, str]]:
    """Enabled bootstrap tools in start order, and the tools refused (name -> reason: unknown name, cycle)."""
    known = {tool.name for tool in tools}
    enabled = {
        tool.name: tool for tool in tools if _settings(tool).enabled and _settings(tool).mode != "disabled"
    }
    refused: dict[str, str] = {}
    for name, tool in enabled.items():
        unknown = [other for other in _settings(tool).wait_for if other not in known]
        if unknown:
            refused[name] = f"bootstrap.wait_for names unknown tool(s): {', '.join(unknown)}"
    # Only waits on other bootstrapping tools order anything.
    waits = {name: {other for other in _settings(tool).wait_for if other in enabled} for name, tool in enabled.items()}
    pending = {name: set(deps) for name, deps in waits.items()}
    ready = [(-_settings(enabled[name]).priority, name) for name, deps in pending.items() if not deps]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for other, deps in pending.items():
            if name in deps:
                deps.discard(name)
                if not deps:
                    heapq.heappush(ready, (-_settings(enabled[other]).priority, other))
    stuck = sorted(set(enabled) - set(order))
    for name in stuck:
        refused.setdefault(name, f"bootstrap.wait_for forms a cycle among: {', '.join(stuck)}")
    # A tool waiting for a refused one cannot start either.
    changed = True
    while changed:
        changed = False
        for name in order:
            if name not in refused and waits[name] & set(refused):
                refused[name] = f"bootstrap waits for refused tool(s): {', '.join(sorted(waits[name] & set(refused)))}"
                changed = True
    return [enabled[name] for name in order if name not in refused], refused


def once_key(tool: CodeTool) -> str:
    """The claim key of ``tool``'s ``once`` bootstrap: its name and a digest of what the run depends on.

    The digest covers the name, ``version``, the code (language and source) and ``bootstrap.input``, so
    changing any of them makes "once" due again, while the same document never runs twice on a mesh.
    """
    context = tool.document.context
    bootstrap = _settings(tool)
    basis = {"name": tool.name, "version": context.version, "language": context.code.language,
             "source": context.code.source, "input": bootstrap.input}
    digest = hashlib.sha256(msgspec.json.encode(basis, order="sorted")).hexdigest()[:32]
    # KV keys are subject tokens: a name's dots could form empty tokens ("a..b"); the digest keeps it unique.
    readable = re.sub(r"[^A-Za-z0-9_-]", "_", tool.name)
    return f"{readable}.{digest}"


class BootstrapLocks:
    """Mesh-wide claims on bootstrap runs (JetStream KV); without NATS every claim succeeds."""

    def __init__(self, once: KeyValue | None = None, live: KeyValue | None = None, ttl: float = 3.0) -> None:
        self.once = once
        self.live = live
        self.ttl = ttl
        self.owner = uuid.uuid4().hex

    @classmethod
    async def open(cls, nc: NATS, prefix: str, ttl: float = 3.0) -> BootstrapLocks:
        """Open (creating if needed) the two buckets of the mesh with ``prefix``."""
        js = nc.jetstream()
        suffix = prefix.replace(".", "_")
        buckets = []
        # The once claims outlive a broker restart (file storage), so unchanged code never runs twice;
        # the live claims expire within ``ttl`` anyway.
        for config in (
            KeyValueConfig(bucket=f"toolmesh_bootstrap_{suffix}", storage=StorageType.FILE, history=1),
            KeyValueConfig(bucket=f"toolmesh_bootstrap_live_{suffix}", storage=StorageType.MEMORY, history=1,
                           ttl=ttl),
        ):
            try:
                buckets.append(await js.key_value(config.bucket))
            except BucketNotFoundError:
                buckets.append(await js.create_key_value(config))
        return cls(buckets[0], buckets[1], ttl)

    async def claim_once(self, tool: CodeTool) -> bool:
        """True if this node is the first of the mesh to run this version of ``tool``'s one-time bootstrap."""
        if self.once is None:
            return True
        key = once_key(tool)
        claim = {"owner": self.owner, "tool": tool.name, "version": tool.document.context.version,
                 "claimed_at": datetime.now(UTC).isoformat(timespec="seconds")}
        try:
            await self.once.create(key, msgspec.json.encode(claim))
        except KeyWrongLastSequenceError:  # another node has it, or this version ran before
            return False
        except nats.errors.Error as exc:  # undecided: running it twice would be worse than not here
            _log.warning("bootstrap of %s not claimed (it runs on no node of this mesh now): %r",
                         tool.name, exc)
            return False
        return True

    async def claim_live(self, name: str) -> int | None:
        """Take the live claim on continuous tool ``name``; returns its revision, or ``None`` if held elsewhere."""
        if self.live is None:
            return 0
        try:
            return await self.live.create(name, self.owner.encode())
        except KeyWrongLastSequenceError:  # held by another node
            return None
        except nats.errors.Error as exc:  # the caller tries again after a while
            _log.warning("live claim on %s not taken: %r", name, exc)
            return None

    async def refresh_live(self, name: str, revision: int) -> int | None:
        """Keep the live claim; ``None`` when it was lost."""
        if self.live is None:
            return revision
        try:
            return await self.live.update(name, self.owner.encode(), last=revision)
        except KeyWrongLastSequenceError:  # expired and taken by another node
            return None
        except nats.errors.Error as exc:  # not renewed: another node may take it when it expires
            _log.warning("live claim on %s not renewed: %r", name, exc)
            return None

    async def release_live(self, name: str) -> None:
        """Give the live claim up (node stopping)."""
        if self.live is None:
            return
        try:
            await self.live.delete(name)
        except nats.errors.Error as exc:  # already gone, or the broker is: the claim expires anyway
            _log.debug("live claim on %s not released: %r", name, exc)


def trigger_event() -> dict[str, Any]:
    """The ``system.startup.v1`` event bootstrap runs receive as ``context.request.trigger_event``."""
    return {"schema_name": STARTUP_SCHEMA,
            "timestamp": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")}


class Bootstrapper:
    """Runs the bootstrap of a set of tools through ``call`` (the kernel's pipeline)."""

    def __init__(self, call: Caller, locks: BootstrapLocks) -> None:
        self.call = call
        self.locks = locks
        self.results: dict[str, ToolResult | None] = {}
        """Outcome of each ``once`` tool (``None``: another node ran it)."""
        self.runs: dict[str, int] = {}
        """How many times each tool was started on this node."""
        self.started: list[str] = []
        """Tool names in the order they were started on this node."""

    def _request(self, tool: CodeTool) -> ToolRequest:
        bootstrap = tool.document.context.bootstrap
        assert bootstrap is not None
        return ToolRequest(
            id=f"bootstrap-{tool.name}-{uuid.uuid4().hex[:8]}",
            tool=tool.name,
            arguments=dict(bootstrap.input),
            meta={"trigger_event": trigger_event()},
        )

    async def run(self, order: list[CodeTool], task_group: anyio.abc.TaskGroup) -> None:
        """Run ``once`` tools in order and start ``continuous`` ones in ``task_group``."""
        done: dict[str, anyio.Event] = {tool.name: anyio.Event() for tool in order}
        for tool in order:
            bootstrap = tool.document.context.bootstrap
            assert bootstrap is not None
            for other in bootstrap.wait_for:
                if other in done:
                    await done[other].wait()
            if bootstrap.mode == "once":
                if await self.locks.claim_once(tool):
                    self._count(tool.name)
                    result = await self.call(self._request(tool))
                    self.results[tool.name] = result
                    if result.is_error and result.error is not None:
                        _log.warning("bootstrap of %s failed: %s", tool.name, result.error.message)
                else:
                    self.results[tool.name] = None
                done[tool.name].set()
            else:
                # Returns once the first run began (or another node holds the tool): start order stays exact.
                await task_group.start(self._supervise, tool, done[tool.name])

    def _count(self, name: str) -> None:
        self.runs[name] = self.runs.get(name, 0) + 1
        self.started.append(name)

    async def _supervise(
        self, tool: CodeTool, started: anyio.Event, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        reported = False

        def report() -> None:
            nonlocal reported
            started.set()
            if not reported:
                reported = True
                task_status.started()

        try:
            while True:
                revision = await self.locks.claim_live(tool.name)
                if revision is None:
                    # Another node runs it; that counts as started for tools waiting here.
                    report()
                    await anyio.sleep(self.locks.ttl / 2)
                    continue
                async with anyio.create_task_group() as inner:
                    inner.start_soon(self._keep_claim, tool.name, revision, inner.cancel_scope)
                    await self._keep_running(tool, report)
        finally:
            with anyio.CancelScope(shield=True):
                await self.locks.release_live(tool.name)

    async def _keep_running(self, tool: CodeTool, report: Callable[[], None]) -> None:
        backoff = 0.5
        while True:
            self._count(tool.name)
            report()
            began = time.monotonic()
            result = await self.call(self._request(tool))
            if result.is_error and result.error is not None:
                _log.warning("continuous tool %s stopped: %s; restarting in %.1fs",
                             tool.name, result.error.message, backoff)
            if time.monotonic() - began > MAX_BACKOFF:
                backoff = 0.5  # it ran well for a while: start over gently
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    async def _keep_claim(self, name: str, revision: int, scope: anyio.CancelScope) -> None:
        current: int | None = revision
        while current is not None:
            await anyio.sleep(self.locks.ttl / 3)
            current = await self.locks.refresh_live(name, current)
        _log.warning("lost the bootstrap claim on %s; another node runs it now", name)
        scope.cancel()
