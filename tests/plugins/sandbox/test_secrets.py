"""Secrets: only the declared ones reach the tool, missing ones make it unavailable, values never leak."""

from __future__ import annotations

import json

import pytest
from toolmesh.contracts import ToolRequest, encode

pytestmark = pytest.mark.anyio

SECRET = "hunter2-Sup3r-s3cret"
LEAKY = (
    "export function execute(i, ctx) {\n"
    "  console.log('the key is', ctx.secrets.API_KEY);\n"
    "  if (i.fail) throw new Error('bad key ' + ctx.secrets.API_KEY);\n"
    "  return { names: Object.keys(ctx.secrets), length: ctx.secrets.API_KEY.length };\n}\n"
)


async def test_declared_secrets_come_from_the_environment(monkeypatch, write_tool, tool_dir, kernel_for) -> None:
    monkeypatch.setenv("API_KEY", SECRET)
    monkeypatch.setenv("OTHER_SECRET", "not-for-this-tool")
    write_tool("keyed", LEAKY, required_secrets=["API_KEY"])
    async with kernel_for([str(tool_dir)]) as kernel:
        result = await kernel.call(ToolRequest(id="1", tool="keyed"))
    assert result.structured_content == {"names": ["API_KEY"], "length": len(SECRET)}


async def test_secrets_file_with_prefix_free_names(tmp_path, write_tool, tool_dir, kernel_for) -> None:
    secrets_file = tmp_path / "secrets.env"
    secrets_file.write_text(f"# comment\nexport API_KEY='{SECRET}'\n")
    write_tool("keyed", LEAKY, required_secrets=["API_KEY"])
    async with kernel_for([str(tool_dir)], secrets_file=str(secrets_file)) as kernel:
        result = await kernel.call(ToolRequest(id="1", tool="keyed"))
    assert result.structured_content == {"names": ["API_KEY"], "length": len(SECRET)}


async def test_a_missing_secret_makes_the_tool_unavailable(monkeypatch, write_tool, tool_dir, kernel_for) -> None:
    monkeypatch.delenv("API_KEY", raising=False)
    write_tool("keyed", LEAKY, required_secrets=["API_KEY"])
    async with kernel_for([str(tool_dir)]) as kernel:
        spec = kernel.get_tool("keyed")
        result = await kernel.call(ToolRequest(id="1", tool="keyed"))
    assert spec is not None and not spec.available
    assert "API_KEY" in spec.unavailable_reason and "not set" in spec.unavailable_reason
    assert result.error is not None and result.error.code == "unavailable"


async def test_secret_values_never_reach_logs_events_or_errors(monkeypatch, write_tool, tool_dir, kernel_for, caplog) -> None:
    monkeypatch.setenv("API_KEY", SECRET)
    write_tool("keyed", LEAKY, required_secrets=["API_KEY"])
    events = []
    async with kernel_for([str(tool_dir)]) as kernel:
        kernel.add_event_sink(events.append)
        with caplog.at_level("DEBUG"):
            ok = await kernel.call(ToolRequest(id="1", tool="keyed"))
            failed = await kernel.call(ToolRequest(id="2", tool="keyed", arguments={"fail": True}))
    assert ok.is_error is False and failed.error is not None
    assert "bad key [redacted]" in failed.error.message
    everything = "\n".join(
        [caplog.text, encode(failed).decode(), encode(ok).decode(), *(encode(e).decode() for e in events)]
    )
    assert SECRET not in everything
    assert "the key is [redacted]" in caplog.text


async def test_an_unreadable_secrets_file_is_a_clear_config_error(tmp_path, write_tool, tool_dir, kernel_for) -> None:
    import toolmesh

    bad = tmp_path / "secrets.json"
    bad.write_text(json.dumps({"API_KEY": 5}))
    write_tool("keyed", LEAKY, required_secrets=["API_KEY"])
    with pytest.raises(toolmesh.ConfigError) as caught:
        async with kernel_for([str(tool_dir)], secrets_file=str(bad)):
            pass
    assert "not a JSON object of strings" in str(caught.value) and "5" not in str(caught.value).split("json")[-1]
