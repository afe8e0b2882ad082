"""Environment-variable requirements of tools, checked when a tool is loaded.

A spec lists required variables in ``required_env``; richer declarations
(crewAI's ``EnvVar``: description, required or not, default) go in
``meta["crew"]["env_vars"]``.  A node with the crew plugin marks a tool whose
required variable is missing *unavailable*, with a reason naming the
variable, so agents and ``toolmesh tools`` see why instead of a failing call.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
from toolmesh.contracts import ToolSpec

__all__ = ["EnvVar", "check_env", "env_vars", "with_env_vars"]


@dataclass(frozen=True)
class EnvVar:
    """An environment variable a tool reads: required, or optional with a default."""

    name: str
    description: str = ""
    required: bool = True
    default: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The form stored in ``meta["crew"]["env_vars"]``."""
        data: dict[str, Any] = {"name": self.name, "description": self.description, "required": self.required}
        if self.default is not None:
            data["default"] = self.default
        return data


def env_vars(spec: ToolSpec) -> list[EnvVar]:
    """Every variable a spec declares (``required_env`` plus ``meta["crew"]["env_vars"]``)."""
    declared: dict[str, EnvVar] = {name: EnvVar(name) for name in spec.required_env}
    crew = (spec.meta or {}).get("crew")
    for item in (crew or {}).get("env_vars", ()) if isinstance(crew, dict) else ():
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            declared[item["name"]] = EnvVar(
                name=item["name"],
                description=str(item.get("description", "")),
                required=bool(item.get("required", True)),
                default=item.get("default"),
            )
    return list(declared.values())


def with_env_vars(spec: ToolSpec, variables: Iterable[EnvVar]) -> ToolSpec:
    """``spec`` declaring ``variables`` (required ones also in ``required_env``)."""
    variables = list(variables)
    meta = dict(spec.meta or {})
    crew = dict(meta.get("crew") or {})
    crew["env_vars"] = [variable.as_dict() for variable in variables]
    meta["crew"] = crew
    required = tuple(dict.fromkeys([*spec.required_env, *(v.name for v in variables if v.required)]))
    return msgspec.structs.replace(spec, meta=meta, required_env=required)


def check_env(spec: ToolSpec, environ: Mapping[str, str] | None = None) -> str | None:
    """Why ``spec`` cannot run with ``environ`` (default ``os.environ``), or ``None`` when it can.

    A required variable with a default is satisfied by the default.
    """
    environ = os.environ if environ is None else environ
    missing = [
        variable
        for variable in env_vars(spec)
        if variable.required and variable.default is None and not environ.get(variable.name)
    ]
    if not missing:
        return None
    described = ", ".join(
        f"{variable.name} ({variable.description})" if variable.description else variable.name
        for variable in missing
    )
    return (
        f"environment variable(s) {described} not set on the node serving it; set them and restart the node"
    )
