"""List every item upstream Rune's std modules register into std_items.json.

Usage: python tests/plugins/rune/corpus/extract_std_items.py RUNE_GIT_DIR [COMMIT [OUT.json]]

Reads the sources of rune-rs/rune at COMMIT (default 54fe7cb8) with ``git show``: the module
functions of ``crates/rune/src/modules/**/*.rs`` (each ``#[rune::module(::std::..)]``) and what
they register: ``function_meta`` (the ``#[rune::function(..)]`` attribute of the function decides
the kind: ``instance`` or a ``self`` receiver is a method, ``path = Type::name`` an associated
function, ``protocol = P`` a protocol of the receiver type, else a free function), ``function`` /
``raw_function``, ``constant``, ``macro_meta``, ``associated_function``, ``index_function``, and
what a trait declares or its handler defines (``define_trait`` then ``t.function(..)``,
``cx.function(..)``, ``cx.find_or_define(&Protocol::..)``: methods and protocols every type
implementing the trait gets). The integer modules are written through the ``signed!`` /
``unsigned!`` macros of ``inner_macros.rs`` and ops' ranges through local ``macro_rules!``; both
are expanded here. ``capture_io`` and ``disable_io`` replace ``std::io`` when a host asks for
them and are left out. Each item is ``{module, receiver, item, kind, method}``: ``receiver`` is
the type (or trait) a method, associated function or protocol belongs to, ``method`` the name a
protocol is also callable by (``PARTIAL_EQ`` is ``eq``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

DEFAULT_COMMIT = "54fe7cb8"
_SKIPPED_FILES = ("capture_io.rs", "disable_io.rs")
_MODULE_ATTR = re.compile(r"#\[rune::module\(::([\w:]+)\)\]")
_FN_DEF = re.compile(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:const\s+)?(?:async\s+)?fn\s+(\w+)")
_IMPL = re.compile(r"^\s*impl(?:<[^{]*?>)?\s+(?:[\w:]+\s+for\s+)?([\w:]+)")
_RUNE_ATTR = re.compile(r"#\[rune::(function|macro_)(?:\(([^\]]*)\))?\]")
_PROTOCOL_METHODS = {
    "PARTIAL_EQ": "eq", "PARTIAL_CMP": "partial_cmp", "GT": "gt", "GE": "ge", "LT": "lt", "LE": "le",
    "MAX": "max", "MIN": "min", "CMP": "cmp", "NEXT": "next", "NTH": "nth", "NTH_BACK": "nth_back",
    "SIZE_HINT": "size_hint", "LEN": "len", "NEXT_BACK": "next_back", "CLONE": "clone",
}
_RUST_RECEIVERS = {
    "str": "String", "String": "String", "i64": "i64", "u64": "u64", "f64": "f64", "char": "char",
    "bool": "bool", "Vec": "Vec", "Object": "Object", "Bytes": "Bytes", "OwnedTuple": "Tuple",
    "Tuple": "Tuple", "Function": "Function", "Generator": "Generator", "Stream": "Stream",
    "Ordering": "Ordering", "Type": "Type", "Formatter": "Formatter", "Hasher": "Hasher",
    "ControlFlow": "ControlFlow", "GeneratorState": "GeneratorState", "Self": "Self",
}


def git_show(git_dir: str, commit: str, path: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
        check=True, capture_output=True, text=True,
    ).stdout


def git_files(git_dir: str, commit: str, under: str) -> list[str]:
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit, under],
        check=True, capture_output=True, text=True,
    ).stdout
    return [p for p in out.splitlines() if p.endswith(".rs")]


def _code(line: str) -> str:
    """A line without its comment, strings blanked, so braces can be counted."""
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    line = re.sub(r"'(?:[^'\\]|\\.)'", "''", line)
    return line.split("//", 1)[0]


def _attrs(text: str | None) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in re.split(r",\s*(?![^<]*>)", text or ""):
        key, _, value = part.partition("=")
        if key.strip():
            found[key.strip()] = value.strip().strip('"')
    return found


def _receiver_of(signature: str) -> str | None:
    """The Rune type of a function's first parameter (``this: &str`` is ``String``)."""
    if re.search(r"\(\s*(?:mut\s+)?(?:&\s*(?:mut\s+)?)?self\b", signature):
        return "Self"
    m = re.search(r"\(\s*(?:mut\s+)?\w+\s*:\s*([^,)]*)", signature)
    if not m:
        return None
    ty = re.sub(r"&|\bmut\b|\bRef<|\bMut<|\bdyn\b|'\w+", " ", m.group(1)).strip()
    name = re.match(r"[\w:]+", ty)
    if not name:
        return None
    last = name.group(0).split("::")[-1]
    return None if last == "Value" else _RUST_RECEIVERS.get(last, last)


class Definitions:
    """Every ``#[rune::function]`` / ``#[rune::macro_]`` function: (kind, attributes, receiver, has
    a receiver) by (impl type, name) across files, and by name within each file."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str | None, str], tuple[str, dict[str, str], str | None, bool]] = {}
        self.by_file: dict[str, dict[str, tuple[str, dict[str, str], str | None, bool]]] = {}

    def scan(self, path: str, text: str, substitute: dict[str, str] | None = None) -> None:
        for old, new in (substitute or {}).items():
            text = text.replace(old, new)
        text = re.sub(r"\b(double_ended_)?range_iter!\(\w+,\s*(\w+)<T>,\s*\{", _range_iter_impl, text)
        local = self.by_file.setdefault(path, {})
        lines = text.splitlines()
        impls: list[tuple[str, int]] = []
        depth = 0
        pending: tuple[str, str] | None = None
        opening: str | None = None  # an `impl` whose `{` comes after a `where` clause
        for i, line in enumerate(lines):
            code = _code(line)
            if m := _IMPL.match(code):
                opening = m.group(1).split("::")[-1]
            if opening and "{" in code:
                impls.append((opening, depth))
                opening = None
            elif opening and ";" in code:
                opening = None
            if m := _RUNE_ATTR.search(line):
                pending = (m.group(1), m.group(2) or "")
            elif pending and (m := _FN_DEF.match(code)):
                signature = " ".join(lines[i : i + 6])
                signature = signature[signature.index("fn ") :]
                impl = impls[-1][0] if impls else None
                receiver = _receiver_of(signature)
                has_self = receiver == "Self"
                entry = (pending[0], _attrs(pending[1]), impl if has_self else receiver, has_self)
                self.by_key.setdefault((impl, m.group(1)), entry)
                local.setdefault(m.group(1), entry)
                pending = None
            depth += code.count("{") - code.count("}")
            while impls and depth <= impls[-1][1]:
                impls.pop()

    def find(self, path: str, owner: str | None, name: str) -> tuple[str, dict[str, str], str | None, bool]:
        found = self.by_key.get((owner, name)) if owner else self.by_file.get(path, {}).get(name)
        if found is None:
            raise SystemExit(f"{path}: no definition of {owner}::{name}")
        return found


def _range_iter_impl(m: re.Match[str]) -> str:
    """What runtime/macros.rs's ``range_iter!`` / ``double_ended_range_iter!`` define."""
    text = f"impl {m.group(2)} {{ #[rune::function(instance, keep, protocol = NEXT)]\nfn next(&mut self) {{}}\n"
    if m.group(1):
        text += "#[rune::function(instance, keep, protocol = NEXT_BACK)]\nfn next_back(&mut self) {}\n"
    return text


def _module_bodies(text: str) -> list[tuple[str, str]]:
    """(module path, body text) of each ``#[rune::module(..)]`` function of a file."""
    bodies = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _MODULE_ATTR.search(line)
        if not m:
            continue
        depth, body, started = 0, [], False
        for line2 in lines[i + 1 :]:
            code = _code(line2)
            depth += code.count("{") - code.count("}")
            started = started or "{" in code
            body.append(line2)
            if started and depth <= 0:
                break
        bodies.append((m.group(1), "\n".join(body)))
    return bodies


def _expand_local_macros(body: str) -> str:
    """Expand ``macro_rules! name { ($ty:ident) => { .. }; }`` used inside a module function."""
    for _ in range(3):
        macros = {}
        for m in re.finditer(r"macro_rules!\s*(\w+)\s*\{\s*\(\$(\w+):\w+\)\s*=>\s*\{", body):
            start, depth = m.end(), 1
            pos = start
            while depth and pos < len(body):
                depth += {"{": 1, "}": -1}.get(body[pos], 0)
                pos += 1
            macros[m.group(1)] = (m.group(2), body[start : pos - 1])
        if not macros:
            return body
        for name, (var, text) in macros.items():
            body = re.sub(
                rf"\b{name}!\((\w+)\);",
                lambda call, var=var, text=text: text.replace(f"${var}", call.group(1)),
                body,
            )
    return body


def _integer_macro_body(inner: str, macro: str) -> str:
    """The registrations of ``unsigned!`` (and, for ``signed!``, the ones it adds)."""
    m = re.search(r"macro_rules!\s*unsigned\s*\{.*?\(\$m:ident, \$ty:ty, \$n:expr\)\s*=>\s*\{", inner, re.DOTALL)
    assert m, macro
    body = inner[m.end() : inner.index("\n    };", m.end())]
    if macro == "signed":
        m = re.search(r"macro_rules!\s*signed\s*\{", inner)
        assert m, macro
        body += inner[m.end() : inner.index("\n    };", m.end())]
    return body.replace("$m.", "m.")


def items_of_module(
    file: str, module: str, body: str, defs: Definitions, ty: str | None
) -> list[dict]:
    items: list[dict] = []
    current_type: str | None = None

    def add(item: str, kind: str, receiver: str | None, line: str) -> None:
        entry = {"module": module, "receiver": receiver, "item": item, "kind": kind}
        if kind == "protocol":
            entry["method"] = _PROTOCOL_METHODS.get(item)
        if entry not in items:
            items.append(entry)

    trait: str | None = None
    for line in body.splitlines():
        if m := re.search(r"\bm\.ty::<(\w+)", line):
            current_type = m.group(1)
        if m := re.search(r'define_trait\(\["(\w+)"\]\)', line):
            trait = m.group(1)
        if trait and (m := re.search(r'\bcx\.(?:function|find_or_define)\((?:"(\w+)"|&Protocol::(\w+))', line)):
            # what the trait's handler gives every implementing type: `into_iter`, `NTH`, `LT` ...
            if m.group(1):
                add(m.group(1), "method", trait, line)
            else:
                add(m.group(2), "protocol", trait, line)
            continue
        if trait and (m := re.search(r'\bt\.function\((?:"(\w+)"|Params::new\("(\w+)",\s*\[([^\]]*)\]\))', line)):
            ty_arg = _RUST_RECEIVERS.get(m.group(3).split("::")[0].strip("<> "), "") if m.group(2) else ""
            name = m.group(1) or f"{m.group(2)}::<{ty_arg or m.group(3).split('::')[0].strip('<> ')}>"
            if "$" not in name:  # the definition of a macro_rules! expanded below
                add(name, "method", trait, line)
            continue
        if m := re.search(r"\b(?:m|module)\.function_meta\(([\w:<>]+)\)", line):
            path = re.sub(r"::<\w+>", "", m.group(1))
            *owner, name = path.split("::")
            name = name.removesuffix("__meta")
            what, attrs, receiver, has_self = defs.find(file, owner[-1] if owner else None, name)
            receiver = None if receiver == "Self" else receiver
            receiver = receiver or (owner[-1] if owner else None)
            fn_path = attrs.get("path", "")
            if what == "macro_":
                add(fn_path or name, "macro", None, line)
            elif "protocol" in attrs:
                add(attrs["protocol"], "protocol", receiver or ty, line)
            elif "instance" in attrs or has_self:
                add(fn_path.removeprefix("Self::") or name, "method", receiver or ty, line)
            elif "::" in fn_path and not fn_path.startswith(("to::", "parse::")):
                owner_ty, _, assoc = fn_path.partition("::<")[0].rpartition("::")
                assoc += fn_path[len(owner_ty) + 2 + len(assoc) :]
                owner_ty = owner[-1] if owner_ty == "Self" and owner else owner_ty
                add(assoc, "associated", owner_ty.split("::")[0], line)
            elif owner:
                add(name, "associated", owner[-1], line)
            else:
                add(fn_path or name, "function", None, line)
        elif m := re.search(r'\b(?:m|module)\.(?:function|raw_function)\("(\w+)"', line):
            add(m.group(1), "function", None, line)
        elif m := re.search(r'\bm\.constant\("(\w+)"', line):
            add(m.group(1), "constant", None, line)
        elif m := re.search(r"\b(?:m|module)\.macro_meta\((\w+)\)", line):
            found = defs.find(file, None, m.group(1))
            add(found[1].get("path", m.group(1)), "macro", None, line)
        elif m := re.search(r"\bm\.associated_function\((?:&Protocol::(\w+)|\"(\w+)\"),\s*(\w+)?", line):
            owner_ty = m.group(3) if m.group(3) and m.group(3)[0].isupper() else current_type
            if m.group(1):
                add(m.group(1), "protocol", owner_ty, line)
            else:
                add(m.group(2), "method", owner_ty, line)
        elif m := re.search(r"\bm\.index_function\(", line):
            proto = re.search(r"Protocol::(\w+)", body[body.index(line) :]).group(1)
            receiver = "Option" if module.endswith("option") else "Result"
            add(proto, "protocol", receiver, line)
    return items


def extract(git_dir: str, commit: str) -> list[dict]:
    files = git_files(git_dir, commit, "crates/rune/src/modules") + git_files(git_dir, commit, "crates/rune/src/runtime")
    texts = {p: git_show(git_dir, commit, p) for p in files}
    defs = Definitions()
    for path, text in texts.items():
        if not path.endswith("inner_macros.rs"):
            defs.scan(path, text)
    inner = texts["crates/rune/src/modules/inner_macros.rs"]
    items: list[dict] = []
    for path in sorted(p for p in texts if p.startswith("crates/rune/src/modules/")):
        if path.endswith(_SKIPPED_FILES):
            continue
        for module, body in _module_bodies(texts[path]):
            module = module.removeprefix("std::").join(["std::", ""]) if not module.startswith("std") else module
            ty = module.rsplit("::", 1)[-1]
            file = path
            for macro in ("signed", "unsigned"):
                if m := re.search(rf"\b{macro}!\(m,\s*(\w+)\)", body):
                    file = f"{path}#{macro}"
                    defs.scan(file, inner, {"<$ty>": m.group(1), "$ty": m.group(1)})
                    body = _integer_macro_body(inner, macro)
                    ty = m.group(1)
            receiver = {"string": "String", "vec": "Vec", "object": "Object", "tuple": "Tuple",
                        "option": "Option", "result": "Result", "bytes": "Bytes"}.get(ty, ty)
            items.extend(items_of_module(file, module, _expand_local_macros(body), defs, receiver))
    return items


def main(argv: list[str]) -> None:
    git_dir = argv[1]
    commit = argv[2] if len(argv) > 2 else DEFAULT_COMMIT
    out = Path(argv[3]) if len(argv) > 3 else Path(__file__).with_name("std_items.json")
    items = extract(git_dir, commit)
    out.write_text(json.dumps({"commit": commit, "items": items}, indent=1) + "\n")
    print(f"{len(items)} items -> {out}")


if __name__ == "__main__":
    main(sys.argv)
