"""Hypothesis strategies for the wire types of ``toolmesh.contracts``."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from toolmesh.contracts import (
    AudioContent,
    CachePolicy,
    Caller,
    EmbeddedResource,
    ErrorCode,
    ImageContent,
    NodeEntry,
    ResourceLink,
    TextContent,
    ToolAnnotations,
    ToolError,
    ToolEvent,
    ToolExample,
    ToolRequest,
    ToolResult,
    ToolSpec,
)

PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""Settings of the property tests: no per-example deadline, so a slow CI machine cannot make them flaky."""

TOOL_NAMES = st.from_regex(r"[A-Za-z0-9_.\-]{1,128}", fullmatch=True)
"""Every valid MCP tool name."""

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)

JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
JSON_OBJECTS = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4)
_short = st.text(max_size=16)
_finite = st.floats(allow_nan=False, allow_infinity=False)
_optional_meta = st.none() | JSON_OBJECTS

CALLERS = st.builds(
    Caller,
    identity=st.none() | _short,
    agent=st.none() | _short,
    crew=st.none() | _short,
    task=st.none() | _short,
)

REQUESTS = st.builds(
    ToolRequest,
    id=_short,
    tool=st.just("") | TOOL_NAMES,
    arguments=JSON_OBJECTS,
    caller=st.none() | CALLERS,
    timeout=st.none() | st.floats(min_value=0, max_value=1e6),
    deadline=st.none() | st.floats(min_value=0, max_value=4e9),
    cache=st.none() | st.booleans(),
    meta=_optional_meta,
    callback=st.none() | _short,
)

CONTENT_BLOCKS = st.one_of(
    st.builds(TextContent, text=_short, annotations=_optional_meta, meta=_optional_meta),
    st.builds(ImageContent, data=_short, mime_type=st.sampled_from(["image/png", "image/jpeg"])),
    st.builds(AudioContent, data=_short, mime_type=st.just("audio/wav")),
    st.builds(
        ResourceLink,
        uri=_short,
        name=_short,
        title=st.none() | _short,
        description=st.none() | _short,
        mime_type=st.none() | _short,
        size=st.none() | st.integers(min_value=0, max_value=2**40),
    ),
    st.builds(EmbeddedResource, resource=st.fixed_dictionaries({"uri": _short, "text": _short})),
)

ERRORS = st.builds(
    ToolError,
    code=st.sampled_from(ErrorCode),
    message=_short,
    details=_optional_meta,
    retryable=st.booleans(),
    suggestions=st.lists(TOOL_NAMES, max_size=3).map(tuple),
)

RESULTS = st.builds(
    ToolResult,
    id=_short,
    tool=TOOL_NAMES,
    is_error=st.booleans(),
    content=st.lists(CONTENT_BLOCKS, max_size=4),
    structured_content=JSON_VALUES,
    error=st.none() | ERRORS,
    node=st.none() | _short,
    cached=st.booleans(),
    duration_ms=st.none() | st.floats(min_value=0, max_value=1e9),
    result_as_answer=st.booleans(),
)

SPECS = st.builds(
    ToolSpec,
    name=TOOL_NAMES,
    description=_short,
    title=st.none() | _short,
    version=_short,
    tags=st.lists(_short, max_size=3).map(tuple),
    input_schema=st.just({"type": "object", "properties": {"a": {"type": "integer"}}}) | JSON_OBJECTS,
    output_schema=st.none() | JSON_OBJECTS,
    annotations=st.none()
    | st.builds(
        ToolAnnotations,
        title=st.none() | _short,
        read_only_hint=st.none() | st.booleans(),
        destructive_hint=st.none() | st.booleans(),
        idempotent_hint=st.none() | st.booleans(),
        open_world_hint=st.none() | st.booleans(),
    ),
    meta=_optional_meta,
    source=_short,
    task_support=st.sampled_from(["forbidden", "optional", "required"]),
    cache=st.none()
    | st.builds(CachePolicy, enabled=st.booleans(), ttl=st.none() | st.floats(min_value=0, max_value=1e6)),
    timeout=st.none() | st.floats(min_value=0.001, max_value=1e6),
    max_usage_count=st.none() | st.integers(min_value=0, max_value=10**6),
    result_as_answer=st.booleans(),
    required_env=st.lists(_short, max_size=2).map(tuple),
    required_secrets=st.lists(_short, max_size=2).map(tuple),
    examples=st.lists(
        st.builds(ToolExample, input=JSON_OBJECTS, output=JSON_VALUES, description=st.none() | _short),
        max_size=2,
    ).map(tuple),
    available=st.booleans(),
    unavailable_reason=st.none() | _short,
)

EVENTS = st.builds(
    ToolEvent,
    kind=st.sampled_from(["started", "finished", "failed", "cache_hit", "rejected", "progress"]),
    tool=TOOL_NAMES,
    request_id=st.none() | _short,
    node=st.none() | _short,
    timestamp=st.floats(min_value=0, max_value=4e9),
    duration_ms=st.none() | st.floats(min_value=0, max_value=1e9),
    error_code=st.none() | st.sampled_from(ErrorCode),
    attributes=_optional_meta,
)

NODE_ENTRIES = st.builds(
    NodeEntry,
    node=_short,
    host=_short,
    pid=st.integers(min_value=0, max_value=2**31),
    version=_short,
    started_at=_finite,
    heartbeat_at=_finite,
    heartbeat=st.floats(min_value=0.001, max_value=1e4),
    ttl=st.floats(min_value=0.001, max_value=1e4),
    tools=st.lists(SPECS, max_size=3).map(tuple),
    draining=st.booleans(),
)
