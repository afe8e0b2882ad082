"""``SandboxSettings``: the ``[sandbox]`` table of ``toolmesh.toml`` (``Settings.plugins["sandbox"]``)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from toolmesh import ConfigError

__all__ = ["SandboxSettings"]


class SandboxSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """How the sandbox plugin runs tools; sizes in bytes unless named ``_mb``."""

    workers: int = 1
    """Deno processes kept warm per profile (permission set and limits)."""
    max_idle: int = 2
    """Most spare isolates kept ready per tool in each process (each call uses a fresh one, ended with it)."""
    isolation: Literal["tool", "profile"] = "tool"
    """Processes of its own per tool (``tool``), or shared by tools with equal profiles (``profile``)."""
    burst_workers: int = 1
    """Extra processes a tool may get while its calls come faster than one process starts isolates; 0: none."""
    idle_stop_s: float = 60.0
    """Seconds a tool's processes may go without a call before they stop (the next call starts them); 0: never."""
    log_limit: int = 64 * 1024
    """Console output kept per call; the rest is counted and dropped."""
    rss_base_mb: int = 256
    """Cap on the resident memory allowed to a worker process's runtime (its start-up size + 32 MiB when less)."""
    secrets_file: str | None = None
    """JSON object or ``NAME=value`` lines; wins over the environment."""
    secrets_env_prefix: str = ""
    """Secrets are read from the environment variable ``<prefix>NAME``."""
    strict: bool = False
    """Refuse to start when a document does not conform (instead of serving it as unavailable)."""
    breadcrumbs: Literal["auto", "nats", "memory"] = "auto"
    """Breadcrumb store: JetStream when the node is on NATS (``auto``), or in process memory."""
    mesh_tools: bool = False
    """Also serve ``tool.code.v1`` documents published on the mesh (``toolmesh sandbox publish``)."""
    bootstrap: bool = True
    """Run ``bootstrap`` tools when a node starts."""
    deno: str | None = None
    """Path of the Deno binary; default: the ``deno`` package's."""

    def __post_init__(self) -> None:
        checks = [
            (self.workers >= 1, f"sandbox.workers must be at least 1, got {self.workers}"),
            (self.max_idle >= 0, f"sandbox.max_idle must not be negative, got {self.max_idle}"),
            (self.burst_workers >= 0, f"sandbox.burst_workers must not be negative, got {self.burst_workers}"),
            (self.idle_stop_s >= 0, f"sandbox.idle_stop_s must not be negative (0: never), got {self.idle_stop_s}"),
            (self.log_limit >= 1024, f"sandbox.log_limit must be at least 1024 bytes, got {self.log_limit}"),
            (self.rss_base_mb >= 64, f"sandbox.rss_base_mb must be at least 64, got {self.rss_base_mb}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)

    @classmethod
    def from_table(cls, table: dict[str, Any] | None) -> SandboxSettings:
        """Build from the ``[sandbox]`` table, with a message naming the bad setting."""
        try:
            return msgspec.convert(table or {}, cls, strict=False)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"invalid [sandbox] setting: {exc}") from exc
