"""A .bib with a 1 MB field: kept or refused with a report line, in bounded time,
and the entries around it are kept."""

from __future__ import annotations

import time

import pytest

from bibliography.parsing import MAX_BRACE_GROUPS, parse_bibtex
from bibliography.pybtex_reader import MAX_ENTRY_CHARS, MAX_PERSONS

GOOD = "@misc{good, title={After the big one}}\n"
MB = 1024 * 1024


def _parsed(text: str):
    """Parse, asserting under 5 s of CPU time (the machine running the tests is shared)."""
    start = time.process_time()
    result = parse_bibtex(text)
    assert time.process_time() - start < 5.0
    return result


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("{" + "word " * (MB // 5) + "}", id="braced prose"),
        pytest.param('"' + "a" * MB + '"', id="quoted letters"),
    ],
)
def test_one_megabyte_plain_field_is_kept(value):
    """A 1 MB field of plain text is kept whole, without a report line."""
    result = _parsed("@article{big, abstract = " + value + "}\n" + GOOD)
    assert result.problems == []
    assert [entry.key for entry in result.entries] == ["big", "good"]
    assert len(result.entries[0].fields["abstract"]) >= MB - 5


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("{" + "{" * (MB // 2) + "}" * (MB // 2) + "}", id="nested braces"),
        pytest.param("{" + "{\\'e}" * (MB // 5) + "}", id="accents"),
    ],
)
def test_one_megabyte_field_of_brace_groups_is_refused_with_a_report_line(value):
    """pybtex's work grows with each brace group: past MAX_BRACE_GROUPS the entry is refused
    with its line, key and the reason; the next entry is kept."""
    result = _parsed("@article{big, title = " + value + "}\n" + GOOD)
    assert [entry.key for entry in result.entries] == ["good"]
    (problem,) = result.problems
    assert problem.line == 1 and problem.key == "big"
    assert f"over the limit of {MAX_BRACE_GROUPS:,}" in problem.reason


def test_entry_longer_than_the_entry_limit_is_refused():
    """An entry over MAX_ENTRY_CHARS is not handed to pybtex at all."""
    result = _parsed('@article{big, abstract = "' + "a" * (MAX_ENTRY_CHARS + 1) + '"}\n' + GOOD)
    assert [entry.key for entry in result.entries] == ["good"]
    assert "characters long, over the limit" in result.problems[0].reason


def test_a_megabyte_of_authors_keeps_the_first_names_and_says_so():
    """60,000 names: the first MAX_PERSONS are kept, then "others", and a report line."""
    authors = " and ".join(f"Name{i}, First" for i in range(60_000))
    result = _parsed("@article{big, author = {" + authors + "}}\n" + GOOD)
    assert [entry.key for entry in result.entries] == ["big", "good"]
    names = result.entries[0].persons["author"]
    assert len(names) == MAX_PERSONS + 1 and names[-1] == "others"
    assert names[0] == "Name0, First"
    (problem,) = result.problems
    assert "60,000 names" in problem.reason and problem.key == "big"
