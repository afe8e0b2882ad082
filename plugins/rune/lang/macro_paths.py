"""Macros called by their path (``std::io::println!``, ``std::test::assert_eq!``): upstream's
macros are items of the std modules, so a path names one as well as its prelude name does."""

from __future__ import annotations

STD_MACROS: dict[tuple[str, ...], str] = {
    ("std", "stringify"): "stringify",
    ("std", "panic"): "panic",
    ("std", "fmt", "format"): "format",
    ("std", "io", "dbg"): "dbg",
    ("std", "io", "print"): "print",
    ("std", "io", "println"): "println",
    ("std", "macros", "builtin", "file"): "file",
    ("std", "macros", "builtin", "line"): "line",
    ("std", "test", "assert"): "assert",
    ("std", "test", "assert_eq"): "assert_eq",
    ("std", "test", "assert_ne"): "assert_ne",
}


def macro_name(names: list[str]) -> str:
    """The macro a path calls; a path naming none is kept whole, for the "unknown macro" error."""
    if len(names) == 1:
        return names[0]
    return STD_MACROS.get(tuple(names), "::".join(names))
