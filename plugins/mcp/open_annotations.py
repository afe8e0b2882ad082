"""MCP models that keep a tool's own annotation keys beside the standard hints.

MCP's ``ToolAnnotations`` is an open object: servers list keys of their own
there (Anubis tools declare ``confidence``, ``category``, ``tags`` …).  The
SDK's models ignore keys they have no field for, so a ``tools/list`` read
through ``types.ListToolsResult``, or a ``Tool`` dumped for the gateway's
listing, loses them.  These subclasses keep them; everything else about the
SDK's models stays as it is.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from pydantic import ConfigDict, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

__all__ = ["AnnotatedClientSession", "AnnotatedListToolsResult", "AnnotatedTool", "OpenToolAnnotations"]


class OpenToolAnnotations(types.ToolAnnotations):
    """``ToolAnnotations`` that also holds (and dumps) the keys MCP's hints do not name."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _keep_own_nulls(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        # exclude_none (the SDK's wire dumps) is meant for unset hints; an own key set to null was sent as such.
        data: dict[str, Any] = handler(self)
        if info.exclude_none:
            data.update({key: None for key, value in (self.model_extra or {}).items() if value is None})
        return data


class AnnotatedTool(types.Tool):
    """A ``Tool`` whose annotations keep the tool's own keys."""

    annotations: OpenToolAnnotations | None = None


class AnnotatedListToolsResult(types.ListToolsResult):
    """A ``tools/list`` result whose tools keep their own annotation keys."""

    tools: list[AnnotatedTool]  # type: ignore[assignment]  # a list of a Tool subclass


class AnnotatedClientSession(ClientSession):
    """A ``ClientSession`` whose ``list_tools`` keeps each tool's own annotation keys.

    Only the model the listing is read into changes: the session still does
    its own bookkeeping of the listing (output schemas for result validation).
    """

    async def send_request(
        self,
        request: types.ClientRequest | types.Request[Any, Any],
        result_type: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """Send ``request`` as the SDK does, reading a ``tools/list`` result into :class:`AnnotatedListToolsResult`."""
        if result_type is types.ListToolsResult:
            result_type = AnnotatedListToolsResult
        return await super().send_request(request, result_type, *args, **kwargs)
