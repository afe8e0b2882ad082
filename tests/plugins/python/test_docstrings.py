"""Parameter descriptions from the three common docstring styles."""

from __future__ import annotations

import inspect

import pytest
from toolmesh.plugins.python.docstrings import split_docstring

GOOGLE = """
Search the catalog.

Longer text stays.

Args:
    query (str): words to look for,
        matched case-insensitively
    limit: at most this many results

Returns:
    the matching names
"""

NUMPY = """
Search the catalog.

Longer text stays.

Parameters
----------
query : str
    words to look for,
    matched case-insensitively
limit, offset : int
    paging

Returns
-------
list
    the matching names
"""

SPHINX = """
Search the catalog.

Longer text stays.

:param str query: words to look for,
    matched case-insensitively
:type query: str
:param limit: at most this many results
:returns: the matching names
"""


@pytest.mark.parametrize(
    ("doc", "description", "params"),
    [
        pytest.param(
            GOOGLE,
            "Search the catalog.\n\nLonger text stays.\n\nReturns:\n    the matching names",
            {"query": "words to look for, matched case-insensitively", "limit": "at most this many results"},
            id="google",
        ),
        pytest.param(
            NUMPY,
            "Search the catalog.\n\nLonger text stays.\n\nReturns\n-------\nlist\n    the matching names",
            {"query": "words to look for, matched case-insensitively", "limit": "paging", "offset": "paging"},
            id="numpy",
        ),
        pytest.param(
            SPHINX,
            "Search the catalog.\n\nLonger text stays.\n\n:returns: the matching names",
            {"query": "words to look for, matched case-insensitively", "limit": "at most this many results"},
            id="sphinx",
        ),
        pytest.param("Just one line.", "Just one line.", {}, id="no-parameters"),
        pytest.param("", "", {}, id="empty"),
        pytest.param(
            "Summary.\n\nArgs:\n    flag: on or off\nNot indented: the section ended.",
            "Summary.\n\nNot indented: the section ended.",
            {"flag": "on or off"},
            id="google-section-ends-at-dedent",
        ),
        pytest.param(
            "Summary.\n\nArgs:\n    *values: numbers\n    **options: settings",
            "Summary.",
            {"values": "numbers", "options": "settings"},
            id="google-starred",
        ),
    ],
)
def test_split_docstring(doc: str, description: str, params: dict[str, str]) -> None:
    assert split_docstring(inspect.cleandoc(doc)) == (description, params)
