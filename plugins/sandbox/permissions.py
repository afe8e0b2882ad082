"""Sandbox profiles: the permissions and limits a Deno worker process is started with.

Deny by default: no file system, environment, subprocess, FFI, system
information or remote imports, in the process *and* in each tool isolate.
Network is granted only when a tool declares it (``true``: any host; a list:
those hosts).  Tools share a worker process only when their whole profile
(network, heap limit, CPU share) is equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolmesh.contracts.tool_code import ToolCodeContext

__all__ = ["DENIED", "Profile"]

DENIED = ("read", "write", "env", "run", "ffi", "sys", "import")
"""Permissions no tool gets, whatever it declares."""


@dataclass(frozen=True, slots=True)
class Profile:
    """The key of a worker process: tools with equal profiles may share one."""

    network: bool | tuple[str, ...] = False
    memory_mb: int = 128
    cpu_percent: int = 100

    @classmethod
    def of(cls, context: ToolCodeContext) -> Profile:
        """The profile a tool needs."""
        network = context.permissions.network
        if not isinstance(network, bool):
            network = tuple(sorted(set(network))) or False
        return cls(network=network, memory_mb=context.limits.memory_mb, cpu_percent=context.limits.cpu_percent)

    def deno_arguments(self, control_port: int) -> list[str]:
        """``deno run`` flags for a worker process whose supervisor talks to ``control_port``."""
        control = f"127.0.0.1:{control_port}"
        if self.network is True:
            net = "--allow-net"
        elif self.network:
            net = "--allow-net=" + ",".join((control, *self.network))
        else:
            net = f"--allow-net={control}"
        return [
            "run",
            "--no-prompt",
            "--unstable-worker-options",
            "--no-remote",
            "--no-npm",
            "--no-config",
            "--no-lock",
            *[f"--deny-{name}" for name in DENIED],
            net,
            f"--v8-flags=--max-old-space-size={self.memory_mb}",
        ]

    def isolate_permissions(self) -> dict[str, Any]:
        """The ``deno.permissions`` of each tool isolate (a Web Worker) in such a process."""
        permissions: dict[str, Any] = {name: False for name in DENIED}
        permissions["net"] = list(self.network) if isinstance(self.network, tuple) else self.network
        return permissions

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary for tool metadata and logs."""
        return {"network": self.isolate_permissions()["net"], "memory_mb": self.memory_mb,
                "cpu_percent": self.cpu_percent}
