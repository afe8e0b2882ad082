"""Who may list and call which tools: the ``toolmesh_authorize`` hook and the built-in policy.

Every call is admitted by :func:`admit_call` (a pipeline step, before the
decision hooks): it asks every ``toolmesh_authorize`` implementation; one
``False`` refuses the call with ``rejected``.  The identity it passes is the
one the node verified (see :mod:`toolmesh._pipeline.identity`), ``None`` for an
anonymous caller.

The built-in policy is a default plugin configured by ``toolmesh.toml``::

    [authorization]
    anonymous = ["echo", "public.*"]     # callers without a verified identity
    [authorization.identities]
    alice = ["*"]                        # tool-name globs (fnmatch, case-sensitive)
    bob = ["math.*", "search"]
    "*" = ["echo"]                       # any verified identity not listed above

Without an ``[authorization]`` table it abstains and every caller may use
every tool.  With one, what no glob grants is refused.  The same globs decide
both ``list`` and ``call``.

Listing is filtered at the client (:func:`visible_tools`) from the client's
own configuration: the catalog is a key-value bucket every NATS user of the
account can read, so that filter is a courtesy, not a control.  Calls are
enforced on the node, and NATS subject permissions (``ops/nats/permissions.conf``)
enforce at the server.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec
from toolmesh._errors import CallRejected, ConfigError, PayloadTooLarge
from toolmesh._markers import hookimpl
from toolmesh.contracts import ToolSpec

if TYPE_CHECKING:
    from toolmesh._config import Settings
    from toolmesh._pipeline.context import CallContext

__all__ = [
    "Action",
    "AdmittingKernel",
    "AuthorizationPolicy",
    "BuiltinPolicyPlugin",
    "PolicyKernel",
    "admit_call",
    "check_call_allowed",
    "client_identity",
    "visible_tools",
]

Action = Literal["list", "call"]
"""What a caller wants to do with a tool."""

POLICY_TABLE = "authorization"
"""The ``toolmesh.toml`` table of the built-in policy."""

ANY_IDENTITY = "*"
POLICY_STATE = "toolmesh.authorization"
"""Key of the parsed policy in ``Kernel.plugin_state``."""


class AuthorizeHook(Protocol):
    """The hook call admission makes: ``HookCalls.authorize``."""

    async def authorize(self, *, identity: str | None, spec: ToolSpec, action: str) -> str | None: ...


# The kernel loads this module (its policy is a default plugin), so the Kernel is named here by what this
# module reads of it, not imported: a ``Kernel`` satisfies both protocols.
class AdmittingKernel(Protocol):
    """What admission reads of the ``Kernel``: its settings and its ``toolmesh_authorize`` hook."""

    @property
    def settings(self) -> Settings: ...

    @property
    def hooks(self) -> AuthorizeHook: ...


class PolicyKernel(Protocol):
    """What the built-in policy reads of the ``Kernel``: its settings and the per-kernel plugin state."""

    @property
    def settings(self) -> Settings: ...

    @property
    def plugin_state(self) -> dict[str, Any]: ...


def _globs(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"[{where}] must be a list of tool-name globs such as [\"math.*\", \"search\"], got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class AuthorizationPolicy:
    """Tool-name globs per identity; ``anonymous`` for unsigned callers, ``*`` for any other identity."""

    identities: dict[str, tuple[str, ...]] = field(default_factory=dict)
    anonymous: tuple[str, ...] = ()

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> AuthorizationPolicy:
        """Parse the ``[authorization]`` table; raises ``ConfigError`` naming the bad entry."""
        unknown = set(table) - {"identities", "anonymous"}
        if unknown:
            raise ConfigError(
                f"[authorization] has unknown key(s) {', '.join(sorted(unknown))}; known: anonymous, identities"
            )
        identities = table.get("identities", {})
        if not isinstance(identities, dict):
            raise ConfigError("[authorization.identities] must be a table of identity = [globs]")
        return cls(
            identities={
                str(name): _globs(globs, f"authorization.identities.{name}") for name, globs in identities.items()
            },
            anonymous=_globs(table.get("anonymous", []), "authorization.anonymous"),
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> AuthorizationPolicy | None:
        """The policy of ``settings``, or ``None`` when no ``[authorization]`` table is configured."""
        table = settings.plugins.get(POLICY_TABLE)
        return None if table is None else cls.from_table(table)

    def grants(self, identity: str | None) -> tuple[str, ...]:
        """The globs that apply to ``identity``."""
        if identity is None:
            return self.anonymous
        if identity in self.identities:
            return self.identities[identity]
        return self.identities.get(ANY_IDENTITY, ())

    def allows(self, identity: str | None, tool: str) -> bool:
        """True when a glob granted to ``identity`` matches ``tool``."""
        return any(fnmatch.fnmatchcase(tool, glob) for glob in self.grants(identity))


class BuiltinPolicyPlugin:
    """Default plugin: applies the ``[authorization]`` table of the kernel's settings."""

    def policy(self, kernel: PolicyKernel) -> AuthorizationPolicy | None:
        """The parsed policy of ``kernel.settings`` (parsed once per kernel and settings object)."""
        cached = kernel.plugin_state.get(POLICY_STATE)
        if cached is None or cached[0] is not kernel.settings:
            cached = kernel.plugin_state[POLICY_STATE] = (kernel.settings, AuthorizationPolicy.from_settings(kernel.settings))
        return cached[1]

    @hookimpl
    def toolmesh_startup(self, kernel: PolicyKernel) -> None:
        # A broken [authorization] table stops the node at start-up, not at its first call.
        self.policy(kernel)

    @hookimpl
    def toolmesh_authorize(
        self, identity: str | None, spec: ToolSpec, action: str, kernel: PolicyKernel
    ) -> bool | None:
        policy = self.policy(kernel)
        if policy is None:
            return None
        return policy.allows(identity, spec.name)


def _caller_name(identity: str | None) -> str:
    return f"identity {identity!r}" if identity is not None else "an anonymous caller (no signed identity)"


async def is_authorized(
    kernel: AdmittingKernel, identity: str | None, spec: ToolSpec, action: Action
) -> str | None:
    """``None`` when every ``toolmesh_authorize`` implementation allows or abstains, else the refusing plugin."""
    return await kernel.hooks.authorize(identity=identity, spec=spec, action=action)


def _check_argument_sizes(spec: ToolSpec, arguments: dict[str, Any], limit: int) -> None:
    for name, value in arguments.items():
        # A string's character count bounds its UTF-8 size from below: encode only when it might matter.
        if isinstance(value, str) and len(value) * 4 <= limit:
            continue
        size = len(value.encode()) if isinstance(value, str) else len(msgspec.json.encode(value))
        if size > limit:
            raise PayloadTooLarge(
                f"argument {name!r} of tool {spec.name!r} has {size} bytes, over the {limit}-byte"
                " max_argument_size; pass large data by reference (a URL or object-store key)",
                details={"argument": name, "size": size, "limit": limit},
            )


async def check_call_allowed(kernel: AdmittingKernel, identity: str | None, spec: ToolSpec) -> None:
    """Raise ``CallRejected`` unless ``identity`` may call ``spec`` (also before a stored durable result is sent)."""
    refused_by = await is_authorized(kernel, identity, spec, "call")
    if refused_by is not None:
        hint = (
            "grant it a matching glob under [authorization.identities] in the nodes' toolmesh.toml"
            if refused_by == "toolmesh.authorization"
            else f"the plugin {refused_by!r} decides this"
        )
        raise CallRejected(
            f"{_caller_name(identity)} may not call tool {spec.name!r}; {hint}",
            details={"identity": identity, "tool": spec.name, "refused_by": refused_by},
        )


async def admit_call(kernel: AdmittingKernel, spec: ToolSpec, context: CallContext) -> None:
    """Refuse the call (``rejected``/``too_large``) unless the caller may call ``spec`` with these arguments."""
    identity = context.request.caller.identity if context.request.caller is not None else None
    await check_call_allowed(kernel, identity, spec)
    limit = kernel.settings.max_argument_size
    if limit is not None:
        _check_argument_sizes(spec, context.request.arguments, limit)


def client_identity(settings: Settings) -> str | None:
    """The identity a client with ``settings`` acts as: ``identity``, else its NATS user."""
    from toolmesh._config import url_user

    return settings.identity or settings.nats_user or url_user(settings.nats_url)


def visible_tools(settings: Settings, identity: str | None, specs: list[ToolSpec]) -> list[ToolSpec]:
    """The tools ``identity`` may list under the built-in policy of ``settings`` (advisory; see module doc)."""
    policy = AuthorizationPolicy.from_settings(settings)
    if policy is None:
        return specs
    return [spec for spec in specs if policy.allows(identity, spec.name)]
