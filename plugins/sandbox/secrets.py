"""Secrets of code tools: resolved from the node's secret source, and kept out of every log line.

The source is the node's environment (``NAME``, or ``<env_prefix>NAME``) and,
when configured, a secrets file: a JSON object or ``NAME=value`` lines
(dotenv style).  The file wins over the environment.  A tool receives only
the secrets it declares in ``required_secrets``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec
from toolmesh import ConfigError

__all__ = ["REDACTED", "Redactor", "SecretSource"]

REDACTED = "[redacted]"
"""What a secret value is replaced with in logs, events and errors."""


class SecretSource:
    """Where secret values come from; read again on every lookup so rotation needs no restart."""

    def __init__(self, *, file: str | None = None, env_prefix: str = "", env: Mapping[str, str] | None = None) -> None:
        self.file = Path(file) if file else None
        self.env_prefix = env_prefix
        self._env = env
        self._cached: tuple[tuple[int, int], dict[str, str]] | None = None

    def _file_values(self) -> dict[str, str]:
        if self.file is None:
            return {}
        try:
            stat = self.file.stat()
            # Parsed again only when the file changed: a cheap stat per call, no read.
            stamp = (stat.st_mtime_ns, stat.st_size)
            if self._cached is not None and self._cached[0] == stamp:
                return self._cached[1]
            text = self.file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"sandbox secrets_file {self.file} cannot be read: {exc.strerror or exc}") from exc
        values = self._parse(text)
        self._cached = (stamp, values)
        return values

    def _parse(self, text: str) -> dict[str, str]:
        if text.lstrip().startswith("{"):
            try:
                data = msgspec.json.decode(text, type=dict[str, str])
            except msgspec.DecodeError:
                # The decoder's message may quote the file's content: keep it out, and off the chain.
                raise ConfigError(f"sandbox secrets_file {self.file} is not a JSON object of strings") from None
            return data
        values = {}
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            name, _, value = line.removeprefix("export ").partition("=")
            values[name.strip()] = value.strip().strip("'\"")
        return values

    def resolve(self, names: Iterable[str]) -> tuple[dict[str, str], list[str]]:
        """The values of ``names`` that are set, and the names that are missing."""
        env = os.environ if self._env is None else self._env
        from_file = self._file_values()
        found: dict[str, str] = {}
        missing: list[str] = []
        for name in names:
            value = from_file.get(name, env.get(self.env_prefix + name))
            if value:
                found[name] = value
            else:
                missing.append(name)
        return found, missing


class Redactor:
    """Replace known secret values in text (longest first, so overlapping values are fully hidden)."""

    def __init__(self, values: Iterable[str]) -> None:
        self.values = sorted({value for value in values if value}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text
