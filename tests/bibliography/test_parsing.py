"""Parsing BibTeX block by block: every entry that parses is kept, the rest is reported."""

from __future__ import annotations

import re

import pytest

from bibliography.parsing import parse_bibtex
from tests.conftest import ROOT

ENTRY_LINE = re.compile(r"^\s*@(?!string\b|comment\b|preamble\b)\w+\s*[{(]", re.I | re.M)
KEY = re.compile(r"^\s*@(?!string\b|comment\b|preamble\b)\w+\s*[{(]\s*([^,\s]+)\s*,", re.I | re.M)


@pytest.mark.parametrize("name", ["foundations.bib", "computing.bib"])
def test_demo_bibliographies_parse_completely(name):
    """The demo files keep every entry (counted independently of pybtex) with no report."""
    text = (ROOT / "demo" / "assets" / "bib" / name).read_text()
    result = parse_bibtex(text)
    assert result.problems == []
    assert len(result.entries) == len(ENTRY_LINE.findall(text)) >= 30


@pytest.mark.parametrize("name", ["refs.bib", "survey-refs-02.bib"])
def test_example_site_bibliographies_keep_every_distinct_key(example_site, name):
    """The theme's real files: every distinct key is kept; each repeated key is reported."""
    text = (example_site / "assets" / "bib" / name).read_text()
    keys = KEY.findall(text)
    result = parse_bibtex(text)
    assert {entry.key for entry in result.entries} == set(keys)
    repeats = len(keys) - len(set(keys))
    assert len(result.problems) == repeats
    assert all("duplicate key" in problem.reason for problem in result.problems)


def test_fields_persons_and_source_are_kept():
    """Types are lower-cased, persons split, macros and month names expanded, source kept."""
    text = (
        '@string{jasa = "Journal of the American Statistical Association"}\n'
        "% a comment line\n"
        '@ARTICLE{Gelman1992,\n  author = "Gelman, Andrew and Rubin, Donald B.",\n'
        "  title = {Inference from Iterative Simulation Using {M}ultiple Sequences},\n"
        '  journal = jasa, month = "4~" # mar, year = 1992,\n}\n'
    )
    result = parse_bibtex(text)
    assert result.problems == []
    (entry,) = result.entries
    assert entry.entry_type == "article"
    assert entry.persons["author"] == ["Gelman, Andrew", "Rubin, Donald B."]
    assert entry.fields["journal"] == "Journal of the American Statistical Association"
    assert entry.fields["month"] == "4~March"
    assert entry.fields["title"].endswith("{M}ultiple Sequences")
    assert entry.source.startswith("@ARTICLE{Gelman1992,") and entry.source.endswith("}")
    assert entry.line == 3


@pytest.mark.parametrize(
    ("text", "kept", "line", "reason"),
    [
        # An entry whose braces never close must not swallow the next one.
        ("@article{a, title={x}\n@book{b, title={y}}\n", ["b"], 1, "unbalanced braces"),
        ("@article{a, title={x}}\n@article{a, title={y}}\n", ["a"], 2, "duplicate key"),
        ("@article{A, title={x}}\n@article{a, title={y}}\n", ["A"], 2, "duplicate key"),
        # No key: nothing could cite it, so it is reported and skipped.
        ("@article{, title={x}}\n@book{ok, title={y}}\n", ["ok"], 1, "missing key"),
        ("@article{k, title={x}, title={y}}\n", ["k"], 1, "kept with errors"),
        # pybtex recovers the key but no field: kept, and the author is told.
        ("@article{bad title=}\n@misc{ok, note={n}}\n", ["bad", "ok"], 1, "field value expected"),
    ],
)
def test_malformed_blocks_are_reported_with_their_line(text, kept, line, reason):
    """A malformed block is listed (line, key, reason); its neighbours are kept."""
    result = parse_bibtex(text)
    assert [entry.key for entry in result.entries] == kept
    assert result.problems, "a malformed block must be reported"
    assert result.problems[0].line == line
    assert reason in result.problems[0].reason


def test_comment_and_preamble_blocks_are_not_entries():
    """@comment is skipped, @preamble collected, neither counted as an entry."""
    result = parse_bibtex('@comment{anything {at} all}\n@preamble{"\\newcommand{\\x}{y}"}\n')
    assert result.entries == [] and result.problems == []
    assert result.preamble == ["\\newcommand{\\x}{y}"]


def test_text_with_no_entries_gives_nothing_and_no_error():
    """Prose or an empty file is not an error, just empty."""
    assert parse_bibtex("").entries == []
    assert parse_bibtex("no entries here\n").problems == []
