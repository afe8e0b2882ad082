"""Exceptions used internally for non-local control flow; never escape a function call."""

from __future__ import annotations

from typing import Any


class BreakSignal(Exception):
    __slots__ = ("label", "value")

    def __init__(self, label: str | None, value: Any) -> None:
        self.label = label
        self.value = value


class ContinueSignal(Exception):
    __slots__ = ("label",)

    def __init__(self, label: str | None) -> None:
        self.label = label


class ReturnSignal(Exception):
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value
