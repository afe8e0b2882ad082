"""Typed error tree for Rune scripts: syntax errors, runtime panics and exhausted limits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from toolmesh import ToolmeshError
from toolmesh.contracts import ErrorCode


@dataclass(frozen=True)
class Frame:
    """One Rune-level stack frame: the function name and where it was executing."""

    function: str
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column} in fn {self.function}"


class RuneError(ToolmeshError):
    """Base of every error a Rune script can raise; carries a Rune source position."""

    code: ClassVar[ErrorCode] = ErrorCode.EXECUTION_FAILED

    def __init__(self, message: str, file: str = "<script>", line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.trace: list[Frame] = []
        # Position of the innermost call site seen while unwinding; builds the Rune trace.
        self.cur: tuple[int, int] | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}: " if self.line else ""
        text = f"{where}{self.message}"
        if self.trace:
            text += "\nstack trace:\n" + "\n".join(f"  {frame}" for frame in reversed(self.trace))
        return text


class RuneSyntaxError(RuneError):
    """The source could not be lexed or parsed; ``snippet`` shows the line with a caret."""

    def __init__(self, message: str, file: str, line: int, column: int, source: str = "") -> None:
        super().__init__(message, file, line, column)
        lines = source.splitlines()
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        self.snippet = f"{text}\n{' ' * max(column - 1, 0)}^"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: syntax error: {self.message}\n{self.snippet}"


class RuneCompileError(RuneError):
    """The program parsed but is invalid (unknown name, misplaced break, ...)."""


class RuneRuntimeError(RuneError):
    """An error raised while running a script (type error, overflow, missing function...)."""


class RunePanic(RuneRuntimeError):
    """The script panicked via ``panic!`` or a failed assertion."""


class RuneLimitError(RuneRuntimeError):
    """A resource cap was hit: recursion depth, the size of one value, or the memory a run allocated."""


class RuneBudgetExceeded(RuneLimitError, TimeoutError):
    """The instruction budget or the run's deadline ran out; a timeout-class error."""

    code: ClassVar[ErrorCode] = ErrorCode.TIMEOUT
