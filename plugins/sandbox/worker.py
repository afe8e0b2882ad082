"""``DenoWorker``: one warm Deno process running ``runtime/supervisor.ts`` under one profile.

The supervisor connects back over loopback TCP (never stdin/stdout, which a
tool isolate could reach through ``node:fs``), proves itself with a nonce,
and then exchanges JSON lines: the node loads tools and sends calls; the
supervisor answers with results and relays a tool's requests (``callTool``,
breadcrumbs) for the node to serve.  The listening socket closes as soon as
the supervisor is connected, so no tool can connect to it later.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import secrets
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
from toolmesh import ToolmeshError
from toolmesh.contracts import ErrorCode

from .limits import ResourceWatch, TerminationWatch, process_rss_bytes
from .permissions import Profile

__all__ = ["ISOLATE_MB", "CallOutcome", "DenoWorker", "RequestHandler", "WorkerCrashed", "find_deno"]

_log = logging.getLogger("toolmesh.sandbox.worker")

RequestHandler = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Serves one request of a running tool: ``(kind, args) -> JSON value``; raise to fail it."""

ISOLATE_MB = 16
"""Resident memory allowed per tool isolate, spare or running, besides ``memory_mb`` (a fresh one uses 5-10 MiB)."""

RUNTIME_SLACK_MB = 32
"""Growth allowed to the runtime itself over the most resident memory it held while running no tool code."""

DRAIN_SECONDS = 0.5
"""How long a finished call's allowance lasts: a terminated isolate's memory takes some milliseconds to be freed."""

_MIB = 1024 * 1024

_LINE_LIMIT = 64 * 1024 * 1024
_STDERR_TAIL = 8192
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


class WorkerCrashed(ToolmeshError):
    """The worker process died; ``memory`` is true when it exceeded a memory limit.

    ``unavailable``: the pool replaces the worker, so the same call may succeed again.
    """

    code = ErrorCode.UNAVAILABLE

    def __init__(self, message: str, *, memory: bool = False) -> None:
        super().__init__(message)
        self.memory = memory


@dataclass(slots=True)
class CallOutcome:
    """What the supervisor reported for one call."""

    json: str | None = None
    error: dict[str, Any] | None = None
    logs: list[dict[str, str]] = field(default_factory=list)
    dropped: int = 0
    timing: dict[str, Any] | None = None
    """When Deno received the call, had its isolate ready, posted it and saw it finish (ms since the epoch)."""


def find_deno() -> str | None:
    """Path of the Deno binary from the ``deno`` package (or ``$TOOLMESH_DENO``); ``None`` if not installed."""
    configured = os.environ.get("TOOLMESH_DENO")
    if configured:
        return configured
    try:
        # The PyPI package ships the binary and this finder, but no type information: name the finder's type.
        find_deno_bin: Callable[[], str | os.PathLike[str]] = importlib.import_module("deno").find_deno_bin
    except ImportError:
        return None
    try:
        return os.fspath(find_deno_bin())
    except (OSError, RuntimeError):
        return None


def _runtime_file(name: str) -> Path:
    return Path(str(resources.files("toolmesh.plugins.sandbox").joinpath("runtime", name)))


@cache
def _isolate_source() -> str:
    return _runtime_file("isolate.js").read_text(encoding="utf-8")


def _clean_env() -> dict[str, str]:
    # The node's environment holds secrets: the worker gets only what Deno needs to run.
    keep = {"HOME", "PATH", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR", "LANG"}
    env = {key: value for key, value in os.environ.items() if key in keep}
    env["NO_COLOR"] = "1"
    env["DENO_NO_UPDATE_CHECK"] = "1"
    return env


class DenoWorker:
    """A Deno process hosting tool isolates for one ``Profile``."""

    def __init__(
        self,
        profile: Profile,
        *,
        deno: str,
        log_limit: int,
        max_idle: int,
        rss_base_mb: int,
        max_result: int = 1024 * 1024,
        start_timeout: float = 20.0,
    ) -> None:
        self.profile = profile
        self.deno = deno
        self.log_limit = log_limit
        self.max_idle = max_idle
        self.rss_base = rss_base_mb * 1024 * 1024
        self.max_result = max_result
        self.start_timeout = start_timeout
        self.process: asyncio.subprocess.Process | None = None
        self.loaded: dict[str, str] = {}
        """Tool name -> fingerprint of the source loaded in this process."""
        self.inflight = 0
        self.crashed: WorkerCrashed | None = None
        self.on_exit: Callable[[DenoWorker], None] | None = None
        self.on_recycle: Callable[[DenoWorker], None] | None = None
        self.recycling = False
        """Set when an isolate's code outlived its termination: no new calls; the process ends after its last."""
        self._writer: asyncio.StreamWriter | None = None
        self._calls: dict[str, asyncio.Future[CallOutcome]] = {}
        self._loads: dict[str, tuple[str, asyncio.Future[dict[str, Any] | None]]] = {}
        self._handlers: dict[str, RequestHandler] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stderr = bytearray()
        self._next = 0
        self._watch: ResourceWatch | None = None
        self._exceeded: int | None = None
        self._exceeded_limit = 0
        self._requests: dict[str, set[asyncio.Task[Any]]] = {}
        self._idle_rss = 0
        self._started_rss = 0
        self._recent: list[tuple[float, int]] = []
        """(when, calls in flight) at each call's start and end, for the memory allowance."""
        self._terminations: TerminationWatch | None = None
        self._refused: dict[str, tuple[str, dict[str, Any]]] = {}
        self._exit_watch: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        """True while the process runs and no crash was seen."""
        return self.process is not None and self.process.returncode is None and self.crashed is None

    @property
    def usable(self) -> bool:
        """True while the process takes new calls (alive and not being recycled)."""
        return self.alive and not self.recycling

    @property
    def pid(self) -> int | None:
        """The process id (``None`` before start)."""
        return self.process.pid if self.process else None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start the process and wait until its supervisor is connected."""
        nonce = secrets.token_hex(16)
        connected: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.get_running_loop().create_future()
        )

        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if connected.done():
                writer.close()
                return
            try:
                hello = _decoder.decode(await asyncio.wait_for(reader.readline(), 5.0))
            except (TimeoutError, msgspec.DecodeError, ValueError):
                writer.close()
                return
            if isinstance(hello, dict) and hello.get("nonce") == nonce and not connected.done():
                connected.set_result((reader, writer))
            else:
                writer.close()

        server = await asyncio.start_server(accept, "127.0.0.1", 0, limit=_LINE_LIMIT)
        port = server.sockets[0].getsockname()[1]
        arguments = [*self.profile.deno_arguments(port), str(_runtime_file("supervisor.ts")), str(port), nonce]
        try:
            try:
                self.process = await asyncio.create_subprocess_exec(
                    self.deno,
                    *arguments,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    env=_clean_env(),
                    # Deno.cwd() needs no permission: show a neutral folder, not the node's.
                    cwd=tempfile.gettempdir(),
                    start_new_session=True,
                )
            except OSError as exc:
                raise WorkerCrashed(f"cannot run Deno at {self.deno}: {exc.strerror or exc}") from exc
            self._spawn(self._drain(self.process.stdout, keep=False))
            self._spawn(self._drain(self.process.stderr, keep=True))
            exited = asyncio.ensure_future(self.process.wait())
            waiting: set[asyncio.Future[Any]] = {connected, exited}
            done, _ = await asyncio.wait(waiting, timeout=self.start_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            if connected not in done:
                exited.cancel()
                self.kill()
                detail = self._stderr_tail() or "no output"
                raise WorkerCrashed(f"the Deno worker did not start ({detail})")
            exited.cancel()
        finally:
            server.close()
        reader, self._writer = connected.result()
        self._send({"op": "init", "isolate": _isolate_source(),
                    "log_limit": self.log_limit, "max_idle": self.max_idle,
                    "max_result": self.max_result})
        self._spawn(self._read(reader))
        self._exit_watch = self._spawn(self._wait_exit())
        if self.process.pid is not None:
            self._started_rss = self._idle_rss = process_rss_bytes(self.process.pid) or 0
            self._watch = ResourceWatch(
                self.process.pid,
                cpu_percent=self.profile.cpu_percent,
                rss_limit=self._rss_limit,
                on_exceeded=self._memory_exceeded,
            )
            self._spawn(self._watch.run())
            self._terminations = TerminationWatch(self.process.pid, self._stuck)
            self._spawn(self._terminations.run())

    def _pending_futures(self) -> list[asyncio.Future[Any]]:
        """Every call and load still waiting for the process."""
        return [*self._calls.values(), *(pending[1] for pending in self._loads.values())]

    def kill(self) -> None:
        """Kill the process at once (its calls fail with ``WorkerCrashed``)."""
        if self.process is not None and self.process.returncode is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                try:
                    self.process.kill()
                except ProcessLookupError:
                    pass

    async def close(self) -> None:
        """Stop the process and every task serving it."""
        if self._writer is not None:
            self._writer.close()
        self.kill()
        if self.process is not None:
            try:
                await asyncio.wait_for(self.process.wait(), 5.0)
            except TimeoutError:
                _log.warning("deno worker %s did not exit", self.pid)
        # The pool closes a dead process as soon as it sees it gone, which can be before the exit watcher
        # failed its calls: cancelling the watcher then would leave them waiting for their timeouts.
        watch = self._exit_watch
        if watch is not None and not watch.done() and self.process is not None and self.process.returncode is not None:
            await asyncio.wait({watch}, timeout=1.0)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        stopped = self.crashed or WorkerCrashed("the Deno worker was stopped")
        for future in self._pending_futures():
            if not future.done():
                future.set_exception(stopped)

    # ------------------------------------------------------------------ tools and calls

    async def load(self, name: str, language: str, source: str, fingerprint: str) -> dict[str, Any] | None:
        """Load (or replace) a tool; returns the supervisor's error (name, message) or ``None``."""
        if self.loaded.get(name) == fingerprint:
            return None
        refused = self._refused.get(name)
        if refused is not None and refused[0] == fingerprint:
            return refused[1]  # the same code again: checking it twice would say the same (and may take long)
        self._ensure_alive()
        pending = self._loads.get(name)
        if pending is not None and pending[0] == fingerprint:
            # Concurrent first calls share one load instead of racing the supervisor.
            return await asyncio.shield(pending[1])
        future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._loads[name] = (fingerprint, future)
        self._send({"op": "load", "tool": name, "language": language, "source": source,
                    "permissions": self.profile.isolate_permissions(), "memory_mb": self.profile.memory_mb})
        try:
            error = await asyncio.shield(future)
        finally:
            if self._loads.get(name, (None, None))[1] is future:
                del self._loads[name]
        if error is None:
            self.loaded[name] = fingerprint
            self._refused.pop(name, None)
        else:
            self._refused[name] = (fingerprint, error)
        return error

    def unload(self, name: str) -> None:
        """Drop a tool and its warm isolates (calls in flight finish)."""
        if self.loaded.pop(name, None) is not None and self.alive:
            self._send({"op": "unload", "tool": name})

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout_ms: int,
        secrets: dict[str, str],
        request: dict[str, Any],
        handler: RequestHandler,
    ) -> CallOutcome:
        """Run one call in a fresh isolate, terminated when the call ends (cancelling this coroutine ends it too)."""
        self._ensure_alive()
        self._next += 1
        call_id = str(self._next)
        future: asyncio.Future[CallOutcome] = asyncio.get_running_loop().create_future()
        self._calls[call_id] = future
        self._handlers[call_id] = handler
        self.inflight += 1
        self._recent.append((time.monotonic(), self.inflight))
        if len(self._recent) > 1024:  # pruned by the watchdog's samples too, where /proc exists
            self._recent = self._recent[-512:]
        try:
            self._send({"op": "call", "id": call_id, "tool": tool, "input": arguments, "timeout_ms": timeout_ms,
                        "secrets": secrets, "request": request})
            return await future
        except asyncio.CancelledError:
            if self.alive:
                self._send({"op": "cancel", "id": call_id})
            raise
        finally:
            self._recent.append((time.monotonic(), self.inflight))
            self.inflight -= 1
            self._calls.pop(call_id, None)
            self._handlers.pop(call_id, None)
            # Whatever the call still waits for (a nested callTool, a breadcrumb query) ends with it.
            for task in self._requests.pop(call_id, set()):
                task.cancel()
            if self.recycling and not self._calls:
                self.kill()

    # ------------------------------------------------------------------ internals

    def _ensure_alive(self) -> None:
        if self.crashed is not None:
            raise self.crashed
        if not self.alive:
            raise WorkerCrashed("the Deno worker is not running")

    def _send(self, message: dict[str, Any]) -> None:
        assert self._writer is not None
        self._writer.write(_encoder.encode(message) + b"\n")

    def _spawn(self, coroutine: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _rss_limit(self, rss: int) -> int:
        # The runtime's own size plus, per running call, an isolate and memory_mb.  The runtime's size is
        # learnt while no tool code can run at all: no call in flight or just ended, and every terminated
        # isolate's thread gone.  Calls that just ended keep their allowance until their isolates are freed:
        # the most calls in flight at once over the last DRAIN_SECONDS, not every call that ended then.
        recent = time.monotonic() - DRAIN_SECONDS
        self._recent = [entry for entry in self._recent if entry[0] > recent]
        calls = max([self.inflight, *(count for _, count in self._recent)])
        pending = bool(self._terminations and self._terminations.pending)
        if calls == 0 and not pending:
            self._idle_rss = max(self._idle_rss, rss)
        # Isolates terminated a moment ago may still hold memory (code ignoring its termination is recycled after
        # RETIRE_GRACE): until they are gone they keep one call's allowance, or the learnt size would be too old.
        calls = max(calls, int(pending))
        # Spares of every tool loaded or loading, and the isolate that checks a tool as it loads.
        spares = ISOLATE_MB * (len(self.loaded.keys() | self._loads.keys()) * self.max_idle + 1) * _MIB
        runtime = min(self.rss_base, max(self._idle_rss, self._started_rss + spares) + RUNTIME_SLACK_MB * _MIB)
        return runtime + (self.profile.memory_mb + ISOLATE_MB) * calls * _MIB

    def _memory_exceeded(self, rss: int) -> None:
        self._exceeded = rss
        self._exceeded_limit = self._rss_limit(rss)
        if not self._calls:
            _log.warning("deno worker %s held %d MiB resident with no call in flight; replacing it",
                         self.pid, rss // _MIB)
        self.kill()

    def _stderr_tail(self) -> str:
        return bytes(self._stderr[-_STDERR_TAIL:]).decode("utf-8", "replace").strip()

    async def _drain(self, stream: asyncio.StreamReader | None, *, keep: bool) -> None:
        # Output written straight to the process's stdout/stderr (bypassing the
        # captured console) is bounded here and never parsed.
        if stream is None:
            return
        while chunk := await stream.read(65536):
            if keep:
                self._stderr += chunk
                if len(self._stderr) > 4 * _STDERR_TAIL:
                    del self._stderr[: -_STDERR_TAIL]

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while line := await reader.readline():
                message = _decoder.decode(line)
                op = message.get("op")
                if op == "result":
                    future = self._calls.get(message["id"])
                    if future is not None and not future.done():
                        future.set_result(
                            CallOutcome(json=message.get("json"), error=message.get("error"),
                                        logs=message.get("logs") or [], dropped=message.get("dropped") or 0,
                                        timing=message.get("timing"))
                        )
                elif op == "loaded":
                    pending = self._loads.get(message["tool"])
                    if pending is not None and not pending[1].done():
                        pending[1].set_result(message.get("error"))
                elif op == "request":
                    self._serve_in_background(message)
                elif op == "retired" and self._terminations is not None:
                    self._terminations.retired(int(message["worker"]))
        except (ValueError, msgspec.DecodeError, ConnectionError) as exc:
            _log.warning("deno worker %s broke the protocol: %s", self.pid, exc)
            self.kill()

    def _serve_in_background(self, message: dict[str, Any]) -> None:
        call_id = str(message.get("call"))
        task = asyncio.ensure_future(self._serve_request(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if call_id in self._calls:
            requests = self._requests.setdefault(call_id, set())
            requests.add(task)
            task.add_done_callback(requests.discard)

    async def _serve_request(self, message: dict[str, Any]) -> None:
        call_id = message.get("call")
        handler = self._handlers.get(str(call_id))
        reply: dict[str, Any] = {"op": "reply", "call": call_id, "id": message.get("id")}
        if handler is None:
            reply["error"] = {"name": "Error", "message": "the call has already finished"}
        else:
            try:
                reply["value"] = await handler(str(message.get("kind")), message.get("args") or {})
            except Exception as exc:  # noqa: BLE001 - isolation boundary around host code
                _log.debug("host request %s of call %s failed: %r", message.get("kind"), call_id, exc)
                name = (getattr(exc, "error_name", None) or getattr(getattr(exc, "code", None), "value", None)
                        or type(exc).__name__)
                reply["error"] = {"name": str(name), "message": str(exc)}
        if self.alive:
            self._send(reply)

    def _stuck(self, count: int) -> None:
        self._recycle(f"{count} terminated isolate(s) kept running")

    def _recycle(self, reason: str) -> None:
        self.recycling = True
        _log.warning("deno worker %s is replaced: %s; it ends after its %d call(s) in flight",
                     self.pid, reason, len(self._calls))
        if not self._calls:
            self.kill()
        elif self.on_recycle is not None:
            self.on_recycle(self)

    async def _wait_exit(self) -> None:
        assert self.process is not None
        code = await self.process.wait()
        await asyncio.sleep(0.05)  # let the stderr drain catch the last words
        tail = self._stderr_tail()
        if self._exceeded is not None:
            crash = WorkerCrashed(
                f"the worker process used {self._exceeded // _MIB} MiB resident memory, over its limit of"
                f" {self._exceeded_limit // _MIB} MiB",
                memory=True,
            )
        elif "out of memory" in tail.lower() or "heap limit" in tail.lower():
            crash = WorkerCrashed(
                f"a tool exceeded its V8 heap limit of {self.profile.memory_mb} MiB", memory=True
            )
        else:
            crash = WorkerCrashed(f"the Deno worker process exited with code {code}")
        self.crashed = crash
        for future in self._pending_futures():
            if not future.done():
                future.set_exception(crash)
        if self.on_exit is not None:
            self.on_exit(self)
