"""toolmesh wire contracts: the messages, subjects and error codes of the mesh.

Nothing here imports the kernel or a plugin; any client can depend on it alone.
"""

from .catalog import NodeEntry
from .codec import (
    decode_callback,
    decode_cancel,
    decode_event,
    decode_node_entry,
    decode_request,
    decode_result,
    encode,
)
from .content import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from .errors import RETRYABLE_CODES, ErrorCode
from .messages import Caller, CancelRequest, ToolCallback, ToolError, ToolEvent, ToolRequest, ToolResult
from .spec import CachePolicy, TaskSupport, ToolAnnotations, ToolExample, ToolSpec
from .subjects import (
    DEFAULT_PREFIX,
    InvalidToolName,
    Subjects,
    decode_token,
    encode_token,
    is_valid_tool_name,
)
from .tool_code import (
    TOOL_CODE_SCHEMA,
    TOOL_CODE_TAGS,
    Breadcrumb,
    BreadcrumbAccess,
    BreadcrumbEvent,
    CodeBootstrap,
    CodeExample,
    CodeLimits,
    CodePermissions,
    CodeSource,
    CodeSubscription,
    ToolCodeContext,
    ToolCodeDocument,
    UiConfigField,
    UiSchema,
)

__all__ = (
    "DEFAULT_PREFIX",
    "RETRYABLE_CODES",
    "TOOL_CODE_SCHEMA",
    "TOOL_CODE_TAGS",
    "AudioContent",
    "Breadcrumb",
    "BreadcrumbAccess",
    "BreadcrumbEvent",
    "CachePolicy",
    "Caller",
    "CancelRequest",
    "CodeBootstrap",
    "CodeExample",
    "CodeLimits",
    "CodePermissions",
    "CodeSource",
    "CodeSubscription",
    "ContentBlock",
    "EmbeddedResource",
    "ErrorCode",
    "ImageContent",
    "InvalidToolName",
    "NodeEntry",
    "ResourceLink",
    "Subjects",
    "TaskSupport",
    "TextContent",
    "ToolAnnotations",
    "ToolCallback",
    "ToolCodeContext",
    "ToolCodeDocument",
    "ToolError",
    "ToolEvent",
    "ToolExample",
    "ToolRequest",
    "ToolResult",
    "ToolSpec",
    "UiConfigField",
    "UiSchema",
    "decode_callback",
    "decode_cancel",
    "decode_event",
    "decode_node_entry",
    "decode_request",
    "decode_result",
    "decode_token",
    "encode",
    "encode_token",
    "is_valid_tool_name",
)
