"""Modules name the object that imports them by a protocol, so the ``acyclic`` contract needs no exception.

The pipeline, admission, the durable worker and the MCP task runner are each
imported by the object they work for (the Kernel, the Node, the gateway).  They
describe what they use of it with a ``typing.Protocol`` instead of importing it,
even for annotations only; pyproject's ``acyclic`` contract no longer lists those
cycles as known.  Each case puts the old annotation-only import back and shows
the contract fails on exactly that import.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_boundaries import _installed_layout, _lint_imports

_ANNOTATION_IMPORT = "\nimport typing\nif typing.TYPE_CHECKING:\n    from {module} import {name}\n"
_CYCLES = {
    # the lower module: (the upper module that imports it, a name of the upper module)
    "toolmesh/_pipeline/pipeline.py": ("toolmesh._pipeline.kernel", "Kernel"),
    "toolmesh/_pipeline/authorization.py": ("toolmesh._pipeline.kernel", "Kernel"),
    "toolmesh/_transport/durable.py": ("toolmesh._transport.node", "Node"),
    "toolmesh/plugins/mcp/tasks.py": ("toolmesh.plugins.mcp.gateway", "Gateway"),
}


@pytest.mark.parametrize("lower", list(_CYCLES))
def test_naming_the_importer_for_annotations_breaks_the_acyclic_contract(tmp_path: Path, lower: str) -> None:
    upper, name = _CYCLES[lower]
    module = _installed_layout(tmp_path / "site") / lower
    source = module.read_text()
    module.unlink()  # a private copy of the linked module, so the source tree stays untouched
    module.write_text(source + _ANNOTATION_IMPORT.format(module=upper, name=name))

    run = _lint_imports(tmp_path / "site", "acyclic")

    assert run.returncode == 1, run.stdout + run.stderr
    importer = lower.removesuffix(".py").replace("/", ".")
    shown = {importer.rsplit(".", 1)[1], upper.rsplit(".", 1)[1]}
    broken = run.stdout.split("Broken contracts", 1)[-1]
    assert all(f".{part}" in broken for part in shown), run.stdout
