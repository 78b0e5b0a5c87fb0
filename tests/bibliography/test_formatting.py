"""bibliography.formatting: a numbered list's new entries are formatted in slices at once, one
per core, and read exactly as formatted in one call."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from bibliography import csl, formatting, grouping, jsbundle
from bibliography.formatting import format_references
from scidraft.markup import v8pool
from tests.bibliography.test_grouping import SORTED_LIST, entry, made_up_articles


def _forget_formatted() -> None:
    formatting.format_cache_clear()
    cache.clear()  # the shared cache keeps formatted entries too


def test_a_list_formatted_in_slices_reads_as_formatted_in_one_call(monkeypatch):
    """Numbered entries do not depend on each other: the slices' HTML, order and numbering
    are those of one call over the whole list."""
    articles = made_up_articles(30)
    monkeypatch.setattr(jsbundle, "CALLS_AT_ONCE", 1)
    _forget_formatted()
    whole = format_references(articles, "vancouver")

    calls = []
    at_once = jsbundle.call_at_once

    def counted(function, arg_lists, **kwargs):
        calls.append(len(arg_lists))
        return at_once(function, arg_lists, **kwargs)

    monkeypatch.setattr(jsbundle, "CALLS_AT_ONCE", 2)
    monkeypatch.setattr(jsbundle, "call_at_once", counted)
    _forget_formatted()
    sliced = format_references(articles, "vancouver")

    assert calls == [2]
    assert sliced.problems == whole.problems == {}
    assert sliced.order == whole.order == [data.key for data in articles]
    assert sliced.entries == whole.entries
    assert "Author29 AB, Second B, van der Berg C." in sliced.entries["k029"]


def test_a_slice_that_fails_shows_its_entries_raw_and_the_others_formatted(monkeypatch):
    """One slice's call failing (stopped, out of memory) costs only its own entries."""
    articles = made_up_articles(20)
    monkeypatch.setattr(jsbundle, "CALLS_AT_ONCE", 2)
    at_once = jsbundle.call_at_once

    def second_fails(function, arg_lists, **kwargs):
        outcomes = at_once(function, arg_lists, **kwargs)
        return [outcomes[0], v8pool.JSError("used too much memory and was stopped")]

    monkeypatch.setattr(jsbundle, "call_at_once", second_fails)
    _forget_formatted()
    formatted = format_references(articles, "vancouver")
    assert set(formatted.problems) == {data.key for data in articles[10:]}
    assert all("too much memory" in problem for problem in formatted.problems.values())
    assert "<code>k015</code>" in formatted.entries["k015"]
    assert "Journal of Graph Theory" in formatted.entries["k003"]
    monkeypatch.undo()
    _forget_formatted()


# --- Sorted styles: independent groups -------------------------------------------------------


def _without_groups(monkeypatch, entries, style):
    with monkeypatch.context() as patch:
        patch.setattr(grouping, "groups", lambda entries, style: [entries])
        _forget_formatted()
        return format_references(entries, style)


@pytest.mark.slow
@pytest.mark.parametrize(
    "style",
    [
        "apa",
        "chicago-author-date",
        "harvard-cite-them-right",
        "elsevier-harvard",
        "modern-language-association",
    ],  # fmt: skip
)
def test_a_sorted_list_formatted_in_groups_reads_as_formatted_whole(monkeypatch, style):
    """Groups formatted apart and put in the processor's order give the whole list's HTML,
    order and in-text citations: year suffixes, added names and given names included."""
    whole = _without_groups(monkeypatch, SORTED_LIST, style)
    monkeypatch.setattr(jsbundle, "CALLS_AT_ONCE", 2)
    calls = []
    run_each = formatting.processor.run_each

    def counted(entry_lists, *args, **kwargs):
        calls.append(sorted(len(entries) for entries in entry_lists))
        return run_each(entry_lists, *args, **kwargs)

    monkeypatch.setattr(formatting.processor, "run_each", counted)
    _forget_formatted()
    grouped = format_references(SORTED_LIST, style)
    if style == "modern-language-association":
        # "———" repeats an author, and MLA compares every name: Adams and Zhou are one group,
        # with a dozen entries sorting between them, so the list is formatted whole after all.
        assert calls == [[10, 10], [20]]
    else:
        assert calls == [[10, 10]]  # two calls at once, never the whole list
    assert grouped.problems == whole.problems == {}
    assert grouped.order == whole.order
    assert grouped.entries == whole.entries
    assert grouped.markers == whole.markers
    if style == "apa":
        assert grouped.markers["s1"] == "J. Smith, Jones, &#38; Brown, 2019a"
        assert grouped.markers["s3"] == "J. Smith, Jones, &#38; Brown, 2019b"
        assert grouped.markers["s4"] == "J. Smith, Jones, &#38; White, 2019"
        assert grouped.markers["s2"] == "K. Smith et al., 2019"
        assert (grouped.markers["e1"], grouped.markers["e2"]) == ("Kelly, 2018a", "Kelly, 2018b")
    if style == "modern-language-association":
        assert grouped.entries["s3"].startswith("———. “Spectral Gaps.”")


@pytest.mark.slow
def test_a_changed_list_formats_only_the_groups_it_changed(monkeypatch):
    """A citation added in the editor costs its own group, not the list's."""
    _forget_formatted()
    format_references(SORTED_LIST, "apa")
    formatted = []
    run_each = formatting.processor.run_each

    def counted(entry_lists, *args, **kwargs):
        formatted.extend(data["label"] for entries in entry_lists for data in entries)
        return run_each(entry_lists, *args, **kwargs)

    monkeypatch.setattr(formatting.processor, "run_each", counted)
    added = [*SORTED_LIST, entry("s5", ["Smith, John"], "2019", "Ergodicity")]
    grouped = format_references(added, "apa")
    assert sorted(formatted) == ["s1", "s2", "s3", "s4", "s5"]  # the Smiths' group alone
    whole = _without_groups(monkeypatch, added, "apa")
    assert (grouped.order, grouped.entries, grouped.markers) == (
        whole.order,
        whole.entries,
        whole.markers,
    )


def test_groups_that_would_not_stay_together_under_a_substitute_are_formatted_whole(monkeypatch):
    """MLA prints "———" for an author repeated from the entry above: when another group's
    entry sorts between two of a group's, the list is formatted whole."""
    entries = [
        entry("a1", ["Adams, Ruth"], "2003", "Isoperimetry"),
        entry("a2", ["Adams, Ruth", "Zhou, Wei"], "2004", "Concentration"),
        entry("b1", ["Brown, Carl"], "2001", "Percolation"),
        entry("z1", ["Zhou, Wei"], "1999", "Large deviations"),
        entry("z2", ["Zhou, Wei"], "2000", "Moderate deviations"),
    ]
    style = csl.style_info("modern-language-association")
    assert [[data.key for data in group] for group in grouping.groups(entries, style)] == [
        ["a1", "a2", "z1", "z2"],
        ["b1"],
    ]
    orders = []
    order = formatting.processor.order

    def spied(*args):
        orders.append(order(*args))
        return orders[-1]

    monkeypatch.setattr(formatting.processor, "order", spied)
    _forget_formatted()
    formatted = format_references(entries, "modern-language-association")
    assert orders == [None]
    whole = _without_groups(monkeypatch, entries, "modern-language-association")
    assert formatted.order == whole.order == ["a1", "a2", "b1", "z1", "z2"]
    assert formatted.entries == whole.entries
    assert formatted.entries["z2"].startswith("———")


def test_a_group_with_an_entry_the_processor_refuses_sends_the_list_whole(monkeypatch):
    """Without every entry's sort keys the groups cannot be ordered: the whole list is
    formatted as before, its refused entry shown raw with the reason."""
    real = formatting.processor.run_each

    def refusing(entry_lists, *args, **kwargs):
        answers = real(entry_lists, *args, **kwargs)
        if kwargs.get("sortkeys"):
            answers[0].pop("sortkeys", None)
        return answers

    monkeypatch.setattr(formatting.processor, "run_each", refusing)
    _forget_formatted()
    formatted = format_references(SORTED_LIST, "apa")
    whole = _without_groups(monkeypatch, SORTED_LIST, "apa")
    assert (formatted.order, formatted.entries) == (whole.order, whole.entries)


def test_entries_whose_cites_read_the_same_are_never_formatted_apart(monkeypatch):
    """The last guard: were two groups to hold cites that read the same ("Smith et al.,
    2019", a style whose cites do not start with the first names), the list is formatted
    whole, and the year suffixes are those of the whole list."""
    split = grouping.groups

    def torn(entries, style):
        groups = split(entries, style)
        smiths = next(group for group in groups if group[0].key == "s1")
        return [[smiths[0]], smiths[1:], *(group for group in groups if group is not smiths)]

    monkeypatch.setattr(grouping, "groups", torn)
    _forget_formatted()
    formatted = format_references(SORTED_LIST, "apa")
    assert formatted.markers["s1"].endswith("2019a")
    assert formatted.markers["s3"].endswith("2019b")
    whole = _without_groups(monkeypatch, SORTED_LIST, "apa")
    assert (formatted.order, formatted.entries) == (whole.order, whole.entries)


def test_a_group_call_that_is_stopped_costs_its_own_entries_and_is_not_retried(monkeypatch):
    """A call stopped (memory, time) would be stopped again over the whole list: the other
    groups show formatted, the stopped call's entries raw with the reason, nothing cached."""
    monkeypatch.setattr(jsbundle, "CALLS_AT_ONCE", 2)
    real = formatting.processor.run_each
    calls = []

    def second_stopped(entry_lists, *args, **kwargs):
        calls.append(len(entry_lists))
        answers = real(entry_lists, *args, **kwargs)
        return [answers[0], v8pool.JSError("used too much memory and was stopped")]

    monkeypatch.setattr(formatting.processor, "run_each", second_stopped)
    _forget_formatted()
    formatted = format_references(SORTED_LIST, "apa")
    assert calls == [2]  # no second try of the whole list
    assert formatted.order == [data.key for data in SORTED_LIST]
    stopped = set(formatted.problems)
    assert len(stopped) == 10 and all("too much memory" in p for p in formatted.problems.values())
    shown = [key for key in formatted.order if key not in stopped]
    assert all("ref-unformatted" not in formatted.entries[key] for key in shown)
    assert all(f"<code>{key}</code>" in formatted.entries[key] for key in stopped)

    monkeypatch.setattr(formatting.processor, "run_each", real)
    again = format_references(SORTED_LIST, "apa")  # nothing was cached: formatted in full
    assert again.problems == {}
