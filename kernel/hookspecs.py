"""The hook specifications of toolmesh: the one reference for plugin authors.

A plugin is a module or object with functions named like these hooks and
marked with ``@toolmesh.hookimpl``.  An implementation may accept any subset
of a hook's parameters and may return either a value or an awaitable — the
kernel awaits it.  pluggy itself is synchronous, so for a hook that "stops at
the first non-None result" the *returned object* decides: an ``async def``
implementation always returns a coroutine and therefore always wins.  Decide
ownership synchronously (``if spec.source != "mine": return None``) and return
a coroutine only for what you own.

Ordering — one rule for every hook, the kernel's promise: implementations
marked ``tryfirst`` run first, then the unmarked ones in registration order
(the default plugins, then entry points, then plugins given in code, then
``Kernel.register_plugin``), then those marked ``trylast``; each group in
registration order.  (pluggy's own ``pm.hook.<name>(...)`` calls the newest
registration first; the kernel calls every hook through
``Kernel.hooks`` — ``toolmesh._pipeline.hook_calls`` — and so in this order.)  Hence:
pipeline hooks (``toolmesh_tool_spec``, ``toolmesh_before_call``) thread
their output from the first registered to the last; a ``firstresult`` hook
asks the first registered first (the built-in in-process cache marks its
``toolmesh_cache_key`` / ``toolmesh_cache_get`` ``trylast`` so that any
installed plugin overrides it); collected results come in plugin order, and
an implementation's awaitable is awaited before the next one is called.
pluggy wrappers (``wrapper=True``, ``hookwrapper=True``) are refused at
registration.

Duplicate tools — decided by the kernel alone: when several tools share a
name, the first one discovered (plugins in the order above, each plugin's
tools in the order it returned them) is registered and every other is
reported as a problem naming both providers.  ``toolmesh_execute_tool``
receives the chosen spec, and ``kernel.implementation_of(spec.name)`` returns
what its plugin paired with it in ``toolmesh_discover_tools``, so a plugin
never resolves a name itself.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from toolmesh._markers import hookspec

if TYPE_CHECKING:
    import typer
    from toolmesh._pipeline.context import CallContext
    from toolmesh._pipeline.decisions import Decision
    from toolmesh._pipeline.kernel import Kernel
    from toolmesh._pipeline.validation import ValidationIssue
    from toolmesh.contracts import ToolEvent, ToolRequest, ToolResult, ToolSpec


# ---------------------------------------------------------------- discovery


@hookspec
def toolmesh_discover_tools(
    kernel: Kernel, sources: list[str]
) -> list[ToolSpec | tuple[ToolSpec, Any]] | Awaitable[list[ToolSpec | tuple[ToolSpec, Any]]] | None:
    """Return the tools this plugin provides; the results of all plugins are merged.

    :param kernel: the kernel asking (its ``settings`` hold node configuration).
    :param sources: what the node was asked to serve (``toolmesh up`` arguments:
        paths, ``module:attr`` references).  Take the ones you understand and
        ignore the rest; a source no plugin takes is reported to the user.

    Each spec's ``source`` must name your plugin so that
    ``toolmesh_execute_tool`` can find its owner.  An item may be a
    ``(spec, implementation)`` pair: when the kernel chooses that spec,
    ``context.kernel.implementation_of(spec.name)`` returns ``implementation``
    to your ``toolmesh_execute_tool``, so you never look a tool up by name.
    Return ``None`` for none.  Of several tools with one name the kernel keeps
    the first (see the module docstring) and reports the others.
    """


@hookspec
def toolmesh_claim_sources(sources: list[str]) -> list[str] | None:
    """Return the subset of ``sources`` this plugin understands.

    Lets the kernel tell the user about a path or module nobody serves,
    before any tool is loaded.  Synchronous; ``None`` means none.
    """


@hookspec
def toolmesh_tools_changed(kernel: Kernel, tools: list[ToolSpec]) -> Awaitable[None] | None:
    """Notification: the kernel's set of local tools changed; ``tools`` is the new set.

    Called after a plugin asked the kernel to refresh (hot reload, an MCP
    server's ``list_changed``).  The node republishes its catalog entry here.
    """


# ---------------------------------------------------------------- schema


@hookspec
def toolmesh_tool_spec(spec: ToolSpec, kernel: Kernel) -> ToolSpec | None:
    """Adjust a tool's spec before it is registered (description, tags, availability).

    Runs as a pipeline in registration order: each implementation receives the
    spec returned by the previous one; ``None`` keeps it unchanged; the last
    override wins.  Synchronous.
    """


# ---------------------------------------------------------------- validation


@hookspec
def toolmesh_validate_arguments(
    spec: ToolSpec, arguments: dict[str, Any]
) -> list[ValidationIssue] | Awaitable[list[ValidationIssue]] | None:
    """Check call arguments; return every problem found (empty or ``None``: fine).

    All implementations run and their issues are concatenated; any issue fails
    the call with ``invalid_arguments``.  The default implementation checks
    ``spec.input_schema`` (JSON Schema 2020-12) and reports each issue with its
    JSON path.
    """


@hookspec
def toolmesh_validate_result(
    spec: ToolSpec, result: ToolResult
) -> list[ValidationIssue] | Awaitable[list[ValidationIssue]] | None:
    """Check a successful result; any issue turns it into ``execution_failed``.

    The default implementation checks ``result.structured_content`` against
    ``spec.output_schema`` when the tool declares one.
    """


# ---------------------------------------------------------------- decision


@hookspec
def toolmesh_before_call(
    spec: ToolSpec, request: ToolRequest, arguments: dict[str, Any], context: CallContext
) -> Decision | Awaitable[Decision | None] | None:
    """Decide whether and how a call goes on, before its arguments are validated.

    Runs as a pipeline in registration order.  Return
    ``RunNormally(arguments)`` to go on (edited arguments are passed to the
    next implementation), ``Complete(result)`` to answer without executing, or
    ``Reject(reason)`` to refuse; the first ``Complete`` or ``Reject`` stops
    the pipeline.  ``None`` means "run normally, unchanged".
    """


@hookspec
def toolmesh_after_call(
    spec: ToolSpec, request: ToolRequest, result: ToolResult, context: CallContext
) -> Awaitable[None] | None:
    """Notification: a call finished (successfully or not) with ``result``.

    All implementations run; usage counters and audit logs live here.
    """


# ---------------------------------------------------------------- authorization


@hookspec
def toolmesh_authorize(
    identity: str | None, spec: ToolSpec, action: str, kernel: Kernel
) -> bool | Awaitable[bool | None] | None:
    """Decide whether the caller ``identity`` may ``action`` (``"list"`` or ``"call"``) the tool ``spec``.

    :param identity: the caller's identity as the node verified it (a signed
        ``Toolmesh-Identity`` header, see ``toolmesh._pipeline.identity``); ``None`` for an
        anonymous caller.  Never the unverified ``caller.identity`` of a request body.
    :param spec: the tool.
    :param action: ``"call"`` on a node, before the decision hooks; ``"list"``
        when a client filters the catalog (advisory: the catalog is readable by
        every NATS user of the account — enforce with NATS subject permissions).
    :param kernel: the kernel asking (``kernel.settings`` holds the configuration).

    All implementations run; return ``True`` to allow, ``False`` to refuse,
    ``None`` to abstain.  One ``False`` refuses the call with ``rejected``;
    when every implementation abstains the call is allowed.  The built-in
    implementation applies the ``[authorization]`` table of ``toolmesh.toml``.
    """


# ---------------------------------------------------------------- execution


@hookspec(firstresult=True)
def toolmesh_execute_tool(spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> Any:
    """Execute a tool this plugin owns and return its value (usually an awaitable).

    :param spec: the spec the kernel chose for the called name;
        ``context.kernel.implementation_of(spec.name)`` is what your
        ``toolmesh_discover_tools`` paired with it (``None`` for a bare spec).

    Stops at the first non-None result, so return ``None`` synchronously
    unless ``spec.source`` is yours.  The value may be a ``ToolResult``, a list
    of content blocks, or any JSON-able value (it becomes
    ``structured_content`` plus a text block).  Raise a ``ToolCallError``
    subclass for a typed failure; any other exception becomes
    ``execution_failed``.  The kernel enforces the deadline around the call.
    """


# ---------------------------------------------------------------- caching


@hookspec(firstresult=True)
def toolmesh_cache_key(spec: ToolSpec, arguments: dict[str, Any], context: CallContext) -> str | None:
    """Return the cache key of a call; stops at the first non-None result.

    The default is ``tool:{name}|input:{arguments as canonical JSON}``.
    """


@hookspec(firstresult=True)
def toolmesh_cache_get(spec: ToolSpec, key: str) -> ToolResult | Awaitable[ToolResult | None] | None:
    """Return the cached result for ``key``, or ``None`` on a miss.

    Stops at the first non-None result: a cache backend that cannot decide
    synchronously should only answer for the tools it manages.
    """


@hookspec
def toolmesh_cache_put(spec: ToolSpec, key: str, result: ToolResult, ttl: float | None) -> Awaitable[None] | None:
    """Store a result under ``key`` for ``ttl`` seconds (``None``: no expiry)."""


@hookspec
def toolmesh_should_cache(spec: ToolSpec, arguments: dict[str, Any], result: ToolResult) -> bool | None:
    """Veto caching of one result by returning ``False``; ``None`` abstains.

    Only successful results of tools whose ``spec.cache`` is enabled are
    offered.  Synchronous; every implementation runs.
    """


# ---------------------------------------------------------------- lifecycle


@hookspec
def toolmesh_startup(kernel: Kernel) -> Awaitable[None] | None:
    """The kernel is starting (before tools are discovered); open resources here."""


@hookspec
def toolmesh_shutdown(kernel: Kernel) -> Awaitable[None] | None:
    """The kernel is stopping (after in-flight calls finished); release resources."""


@hookspec
def toolmesh_event(event: ToolEvent, kernel: Kernel) -> Awaitable[None] | None:
    """Observe every ``ToolEvent`` this kernel emits (also published on NATS by a node)."""


# ---------------------------------------------------------------- cli


@hookspec
def toolmesh_cli(app: typer.Typer) -> None:
    """Add commands to the ``toolmesh`` command line (e.g. ``app.add_typer(sub, name="rune")``).

    Called before the command line is parsed, except when it names one of the
    kernel's own commands (``up``, ``call``, ...) or ``--version``: plugins add
    commands of their own, they do not change the kernel's.
    """
