"""Extract the ```rune examples of upstream Rune's std module docs into std_doc_examples.json.

Usage: python tests/plugins/rune/corpus/extract.py RUNE_CHECKOUT [OUT.json [COMMIT]]

RUNE_CHECKOUT is a work tree of rune-rs/rune; COMMIT is recorded when it is not a git work tree
(e.g. an exported archive). The committed corpus was extracted at the commit it records.

Reads ``crates/rune/src/modules/**/*.rs`` of a checkout of rune-rs/rune. Doc comments are ``///``
and ``//!`` lines and ``#[doc = ...]`` attributes; the integer modules (``i64``, ``u64``) are written
as ``macro_rules!`` in ``inner_macros.rs``, so their docs are expanded here the way the macros
expand them (``$n`` is the type name, ``$(#[$section])*`` the doc lines the caller passes).
Fence flags follow upstream's doc test runner: ``no_run``, ``should_panic``, ``ignore``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

FLAGS = ("no_run", "should_panic", "ignore")
_DOC_LINE = re.compile(r"^\s*//[/!](?!/)\s?(.*)$")
_DOC_ATTR = re.compile(r"^\s*#\[doc\s*=\s*(.*)\]\s*$")
_SECTION_REF = re.compile(r"^\s*\$\(#\[\$(\w+)\]\)\*\s*$")
_MODULE_ATTR = re.compile(r"#\[rune::module\(::([\w:]+)\)\]")
_ITEM = re.compile(r"\b(?:fn|struct|enum|trait|type|mod)\s+(\w+)|macro_rules!\s*(\w+)")
_PATH_ATTR = re.compile(r"#\[rune::function\([^\]]*\bpath\s*=\s*([\w:<>]+)")
_BACK_ITEM = re.compile(r"constant\(\s*\"(\w+)\"|\.ty::<(\w+)>|function\(\s*\"(\w+)\"")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _rust_string(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def _doc_attr_text(expr: str, n: str) -> str:
    """The text of ``"..."`` or ``concat!("...", $n, ...)`` with ``$n`` bound to ``n``."""
    expr = expr.strip()
    if expr.startswith("concat!"):
        inner = expr[expr.index("(") + 1 : expr.rindex(")")]
        parts: list[str] = []
        pos = 0
        while pos < len(inner):
            if inner[pos] == '"':
                m = _STRING.match(inner, pos)
                assert m, inner
                parts.append(_rust_string(m.group(1)))
                pos = m.end()
            elif inner.startswith("$n", pos):
                parts.append(n)
                pos += 2
            else:
                pos += 1
        return "".join(parts)
    m = _STRING.match(expr)
    return _rust_string(m.group(1)) if m else ""


def _strip_one_space(text: str) -> str:
    return text.removeprefix(" ")


class _Extractor:
    def __init__(
        self, lines: list[str], module: str, n: str = "", sections: dict[str, list[str]] | None = None
    ) -> None:
        self.lines = lines
        self.module = module
        self.n = n
        self.sections = sections or {}

    def doc_text(self, line: str) -> list[str] | None:
        """The doc lines a source line contributes, or None when it is not documentation."""
        if m := _DOC_LINE.match(line):
            return [m.group(1)]
        if m := _DOC_ATTR.match(line):
            return [_strip_one_space(_doc_attr_text(m.group(1), self.n))]
        if m := _SECTION_REF.match(line):
            out: list[str] = []
            for sub in self.sections.get(m.group(1), []):
                out.extend(self.doc_text(sub) or [])
            return out
        return None

    def item_after(self, index: int) -> str:
        for line in self.lines[index : index + 40]:
            if m := _PATH_ATTR.search(line):
                return m.group(1)
            if self.doc_text(line) is not None or line.strip().startswith("#[") or not line.strip():
                continue
            if m := _ITEM.search(line):
                name = m.group(1) or m.group(2)
                return "(module)" if name == "module" else name
            break
        return "(module)"

    def item_before(self, index: int) -> str | None:
        for line in reversed(self.lines[max(0, index - 6) : index]):
            if m := _BACK_ITEM.search(line):
                return next(g for g in m.groups() if g)
        return None

    def examples(self, source_file: str) -> list[dict]:
        found: list[dict] = []
        block: list[str] | None = None
        flags: list[str] = []
        start = run_start = 0
        in_run = False
        for index, line in enumerate(self.lines):
            texts = self.doc_text(line)
            if texts is None:
                in_run = False
                continue
            if not in_run:
                in_run, run_start = True, index
            for text in texts:
                fence = text.strip()
                if block is None:
                    if fence.startswith("```rune"):
                        tokens = [t.strip() for t in fence[3:].split(",")]
                        flags = [t for t in tokens if t in FLAGS]
                        block, start = [], index
                elif fence.startswith("```"):
                    item = self.item_before(run_start) or self.item_after(index + 1)
                    if _DOC_LINE.match(self.lines[start]) and self.lines[start].lstrip().startswith("//!"):
                        item = "(module)"
                    found.append(
                        {
                            "module": self.module,
                            "item": item,
                            "file": source_file,
                            "line": start + 1,
                            "flags": flags,
                            "source": "\n".join(block) + "\n",
                        }
                    )
                    block = None
                else:
                    block.append(text)
        return found


def _macros(text: str) -> dict[str, str]:
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^macro_rules!\s*(\w+)", text, re.MULTILINE)]
    return {name: text[pos : (starts[i + 1][0] if i + 1 < len(starts) else len(text))]
            for i, (pos, name) in enumerate(starts)}


def _sections(invocation: str) -> dict[str, list[str]]:
    block = invocation[invocation.index("inner $ty") :]
    return {m.group(1): [ln for ln in m.group(2).splitlines() if ln.strip()]
            for m in re.finditer(r"^\s*(\w+) \{\n(.*?)^\s*\},", block, re.MULTILINE | re.DOTALL)}


def _integer_examples(path: Path, rel: str) -> list[dict]:
    macros = _macros(path.read_text())
    # The second arm of unsigned_fns!/signed_fns! calls the inner arm with per-function doc lines.
    inner = macros["unsigned_fns"]
    inner_arm = inner[inner.index("inner $ty:ty") :]
    out: list[dict] = []
    for n, caller in (("i64", "signed_fns"), ("u64", "unsigned_fns")):
        sections = _sections(macros[caller].split("=>", 2)[2] if caller == "signed_fns" else inner)
        for text in (macros["unsigned"], inner_arm):
            out.extend(_Extractor(text.splitlines(), f"std::{n}", n, sections).examples(rel))
        if caller == "signed_fns":
            own = macros["signed_fns"]
            own = own[own.index("to_string {") :]
            out.extend(_Extractor(own.splitlines(), f"std::{n}", n).examples(rel))
    return out


def extract(checkout: Path) -> dict:
    root = checkout / "crates" / "rune" / "src" / "modules"
    examples: list[dict] = []
    for path in sorted(root.rglob("*.rs")):
        rel = path.relative_to(checkout).as_posix()
        if path.name == "inner_macros.rs":
            examples.extend(_integer_examples(path, rel))
            continue
        text = path.read_text()
        m = _MODULE_ATTR.search(text.split("pub mod consts")[0]) or _MODULE_ATTR.search(text)
        fallback = "std::" + path.relative_to(root).with_suffix("").as_posix().replace("/", "::")
        module = m.group(1) if m else fallback
        lines = text.splitlines()
        if path.name == "f64.rs":
            # f64.rs holds std::f64::consts in an inline `mod consts` first.
            cut = next(i for i, ln in enumerate(lines) if ln.startswith("#[rune::module(::std::f64)]"))
            cut = max(i for i in range(cut) if lines[i].startswith("}")) + 1
            examples.extend(_Extractor(lines[:cut], "std::f64::consts").examples(rel))
            examples.extend(_Extractor([""] * cut + lines[cut:], "std::f64").examples(rel))
            continue
        examples.extend(_Extractor(lines, module).examples(rel))
    counters: dict[str, int] = {}
    for example in examples:
        key = f"{example['module']}::{example['item']}"
        counters[key] = counters.get(key, 0) + 1
        example["id"] = f"{key}#{counters[key]}"
    try:
        commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {
        "source": "https://github.com/rune-rs/rune",
        "commit": commit,
        "license": "MIT OR Apache-2.0 (see LICENSE-RUNE-MIT and LICENSE-RUNE-APACHE beside this file)",
        "examples": [{k: e[k] for k in ("id", "module", "item", "file", "line", "flags", "source")}
                     for e in examples],
    }


def main() -> None:
    checkout = Path(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).with_name("std_doc_examples.json")
    corpus = extract(checkout)
    if not corpus["examples"]:
        raise SystemExit(f"no ```rune examples under {checkout}/crates/rune/src/modules: not a rune checkout")
    if corpus["commit"] == "unknown" and len(sys.argv) > 3:
        corpus["commit"] = sys.argv[3]
    out.write_text(json.dumps(corpus, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(corpus['examples'])} examples written to {out}")


if __name__ == "__main__":
    main()
