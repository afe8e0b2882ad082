"""How deeply a JSON document nests arrays and objects, measured on its bytes without recursion.

Code that walks a value recursively — validation, conversion to a tool's
types, encoding, the tool itself — fails somewhere on deep enough input, and
may take the task serving the call with it.  A node therefore measures each
request's nesting on its raw bytes and refuses deep ones before anything walks
them (``max_argument_depth``).

Every step runs at C speed: most documents have no more opening brackets than
the limit and need nothing else; otherwise escapes and strings are dropped
(their brackets are text), the brackets become steps of +1 and -1, and the
highest running sum is the depth.  The whole measure costs less than decoding
the same bytes.
"""

from __future__ import annotations

import operator
from itertools import accumulate, repeat

__all__ = ["nests_deeper_than"]

_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")  # minus one each: +1 opens, -1 closes
_NOT_BRACKET = bytes(byte for byte in range(256) if byte not in b"[]{}")


def nests_deeper_than(document: bytes, limit: int) -> bool:
    """True when the JSON ``document`` nests arrays/objects more than ``limit`` levels deep.

    ``document`` must be valid JSON (decode it first): strings are found by
    their quotes, which only well-formed JSON delimits reliably.
    """
    if document.count(b"[") + document.count(b"{") <= limit:
        return False
    # With every escaped backslash and escaped quote gone, each remaining quote opens or
    # closes a string, so every other piece between quotes is outside all strings.
    unescaped = document.replace(b"\\\\", b"").replace(b'\\"', b"")
    steps = b"".join(unescaped.split(b'"')[::2]).translate(_STEPS, _NOT_BRACKET)
    if b"\x02" * (limit + 1) in steps:
        return True  # the usual attack, found in one scan
    return max(accumulate(map(operator.sub, steps, repeat(1))), default=0) > limit
