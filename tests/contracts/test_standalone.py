"""``toolmesh.contracts`` stands alone: a client that wants the wire messages loads nothing of the node."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_LIST_MODULES = "import json, sys\nprint(json.dumps(sorted(sys.modules)))"


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\n{_LIST_MODULES}"], capture_output=True, text=True,
                         check=True).stdout
    return set(json.loads(out))


def test_importing_the_contracts_loads_only_msgspec_and_the_standard_library() -> None:
    baseline = _modules_after("import msgspec")  # msgspec and what it pulls in itself
    added = _modules_after("import toolmesh.contracts") - baseline
    assert "toolmesh.contracts.messages" in added
    foreign = {name.split(".")[0] for name in added if not name.startswith("toolmesh.contracts")}
    assert foreign - set(sys.stdlib_module_names) <= {"toolmesh"}, sorted(added)


@pytest.mark.parametrize("name", ["Mesh", "Kernel", "tool", "ToolmeshError", "hookimpl", "__version__"])
def test_public_names_load_on_first_use(name: str) -> None:
    before = _modules_after("import toolmesh")
    after = _modules_after(f"import toolmesh\nassert toolmesh.{name} is not None")
    assert "toolmesh._pipeline.kernel" not in before and "nats" not in before
    assert name == "__version__" or len(after) > len(before)
