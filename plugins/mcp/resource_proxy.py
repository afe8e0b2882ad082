"""``ResourceProxy``: the gateway serves the resources, prompts and completions of configured MCP servers.

Tools come from the mesh; resources and prompts are not mesh concepts, so the
gateway connects to the ``[mcp.servers.*]`` of its own ``toolmesh.toml`` and
merges what they offer: lists are concatenated, a read, prompt or completion
goes to the server that listed the resource, template or prompt.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

from .client_session import open_session
from .remote_tools import RemoteServer
from .server_config import ServerConfig

__all__ = ["ResourceProxy"]


def _template_pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[^}]+\}", template)
    return re.compile("[^/]+".join(re.escape(part) for part in parts) + r"\Z")


class ResourceProxy:
    """Sessions to MCP servers whose resources, prompts and completions the gateway re-serves."""

    def __init__(self, configs: list[ServerConfig]) -> None:
        self.servers = [RemoteServer(config, lambda: None) for config in configs]
        self._resources: dict[str, RemoteServer] = {}
        self._templates: list[tuple[re.Pattern[str], str, RemoteServer]] = []
        self._prompts: dict[str, RemoteServer] = {}

    def install(self, server: Server[Any]) -> None:
        """Register the resource, prompt and completion handlers on ``server``."""
        server.add_request_handler("resources/list", types.PaginatedRequestParams, self._list_resources)
        server.add_request_handler(
            "resources/templates/list", types.PaginatedRequestParams, self._list_templates
        )
        server.add_request_handler("resources/read", types.ReadResourceRequestParams, self._read)
        server.add_request_handler("resources/subscribe", types.SubscribeRequestParams, self._subscribe)
        server.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, self._unsubscribe)
        server.add_request_handler("prompts/list", types.PaginatedRequestParams, self._list_prompts)
        server.add_request_handler("prompts/get", types.GetPromptRequestParams, self._get_prompt)
        server.add_request_handler("completion/complete", types.CompleteRequestParams, self._complete)

    def start(self) -> None:
        """Start connecting to every server."""
        for remote in self.servers:
            remote.start()

    async def stop(self) -> None:
        """Close every session."""
        for remote in self.servers:
            await remote.stop()

    @asynccontextmanager
    async def _session(self, remote: RemoteServer) -> AsyncIterator[ClientSession]:
        if remote.config.mode == "on-demand":
            async with open_session(remote.config) as session:
                yield session
            return
        with anyio.move_on_after(remote.config.connect_timeout):
            await remote.listed.wait()
        if remote.session is None:
            raise MCPError(types.INTERNAL_ERROR, f"MCP server {remote.config.name!r} is not connected")
        yield remote.session

    async def _gather(self, capability: str, fetch: Any) -> list[Any]:
        """``await fetch(remote, session)`` on every reachable server offering ``capability``, concatenated."""
        found: list[Any] = []
        for remote in self.servers:
            try:
                async with self._session(remote) as session:
                    capabilities = session.server_capabilities
                    if capabilities is None or getattr(capabilities, capability) is not None:
                        found.extend(await fetch(remote, session))
            except MCPError:
                continue
        return found

    # -------------------------------------------------------------- resources

    async def _list_resources(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        async def fetch(remote: RemoteServer, session: ClientSession) -> list[types.Resource]:
            resources: list[types.Resource] = []
            cursor = None
            while True:
                page = await session.list_resources(
                    params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                for resource in page.resources:
                    self._resources[str(resource.uri)] = remote
                resources.extend(page.resources)
                cursor = page.next_cursor
                if not cursor:
                    return resources

        return types.ListResourcesResult(resources=await self._gather("resources", fetch))

    async def _list_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self._templates = []

        async def fetch(remote: RemoteServer, session: ClientSession) -> list[types.ResourceTemplate]:
            page = await session.list_resource_templates()
            for template in page.resource_templates:
                self._templates.append(
                    (_template_pattern(template.uri_template), template.uri_template, remote)
                )
            return page.resource_templates

        return types.ListResourceTemplatesResult(resource_templates=await self._gather("resources", fetch))

    def _owner(self, uri: str) -> RemoteServer | None:
        if uri in self._resources:
            return self._resources[uri]
        for pattern, _, remote in self._templates:
            if pattern.match(uri):
                return remote
        return None

    async def _on_owner(self, uri: str, method: str, params: Any) -> Any:
        owner = self._owner(uri)
        candidates = [owner] if owner is not None else self.servers
        failure: MCPError | None = None
        for remote in candidates:
            try:
                async with self._session(remote) as session:
                    return await getattr(session, method)(params)
            except MCPError as exc:
                failure = exc
        raise failure or MCPError(types.INVALID_PARAMS, f"no configured MCP server offers {uri}")

    async def _read(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return await self._on_owner(str(params.uri), "read_resource", str(params.uri))

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        return await self._on_owner(str(params.uri), "subscribe_resource", str(params.uri))

    async def _unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        return await self._on_owner(str(params.uri), "unsubscribe_resource", str(params.uri))

    # -------------------------------------------------------------- prompts

    async def _list_prompts(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        async def fetch(remote: RemoteServer, session: ClientSession) -> list[types.Prompt]:
            page = await session.list_prompts()
            for prompt in page.prompts:
                self._prompts.setdefault(prompt.name, remote)
            return page.prompts

        return types.ListPromptsResult(prompts=await self._gather("prompts", fetch))

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name not in self._prompts:
            await self._list_prompts(ctx, None)
        remote = self._prompts.get(params.name)
        if remote is None:
            raise MCPError(types.INVALID_PARAMS, f"no prompt named {params.name!r}")
        async with self._session(remote) as session:
            result = await session.get_prompt(params.name, params.arguments)
        if not isinstance(result, types.GetPromptResult):
            raise MCPError(
                types.INTERNAL_ERROR, f"prompt {params.name!r} needs input the gateway cannot relay"
            )
        return result

    async def _complete(self, ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        ref = params.ref
        remote: RemoteServer | None
        if isinstance(ref, types.PromptReference):
            if ref.name not in self._prompts:
                await self._list_prompts(ctx, None)
            remote = self._prompts.get(ref.name)
        else:
            remote = next((owner for _, template, owner in self._templates if template == ref.uri), None)
        if remote is None:
            return types.CompleteResult(completion=types.Completion(values=[]))
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context is not None else None
        async with self._session(remote) as session:
            return await session.complete(ref, argument, context_arguments=context)
