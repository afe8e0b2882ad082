"""``tool.code.v1``: a self-contained TypeScript/JavaScript tool, and the breadcrumbs it works with.

A ``tool.code.v1`` document is a breadcrumb whose ``context`` carries a tool's
whole implementation (source, schemas, limits, permissions).  It arrives as a
``*.tool.json`` file or as a message on the mesh; the sandbox plugin runs it in
Deno.  A ``Breadcrumb`` is the shared record (schema_name, title, tags,
context) tools create, read and subscribe to.  Fields are only ever added,
with defaults.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

__all__ = [
    "TOOL_CODE_SCHEMA",
    "TOOL_CODE_TAGS",
    "Breadcrumb",
    "BreadcrumbAccess",
    "BreadcrumbEvent",
    "CodeBootstrap",
    "CodeExample",
    "CodeLimits",
    "CodePermissions",
    "CodeSource",
    "CodeSubscription",
    "ToolCodeContext",
    "ToolCodeDocument",
    "UiConfigField",
    "UiSchema",
]

TOOL_CODE_SCHEMA = "tool.code.v1"
"""The ``schema_name`` of a code tool document."""

TOOL_CODE_TAGS = ("tool", "workspace:tools", "self-contained")
"""Tags every code tool document carries, besides ``tool:{name}``."""

_Name = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.-]+$")]
_SchemaName = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class CodeSource(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, forbid_unknown_fields=True):
    """The implementation: a module exporting ``execute(input, context)``."""

    language: Literal["typescript", "javascript"]
    source: Annotated[str, msgspec.Meta(min_length=1)]


class CodeLimits(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, forbid_unknown_fields=True):
    """Resource limits of one tool: V8 heap (MiB), wall-clock time per call (ms), share of one core (%)."""

    memory_mb: Annotated[int, msgspec.Meta(ge=16, le=16384)] = 128
    timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=3_600_000)] = 30_000
    cpu_percent: Annotated[int, msgspec.Meta(ge=1, le=100)] = 100


class BreadcrumbAccess(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, forbid_unknown_fields=True):
    """Breadcrumb schema names a tool may read and write."""

    read: tuple[_SchemaName, ...] = ()
    write: tuple[_SchemaName, ...] = ()


class CodePermissions(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, forbid_unknown_fields=True):
    """What a tool may reach; everything else is denied.

    ``network`` is ``False`` (none), ``True`` (any host) or a list of hosts
    (``host`` or ``host:port``).
    """

    network: bool | tuple[Annotated[str, msgspec.Meta(min_length=1, pattern=r"^[^\s,/]+$")], ...] = False
    breadcrumbs: BreadcrumbAccess = msgspec.field(default_factory=BreadcrumbAccess)


class CodeExample(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """A sample call that doubles as a self-test: ``input`` must produce ``output``."""

    input: dict[str, Any]
    output: Any = None
    description: str = ""


class UiConfigField(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """One configurable field shown by a user interface."""

    name: str
    type: str = "string"
    label: str | None = None
    description: str | None = None
    default: Any = None
    required: bool = False


class UiSchema(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """Whether and how a user interface lets people configure the tool."""

    configurable: bool = False
    config_fields: tuple[UiConfigField, ...] = ()


class CodeSubscription(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, forbid_unknown_fields=True):
    """Run the tool when a breadcrumb of ``schema_name`` (carrying ``tag``, if given) is created or updated."""

    schema_name: _SchemaName
    tag: str | None = None
    description: str = ""


class CodeBootstrap(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, forbid_unknown_fields=True):
    """Start-up behaviour: ``once`` runs and is awaited, ``continuous`` runs supervised in the background.

    Higher ``priority`` starts first; ``wait_for`` names tools that must have
    completed (``once``) or started (``continuous``) before this one.
    """

    enabled: bool = False
    mode: Literal["once", "continuous", "disabled"] = "disabled"
    priority: Annotated[int, msgspec.Meta(ge=0, le=100)] = 50
    wait_for: tuple[_Name, ...] = ()
    input: dict[str, Any] = msgspec.field(default_factory=dict)


class ToolCodeContext(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, forbid_unknown_fields=True):
    """The tool itself: identity, code, schemas, secrets, limits, permissions and behaviour."""

    name: _Name
    description: Annotated[str, msgspec.Meta(min_length=1)]
    version: Annotated[str, msgspec.Meta(min_length=1)]
    code: CodeSource
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    required_secrets: tuple[Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], ...] = ()
    limits: CodeLimits = msgspec.field(default_factory=CodeLimits)
    permissions: CodePermissions = msgspec.field(default_factory=CodePermissions)
    examples: tuple[CodeExample, ...] = ()
    ui_schema: UiSchema | None = None
    subscriptions: tuple[CodeSubscription, ...] = ()
    bootstrap: CodeBootstrap | None = None


class ToolCodeDocument(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, forbid_unknown_fields=True):
    """A ``tool.code.v1`` document (``*.tool.json`` or a mesh message)."""

    schema_name: Literal["tool.code.v1"]
    title: Annotated[str, msgspec.Meta(min_length=1)]
    tags: tuple[str, ...]
    context: ToolCodeContext


class Breadcrumb(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """A shared record: stored in JetStream and announced per schema when created or updated.

    ``version`` counts updates (1 on creation); times are UNIX seconds.
    """

    id: str
    schema_name: _SchemaName
    title: str = ""
    tags: tuple[str, ...] = ()
    context: dict[str, Any] = msgspec.field(default_factory=dict)
    version: int = 1
    created_at: float = 0.0
    updated_at: float = 0.0


class BreadcrumbEvent(msgspec.Struct, kw_only=True, frozen=True):
    """Published on ``<prefix>.breadcrumb.<schema token>`` when a breadcrumb is created or updated."""

    event: Literal["created", "updated"]
    breadcrumb: Breadcrumb
