"""``ui_schema`` and its ``config_fields`` reach the catalog as the document gives them, never a secret."""

from __future__ import annotations

import json

import anyio.to_thread
import msgspec
import pytest
from toolmesh import Mesh
from toolmesh.plugins import sandbox
from toolmesh.plugins.sandbox.cli import sandbox_app
from toolmesh.plugins.sandbox.document import check_document
from toolmesh.testing import eventually, running_node
from typer.testing import CliRunner

from tests.processes import toolmesh

from .conftest import document

pytestmark = pytest.mark.anyio

SHOUT = "export function execute(i) { return { text: i.message.toUpperCase() } }"
SECRET_VALUE = "s3cr3t-value-for-the-ui-test"
# Keys the contract does not name (widgets, order, placeholder, options) are part of what a form needs.
UI_SCHEMA = {
    "configurable": True,
    "widgets": {"message": "textarea"},
    "order": ["message", "API_TOKEN"],
    "config_fields": [
        {"name": "message", "label": "Message", "type": "textarea", "required": True,
         "placeholder": "say something", "options": {"rows": 3}},
        {"name": "API_TOKEN", "label": "API token", "type": "secret", "description": "set on the node"},
    ],
}
INPUT = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}


def _settings(toolmesh_settings):
    return msgspec.structs.replace(toolmesh_settings, plugins={"sandbox": {"workers": 1, "max_idle": 1}})


async def test_ui_schema_and_config_fields_are_in_the_catalog_as_written(
    write_tool, tool_dir, toolmesh_settings, monkeypatch
) -> None:
    monkeypatch.setenv("API_TOKEN", SECRET_VALUE)
    write_tool("shout", SHOUT, input_schema=INPUT, required_secrets=["API_TOKEN"], ui_schema=UI_SCHEMA)
    write_tool("plain", SHOUT, input_schema=INPUT)
    settings = _settings(toolmesh_settings)
    async with (
        running_node(settings, sources=[str(tool_dir)], plugins=[sandbox], load_entrypoints=False),
        Mesh(settings=settings) as mesh,
    ):
        listed = {spec.name: spec for spec in await mesh.list_tools()}
        cli = await anyio.to_thread.run_sync(
            lambda: toolmesh("tools", "--json", "--nats", settings.nats_url, "--prefix", settings.prefix)
        )
        called = await mesh.call("shout", {"message": "hi"}, timeout=10)
    assert listed["shout"].available and called.structured_content == {"text": "HI"}
    assert listed["shout"].meta["ui_schema"] == UI_SCHEMA
    assert listed["shout"].meta["config_fields"] == UI_SCHEMA["config_fields"]
    assert "ui_schema" not in listed["plain"].meta and "config_fields" not in listed["plain"].meta
    assert cli.returncode == 0, cli.stderr
    from_cli = {entry["name"]: entry for entry in json.loads(cli.stdout)}
    assert from_cli["shout"]["meta"]["ui_schema"] == UI_SCHEMA
    assert from_cli["shout"]["meta"]["config_fields"] == UI_SCHEMA["config_fields"]
    assert SECRET_VALUE not in cli.stdout
    assert SECRET_VALUE not in msgspec.json.encode(list(listed.values())).decode()


def test_config_fields_without_ui_schema_extras_are_kept_exactly() -> None:
    fields = [{"name": "model", "type": "select", "options": ["a", "b"], "default": "a"}]
    ui_schema = {"configurable": True, "config_fields": fields}
    tool, problems = check_document(document("pick", SHOUT, ui_schema=ui_schema))
    assert problems == [] and tool is not None
    meta = sandbox.service.spec_for(tool).meta
    assert meta["config_fields"] == fields and meta["ui_schema"] == ui_schema
    meta["config_fields"][0]["default"] = "b"  # a client editing its copy does not change the loaded tool
    assert tool.ui_schema is not None and tool.ui_schema["config_fields"][0]["default"] == "a"


@pytest.mark.parametrize(
    ("field", "secrets"),
    [
        pytest.param({"name": "API_TOKEN", "default": SECRET_VALUE}, ["API_TOKEN"], id="a-required-secret"),
        pytest.param({"name": "token", "type": "password", "value": SECRET_VALUE}, [], id="password-type"),
        pytest.param({"name": "token", "type": "Secret", "default": SECRET_VALUE}, [], id="secret-type"),
    ],
)
def test_a_secret_field_with_a_value_is_refused(field: dict, secrets: list[str]) -> None:
    ui_schema = {"configurable": True, "config_fields": [field]}
    data = document("leaky", SHOUT, required_secrets=secrets, ui_schema=ui_schema)
    tool, problems = check_document(data, "leaky.tool.json")
    assert tool is None
    key = "default" if "default" in field else "value"
    assert [problem.path for problem in problems] == [f"$.context.ui_schema.config_fields[0].{key}"]
    assert "must not carry a value" in problems[0].reason and SECRET_VALUE not in problems[0].reason


def test_malformed_ui_schema_is_refused_with_every_path() -> None:
    ui_schema = {"configurable": "yes", "config_fields": [{"label": "no name"}, {"name": "a"}, {"name": "a"}]}
    tool, problems = check_document(document("forms", SHOUT, ui_schema=ui_schema), "forms.tool.json")
    paths = {problem.path for problem in problems}
    assert tool is None
    assert {"$.context.ui_schema.configurable", "$.context.ui_schema.config_fields[0]",
            "$.context.ui_schema.config_fields[2].name"} <= paths


async def test_a_published_document_keeps_its_ui_schema(write_tool, toolmesh_settings) -> None:
    settings = msgspec.structs.replace(toolmesh_settings,
                                       plugins={"sandbox": {"workers": 1, "max_idle": 1, "mesh_tools": True}})
    one_field = {**UI_SCHEMA, "config_fields": UI_SCHEMA["config_fields"][:1]}
    path = write_tool("shout", SHOUT, input_schema=INPUT, ui_schema=one_field)
    async with running_node(settings, plugins=[sandbox], load_entrypoints=False) as node:
        invoked = await anyio.to_thread.run_sync(
            lambda: CliRunner().invoke(sandbox_app, ["publish", str(path), "--nats", settings.nats_url,
                                                     "--prefix", settings.prefix]))
        assert invoked.exit_code == 0, invoked.output
        spec = await eventually(lambda: node.kernel.get_tool("shout"), what="published tool served")
    assert spec.meta["ui_schema"] == one_field
    assert spec.meta["config_fields"] == one_field["config_fields"]
