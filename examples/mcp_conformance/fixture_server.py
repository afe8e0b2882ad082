"""The resource, prompt and completion fixtures of the MCP conformance suite, as a small stdio MCP server.

``examples/mcp_conformance/toolmesh.toml`` configures it as ``[mcp.servers.fixtures]``;
``toolmesh mcp serve`` proxies its resources, prompts and completions (the
tools of the suite are the ordinary tool set beside this file).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

RED_PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

RESOURCES = [
    types.Resource(
        uri="test://static-text",
        name="static-text",
        description="A static text resource",
        mime_type="text/plain",
    ),
    types.Resource(
        uri="test://static-binary", name="static-binary", description="A 1x1 PNG image", mime_type="image/png"
    ),
    types.Resource(
        uri="test://watched-resource",
        name="watched-resource",
        description="A resource to subscribe to",
        mime_type="text/plain",
    ),
]
TEMPLATES = [
    types.ResourceTemplate(
        uri_template="test://template/{id}/data",
        name="template-data",
        description="Data for an id",
        mime_type="application/json",
    ),
]
PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A prompt without arguments"),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two arguments",
        arguments=[
            types.PromptArgument(name="arg1", description="First test argument", required=True),
            types.PromptArgument(name="arg2", description="Second test argument", required=True),
        ],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt embedding a resource",
        arguments=[
            types.PromptArgument(name="resourceUri", description="URI of the resource", required=True)
        ],
    ),
    types.Prompt(name="test_prompt_with_image", description="A prompt with an image"),
]


async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=RESOURCES)


async def list_templates(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == "test://static-text":
        contents: Any = types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
        )
    elif uri == "test://static-binary":
        contents = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=RED_PIXEL_PNG)
    elif uri == "test://watched-resource":
        contents = types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="Watched resource content."
        )
    elif uri.startswith("test://template/") and uri.endswith("/data"):
        item = uri.removeprefix("test://template/").removesuffix("/data")
        text = json.dumps(
            {"id": item, "templateTest": True, "data": f"Data for ID: {item}"}, separators=(",", ":")
        )
        contents = types.TextResourceContents(uri=uri, mime_type="application/json", text=text)
    else:
        raise ValueError(f"no resource {uri}")
    return types.ReadResourceResult(contents=[contents])


async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


def _user(content: Any) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=content)


async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    arguments = params.arguments or {}
    if params.name == "test_simple_prompt":
        messages = [_user(types.TextContent(text="This is a simple prompt for testing."))]
    elif params.name == "test_prompt_with_arguments":
        text = f"Prompt with arguments: arg1='{arguments.get('arg1')}', arg2='{arguments.get('arg2')}'"
        messages = [_user(types.TextContent(text=text))]
    elif params.name == "test_prompt_with_embedded_resource":
        resource = types.TextResourceContents(
            uri=arguments.get("resourceUri", "test://embedded"),
            mime_type="text/plain",
            text="Embedded resource content for testing.",
        )
        messages = [
            _user(types.EmbeddedResource(resource=resource)),
            _user(types.TextContent(text="Please process the embedded resource above.")),
        ]
    elif params.name == "test_prompt_with_image":
        messages = [
            _user(types.ImageContent(data=RED_PIXEL_PNG, mime_type="image/png")),
            _user(types.TextContent(text="Please analyze the image above.")),
        ]
    else:
        raise ValueError(f"no prompt {params.name}")
    return types.GetPromptResult(messages=messages)


async def complete(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
    words = ["paris", "park", "party"]
    values = [word for word in words if word.startswith(params.argument.value)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


server = Server(
    "conformance-fixtures",
    version="1.0.0",
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
    on_subscribe_resource=subscribe,
    on_unsubscribe_resource=unsubscribe,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_completion=complete,
)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
