"""A Python tool declares annotation keys of its own (Anubis style); the catalog lists them beside MCP's hints."""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
import pytest
import toolmesh
from toolmesh import Mesh, Settings, ToolmeshError
from toolmesh.contracts import ToolAnnotations
from toolmesh.testing import running_node

from tests.processes import toolmesh as toolmesh_cli

pytestmark = pytest.mark.anyio

OWN_KEYS = {"confidence": 0.95, "category": "text-processing", "tags": ["nlp", "text"]}


@toolmesh.tool(annotations={"readOnlyHint": True, "idempotentHint": True, **OWN_KEYS})
def word_total(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


@toolmesh.tool(annotations=ToolAnnotations(destructive_hint=True, extra={"owner": "ops", "review": None}))
def purge(bucket: str) -> str:
    """Empty a bucket."""
    return f"{bucket} emptied"


@toolmesh.tool(annotations=ToolAnnotations(read_only_hint=True))
def plain(text: str) -> str:
    """Say it back."""
    return text


def test_a_mapping_becomes_hints_and_own_keys() -> None:
    assert word_total.annotations == ToolAnnotations(read_only_hint=True, idempotent_hint=True, extra=OWN_KEYS)


@pytest.mark.parametrize(
    ("annotations", "named"),
    [
        ({"readOnlyHint": "yes"}, "readOnlyHint"),
        ({"confidence": object()}, "JSON"),
        ({1: "one"}, "string names"),
        (ToolAnnotations(extra={"when": object()}), "JSON"),
        (["readOnlyHint"], "ToolAnnotations or a mapping"),
    ],
)
def test_unusable_annotations_are_refused_when_the_tool_is_declared(annotations: Any, named: str) -> None:
    with pytest.raises(ToolmeshError, match=named) as refused:
        toolmesh.tool(name="rated", annotations=annotations)(lambda: None)
    assert "'rated'" in str(refused.value)


async def test_tools_json_lists_own_keys_beside_the_hints(toolmesh_settings: Settings) -> None:
    settings = toolmesh_settings
    async with (
        running_node(settings, sources=[word_total, purge, plain]),
        Mesh(settings=settings) as mesh,
    ):
        catalog = {spec.name: spec for spec in await mesh.list_tools()}
        listed = await anyio.to_thread.run_sync(
            lambda: toolmesh_cli("tools", "--json", "--nats", str(settings.nats_url), "--prefix", settings.prefix)
        )
        counted = await mesh.call("word_total", {"text": "one two three"}, timeout=10)
    assert catalog["word_total"].annotations == word_total.annotations
    assert catalog["purge"].annotations == purge.annotations
    assert listed.returncode == 0, listed.stderr
    tools = {entry["name"]: entry for entry in json.loads(listed.stdout)}
    assert tools["word_total"]["annotations"] == {"readOnlyHint": True, "idempotentHint": True, **OWN_KEYS}
    assert tools["purge"]["annotations"] == {"destructiveHint": True, "owner": "ops", "review": None}
    assert tools["plain"]["annotations"] == {"readOnlyHint": True}
    assert counted.structured_content == 3
