"""bibliography.formatting: a numbered list's new entries are formatted in slices at once, one
per core, and read exactly as formatted in one call."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from bibliography import formatting
from bibliography.formatting import EntryData, format_references
from scidraft.markup import jsengine


def _forget_formatted() -> None:
    formatting.format_cache_clear()
    cache.clear()  # the shared cache keeps formatted entries too


def _articles(count: int) -> list[EntryData]:
    return [
        EntryData(
            key=f"k{number:03d}",
            entry_type="article",
            fields={
                "title": f"Spectral bounds for graphs of order {number}",
                "journal": "Journal of Graph Theory",
                "year": str(1990 + number % 30),
                "volume": str(number + 1),
                "pages": f"{number + 100}--{number + 119}",
            },
            persons={"author": [f"Author{number}, Ann B.", "Second, Bob", "van der Berg, Cleo"]},
        )
        for number in range(count)
    ]


@pytest.mark.parametrize(
    ("entries", "at_once", "sizes"),
    [
        (50, 2, [25, 25]),
        (15, 2, [15]),  # two slices of fewer than SLICE_MIN would cost more than they save
        (20, 2, [10, 10]),
        (120, 2, [50, 50, 20]),  # never more than BATCH in one call
        (50, 1, [50]),
        (7, 4, [7]),
    ],
)
def test_slices_are_even_bounded_and_keep_the_order(monkeypatch, entries, at_once, sizes):
    monkeypatch.setattr(jsengine, "CITATION_CALLS_AT_ONCE", at_once)
    articles = _articles(entries)
    slices = formatting._slices(articles)
    assert [len(part) for part in slices] == sizes
    assert [data for part in slices for data in part] == articles


def test_a_list_formatted_in_slices_reads_as_formatted_in_one_call(monkeypatch):
    """Numbered entries do not depend on each other: the slices' HTML, order and numbering
    are those of one call over the whole list."""
    articles = _articles(30)
    monkeypatch.setattr(jsengine, "CITATION_CALLS_AT_ONCE", 1)
    _forget_formatted()
    whole = format_references(articles, "vancouver")

    calls = []
    at_once = jsengine.call_citations_at_once

    def counted(function, arg_lists, **kwargs):
        calls.append(len(arg_lists))
        return at_once(function, arg_lists, **kwargs)

    monkeypatch.setattr(jsengine, "CITATION_CALLS_AT_ONCE", 2)
    monkeypatch.setattr(jsengine, "call_citations_at_once", counted)
    _forget_formatted()
    sliced = format_references(articles, "vancouver")

    assert calls == [2]
    assert sliced.problems == whole.problems == {}
    assert sliced.order == whole.order == [data.key for data in articles]
    assert sliced.entries == whole.entries
    assert "Author29 AB, Second B, van der Berg C." in sliced.entries["k029"]


def test_a_slice_that_fails_shows_its_entries_raw_and_the_others_formatted(monkeypatch):
    """One slice's call failing (stopped, out of memory) costs only its own entries."""
    articles = _articles(20)
    monkeypatch.setattr(jsengine, "CITATION_CALLS_AT_ONCE", 2)
    at_once = jsengine.call_citations_at_once

    def second_fails(function, arg_lists, **kwargs):
        outcomes = at_once(function, arg_lists, **kwargs)
        return [outcomes[0], jsengine.JSError("used too much memory and was stopped")]

    monkeypatch.setattr(jsengine, "call_citations_at_once", second_fails)
    _forget_formatted()
    formatted = format_references(articles, "vancouver")
    assert set(formatted.problems) == {data.key for data in articles[10:]}
    assert all("too much memory" in problem for problem in formatted.problems.values())
    assert "<code>k015</code>" in formatted.entries["k015"]
    assert "Journal of Graph Theory" in formatted.entries["k003"]
    monkeypatch.undo()
    _forget_formatted()
