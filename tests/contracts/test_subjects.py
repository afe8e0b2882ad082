"""Subject names and the reversible tool-name ↔ subject-token encoding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from toolmesh.contracts import (
    DEFAULT_PREFIX,
    InvalidToolName,
    Subjects,
    decode_token,
    encode_token,
    is_valid_tool_name,
)

from tests.contracts.strategies import PROPERTY, TOOL_NAMES


@PROPERTY
@given(TOOL_NAMES)
def test_token_encoding_is_reversible(name: str) -> None:
    """decode_token inverts encode_token for every valid tool name."""
    assert decode_token(encode_token(name)) == name


@PROPERTY
@given(TOOL_NAMES)
def test_token_is_a_single_subject_token(name: str) -> None:
    """A token never holds a subject separator, a wildcard or whitespace."""
    token = encode_token(name)
    assert token
    assert not {".", "*", ">"} & set(token)
    assert not any(character.isspace() for character in token)


@PROPERTY
@given(st.from_regex(r"[A-Za-z0-9_\-]{1,128}", fullmatch=True))
def test_name_without_dots_is_its_own_token(name: str) -> None:
    """A name of only A-Za-z0-9_- is used as its token unchanged."""
    assert encode_token(name) == name


@PROPERTY
@given(TOOL_NAMES, TOOL_NAMES)
def test_distinct_names_get_distinct_tokens(first: str, second: str) -> None:
    """The encoding is injective: two different names never share a subject."""
    if first != second:
        assert encode_token(first) != encode_token(second)


@PROPERTY
@given(TOOL_NAMES)
def test_request_subject_names_its_tool(name: str) -> None:
    """tool_from_request recovers the tool from the subject request() built."""
    subjects = Subjects()
    assert subjects.tool_from_request(subjects.request(name)) == name


@pytest.mark.parametrize(
    ("name", "subject"),
    [
        ("add", "tool.request.add"),
        ("my-tool_2", "tool.request.my-tool_2"),
        ("github.search", "tool.request.github~search"),
        ("a.b.c", "tool.request.a~b~c"),
    ],
)
def test_request_subject(name: str, subject: str) -> None:
    """Requests go to <prefix>.request.<token> with '.' written as '~'."""
    assert Subjects().request(name) == subject


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a" * 129,
        "has space",
        "star*",
        "gt>",
        "tilde~",
        "slash/x",
        "colon:x",
        "ümlaut",
        "tab\t",
        "new\nline",
    ],
)
def test_invalid_names_raise(name: str) -> None:
    """A string outside the MCP tool-name rules raises InvalidToolName, everywhere a name is taken."""
    assert not is_valid_tool_name(name)
    with pytest.raises(InvalidToolName, match="invalid tool name"):
        encode_token(name)
    with pytest.raises(InvalidToolName):
        Subjects().request(name)


@pytest.mark.parametrize("token", ["", "a b", "a*", "a>", "x" * 129])
def test_invalid_tokens_raise(token: str) -> None:
    """decode_token refuses a token that no valid name encodes to."""
    with pytest.raises(InvalidToolName):
        decode_token(token)


def test_invalid_tool_name_is_a_value_error_naming_the_name() -> None:
    """InvalidToolName is a ValueError that keeps the offending name."""
    with pytest.raises(ValueError) as caught:
        encode_token("no good")
    assert isinstance(caught.value, InvalidToolName)
    assert caught.value.name == "no good"


def test_default_subjects() -> None:
    """The default prefix is 'tool' and every subject lives under it."""
    subjects = Subjects()
    assert subjects.prefix == DEFAULT_PREFIX == "tool"
    assert subjects.request_wildcard == "tool.request.*"
    assert subjects.result_prefix == "tool.result"
    assert subjects.event("started", "a.b") == "tool.event.started.a~b"
    assert subjects.events() == "tool.event.*.*"
    assert subjects.events("failed", "add") == "tool.event.failed.add"
    assert subjects.callback("c1") == "tool.callback.c1"
    assert subjects.catalog_changed("n1") == "tool.catalog.changed.n1"
    assert subjects.catalog_bucket == "toolmesh_catalog_tool"


def test_custom_prefix() -> None:
    """A custom (multi-token) prefix replaces 'tool' in every subject and names its own bucket."""
    subjects = Subjects("acme.mesh-1")
    assert subjects.request("github.search") == "acme.mesh-1.request.github~search"
    assert subjects.tool_from_request("acme.mesh-1.request.github~search") == "github.search"
    assert subjects.request_wildcard == "acme.mesh-1.request.*"
    assert subjects.result_prefix == "acme.mesh-1.result"
    assert subjects.event("finished", "add") == "acme.mesh-1.event.finished.add"
    assert subjects.events("progress") == "acme.mesh-1.event.progress.*"
    assert subjects.callback("x") == "acme.mesh-1.callback.x"
    assert subjects.catalog_changed("n") == "acme.mesh-1.catalog.changed.n"
    assert subjects.catalog_bucket == "toolmesh_catalog_acme_mesh-1"


@pytest.mark.parametrize(
    "prefix", ["", ".", "tool.", ".tool", "a..b", "a b", "tool.*", "tool.>", "a~b", "tab\t"]
)
def test_bad_prefix_rejected(prefix: str) -> None:
    """A prefix that is not dot-separated plain tokens is refused with a message naming it."""
    with pytest.raises(ValueError, match="invalid subject prefix"):
        Subjects(prefix)
