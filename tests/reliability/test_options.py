"""The reliability options: tool decorator, ToolSpec/ToolRequest fields, settings validation, key mapping."""

from __future__ import annotations

import pytest
import toolmesh
from toolmesh import ConfigError, Settings, ToolDefinitionError
from toolmesh._transport.durable import result_key
from toolmesh.contracts import ToolRequest, ToolSpec, decode_request, encode
from toolmesh.plugins.python import python_tool, spec_for


def test_decorator_options_reach_the_spec() -> None:
    """durable= and max_concurrency= on @toolmesh.tool end up in the ToolSpec."""

    @toolmesh.tool(durable=True, max_concurrency=3)
    def pay(amount: int) -> int:
        return amount

    spec = spec_for(python_tool(pay))
    assert (spec.durable, spec.max_concurrency) == (True, 3)
    assert (ToolSpec(name="x").durable, ToolSpec(name="x").max_concurrency) == (False, None)


def test_decorator_refuses_a_zero_limit() -> None:
    """max_concurrency below 1 is a definition error naming the value and the fix."""
    with pytest.raises(ToolDefinitionError, match=r"max_concurrency=0 .* must be at least 1"):
        toolmesh.tool(name="busy", max_concurrency=0)(lambda: None)


def test_request_durable_field_is_optional_on_the_wire() -> None:
    """Old requests decode (durable unset); the field round-trips and is omitted when unset."""
    assert decode_request(b'{"id": "a", "tool": "t"}').durable is None
    assert b"durable" not in encode(ToolRequest(id="a", tool="t"))
    assert decode_request(encode(ToolRequest(id="a", tool="t", durable=True))).durable is True


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("durable_ack_wait", 0.5),
        ("durable_max_attempts", 0),
        ("durable_result_ttl", 0),
        ("durable_replicas", 7),
        ("shared_cache_max_ttl", -1),
    ],
)
def test_bad_reliability_settings_are_refused(field: str, value: float) -> None:
    """Each reliability setting is checked when Settings is built; the message names it."""
    with pytest.raises(ConfigError, match=field):
        Settings(**{field: value})


def test_result_keys_are_valid_bucket_keys() -> None:
    """A plain id is its own key; anything a bucket key cannot hold is hashed."""
    assert result_key("abc-123_x.y") == "abc-123_x.y"
    for odd in ("with space", "a*b", "x" * 300, "ünïcode", ".leading"):
        key = result_key(odd)
        assert key.startswith("sha256=") and len(key) == 71
