"""Open an initialized MCP client session to one configured server, over stdio or Streamable HTTP.

The session's JSON-RPC dispatcher is built here and kept beside it
(:class:`Connection`): a task-augmented ``tools/call`` answers with a
``CreateTaskResult``, which the session's typed API refuses for that method,
so it travels through the dispatcher (see ``remote_tasks``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession, ElicitationFnT, LoggingFnT, MessageHandlerFnT, SamplingFnT
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import Outbound
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from .open_annotations import AnnotatedClientSession
from .server_config import ServerConfig

__all__ = ["CLIENT_INFO", "Connection", "list_all_tools", "open_connection", "open_session"]

CLIENT_INFO = types.Implementation(name="toolmesh", version="0.1.0")
"""How toolmesh introduces itself to MCP servers."""


@dataclass(frozen=True)
class Connection:
    """An initialized session and the JSON-RPC channel under it."""

    session: ClientSession
    outbound: Outbound
    """Sends requests whose results the session's typed API would refuse (task-augmented calls)."""


@asynccontextmanager
async def open_session(
    config: ServerConfig,
    *,
    message_handler: MessageHandlerFnT | None = None,
    logging_callback: LoggingFnT | None = None,
    sampling_callback: SamplingFnT | None = None,
    elicitation_callback: ElicitationFnT | None = None,
) -> AsyncIterator[ClientSession]:
    """Connect to ``config``'s server and run the ``initialize`` handshake; closes everything on exit.

    Stdio servers are started as child processes (stopped on exit); their
    stderr goes to this process's stderr.
    """
    async with open_connection(
        config,
        message_handler=message_handler,
        logging_callback=logging_callback,
        sampling_callback=sampling_callback,
        elicitation_callback=elicitation_callback,
    ) as connection:
        yield connection.session


@asynccontextmanager
async def open_connection(
    config: ServerConfig,
    *,
    message_handler: MessageHandlerFnT | None = None,
    logging_callback: LoggingFnT | None = None,
    sampling_callback: SamplingFnT | None = None,
    elicitation_callback: ElicitationFnT | None = None,
) -> AsyncIterator[Connection]:
    """Like :func:`open_session`, also handing out the session's JSON-RPC channel."""
    async with AsyncExitStack() as stack:
        if config.command:
            parameters = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env={**os.environ, **config.env} if config.env else None,
                cwd=config.cwd,
            )
            read, write = await stack.enter_async_context(stdio_client(parameters, errlog=sys.stderr))
        else:
            assert config.url is not None
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0))
            )
            read, write = await stack.enter_async_context(
                streamable_http_client(config.url, http_client=http)
            )
        options: dict[str, Any] = {}
        if sampling_callback is not None:
            options["sampling_callback"] = sampling_callback
        if elicitation_callback is not None:
            options["elicitation_callback"] = elicitation_callback
        dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
        session = await stack.enter_async_context(
            AnnotatedClientSession(  # keeps the tools' own annotation keys, which the SDK's listing drops
                message_handler=message_handler,
                logging_callback=logging_callback,
                client_info=CLIENT_INFO,
                dispatcher=dispatcher,
                **options,
            )
        )
        with anyio.fail_after(config.connect_timeout):
            await session.initialize()
        yield Connection(session=session, outbound=dispatcher)


async def list_all_tools(session: ClientSession) -> list[types.Tool]:
    """Every tool of the server, following ``nextCursor`` pages."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
