"""NATS subjects of a mesh and the reversible tool-name ↔ subject-token encoding.

Tool names follow MCP rules (1–128 characters of ``A-Za-z0-9_.-``).  A name
without ``.`` is its own token, so ``add`` is served on ``tool.request.add``;
``.`` would split the subject, so it is written ``~`` — a character tool names
cannot contain, which makes decoding exact.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = [
    "DEFAULT_PREFIX",
    "QUEUE_GROUP",
    "TOOL_NAME_PATTERN",
    "InvalidToolName",
    "Subjects",
    "decode_token",
    "encode_token",
    "is_valid_tool_name",
]

DEFAULT_PREFIX = "tool"
"""The first subject token(s) of every mesh subject unless configured otherwise."""

QUEUE_GROUP = "toolmesh"
"""The NATS queue group of every node's request subscriptions: nodes sharing it share the calls."""

TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
"""What a tool name may be (MCP 2025-11-25)."""

_PREFIX_PATTERN = re.compile(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*")
_DOT_ESCAPE = "~"


class InvalidToolName(ValueError):
    """A string that is not a valid MCP tool name was used as one."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"invalid tool name {name!r}: use 1-128 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
        )


def is_valid_tool_name(name: str) -> bool:
    """True when ``name`` follows the MCP tool-name rules."""
    return TOOL_NAME_PATTERN.fullmatch(name) is not None


@functools.lru_cache(maxsize=65536)
def encode_token(name: str) -> str:
    """Encode a tool name as one subject token; raises ``InvalidToolName`` for bad names."""
    if not is_valid_tool_name(name):
        raise InvalidToolName(name)
    return name.replace(".", _DOT_ESCAPE)


def decode_token(token: str) -> str:
    """Invert :func:`encode_token`."""
    name = token.replace(_DOT_ESCAPE, ".")
    if not is_valid_tool_name(name):
        raise InvalidToolName(name)
    return name


@dataclass(frozen=True)
class Subjects:
    """The subjects of one mesh, all under ``prefix`` (default ``tool``)."""

    prefix: str = DEFAULT_PREFIX

    def __post_init__(self) -> None:
        if not _PREFIX_PATTERN.fullmatch(self.prefix):
            raise ValueError(
                f"invalid subject prefix {self.prefix!r}: use dot-separated tokens of A-Z, a-z, 0-9, '_' and '-'"
            )

    def request(self, tool: str) -> str:
        """Where calls of ``tool`` are sent (request-reply, queue group)."""
        return f"{self.prefix}.request.{encode_token(tool)}"

    @property
    def request_wildcard(self) -> str:
        """Matches the request subject of every tool."""
        return f"{self.prefix}.request.*"

    def tool_from_request(self, subject: str) -> str:
        """The tool name a request subject addresses."""
        return decode_token(subject.rsplit(".", 1)[-1])

    @property
    def result_prefix(self) -> str:
        """Inbox prefix of clients: replies arrive on ``<prefix>.result.<client>.<id>``."""
        return f"{self.prefix}.result"

    def event(self, kind: str, tool: str) -> str:
        """Where lifecycle events of ``kind`` for ``tool`` are published."""
        return f"{self.prefix}.event.{kind}.{encode_token(tool)}"

    def events(self, kind: str = "*", tool: str | None = None) -> str:
        """A subscription subject for events, optionally of one kind and/or tool."""
        return f"{self.prefix}.event.{kind}.{encode_token(tool) if tool else '*'}"

    @property
    def cancel(self) -> str:
        """Where callers announce that they gave up on a call (every node listens)."""
        return f"{self.prefix}.cancel"

    def callback(self, client: str, call: str | None = None) -> str:
        """A caller's callback namespace, or with ``call`` a subject in it for ``ToolCallback`` messages.

        A node sends callbacks only to ``<prefix>.callback.<client>.<...>`` where
        ``<client>`` is the client token of the request's reply subject.
        """
        namespace = f"{self.prefix}.callback.{client}"
        return namespace if call is None else f"{namespace}.{call}"

    def catalog_changed(self, node: str) -> str:
        """Published by a node when its tool set changes, joins or leaves."""
        return f"{self.prefix}.catalog.changed.{node}"

    @property
    def catalog_bucket(self) -> str:
        """The JetStream key-value bucket that holds the catalog."""
        return "toolmesh_catalog_" + self.prefix.replace(".", "_")

    def durable(self, tool: str) -> str:
        """Where durable calls of ``tool`` are published (captured by the durable stream)."""
        return f"{self.prefix}.durable.{encode_token(tool)}"

    @property
    def durable_stream(self) -> str:
        """The JetStream work-queue stream that holds durable calls until a node finishes them."""
        return "toolmesh_durable_" + self.prefix.replace(".", "_")

    @property
    def results_bucket(self) -> str:
        """The key-value bucket of durable calls' results, keyed by request id."""
        return "toolmesh_results_" + self.prefix.replace(".", "_")

    @property
    def cache_bucket(self) -> str:
        """The key-value bucket of the shared result cache."""
        return "toolmesh_cache_" + self.prefix.replace(".", "_")
