"""bibliography.formatting: a numbered list's new entries are formatted in slices at once, one
per core, and read exactly as formatted in one call."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from bibliography import formatting, jsbundle
from bibliography.formatting import EntryData, format_references
from scidraft.markup import v8pool


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
    monkeypatch.setattr(jsbundle, "CALLS_AT_ONCE", at_once)
    articles = _articles(entries)
    slices = formatting._slices(articles)
    assert [len(part) for part in slices] == sizes
    assert [data for part in slices for data in part] == articles


def test_a_list_formatted_in_slices_reads_as_formatted_in_one_call(monkeypatch):
    """Numbered entries do not depend on each other: the slices' HTML, order and numbering
    are those of one call over the whole list."""
    articles = _articles(30)
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
    articles = _articles(20)
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


def _entry(key, authors, year, title, **fields) -> EntryData:
    persons = {"author": authors} if authors else {}
    if "editor" in fields:
        persons["editor"] = fields.pop("editor")
    return EntryData(
        key=key,
        entry_type="article",
        fields={"title": title, "journal": "Annals of Applied Probability", "year": year, **fields},
        persons=persons,
    )


# Everything that ties author–date entries to each other: the same author and year ("2019a"),
# first authors with the same family name (given names added), et al. lists that differ only
# later (names added), particles, accents folded, corporate and missing authors, an editor in
# place of an author, and entries that share no name at all.
SORTED_LIST = [
    _entry("s1", ["Smith, John", "Jones, Anna", "Brown, Carl"], "2019", "Mixing times of walks"),
    _entry("s2", ["Smith, Kate", "Lee, Dan", "Park, Eun"], "2019", "Cutoff for shuffles"),
    _entry("s3", ["Smith, John", "Jones, Anna", "Brown, Carl"], "2019", "Spectral gaps"),
    _entry("s4", ["Smith, John", "Jones, Anna", "White, Fay"], "2019", "Coupling from the past"),
    _entry("g1", ["van Gogh, Vincent"], "2001", "Sunflowers and percolation"),
    _entry("g2", ["Gogh, Theo"], "2001", "Letters on branching processes"),
    _entry("m1", ['M{\\"u}ller, Anja'], "2010", "Random graphs"),
    _entry("m2", ["Muller, Bernd"], "2010", "Random matrices"),
    _entry("o1", ["O'Brien, Cian"], "2015", "Queues in tandem"),
    _entry("o2", ["OBrien, Dara"], "2015", "Queues in parallel"),
    _entry("c1", ["{World Health Organization}"], "2020", "Global report on epidemics"),
    _entry("c2", ["{World Health Organization}"], "2020", "Epidemic models in practice"),
    _entry("e1", [], "2018", "Proceedings on stochastic networks", editor=["Kelly, Frank"]),
    _entry("e2", ["Kelly, Frank"], "2018", "Reversibility and networks"),
    _entry("n1", [], "2012", "Anonymous notes on martingales"),
    _entry("n2", [], "2012", "Anonymous notes on martingales"),
    _entry("z1", ["Zhou, Wei"], "1999", "Large deviations"),
    _entry("a1", ["Adams, Ruth", "Zhou, Wei"], "2003", "Concentration of measure"),
    _entry("a2", ["Adams, Ruth"], "2003", "Isoperimetry"),
    _entry("y1", ["Young, Lauren"], "2007", "Hitting times"),
]


def _without_groups(monkeypatch, entries, style):
    with monkeypatch.context() as patch:
        patch.setattr(formatting, "_groups", lambda entries, style: [entries])
        _forget_formatted()
        return format_references(entries, style)


def test_names_are_filed_under_their_family_name_folded():
    keys = formatting._name_keys
    assert keys("van Gogh, Vincent") & keys("Gogh, Theo")  # a particle does not part them
    assert keys("Vincent van Gogh") == keys("van Gogh, Vincent")
    assert keys('M{\\"u}ller, Anja') & keys("Muller, Bernd")  # nor an accent
    assert keys("O'Brien, Cian") & keys("OBrien, Dara")  # nor punctuation
    assert keys("{World Health Organization}") == {"worldhealthorganization"}
    assert not keys("Smith, John") & keys("Jones, Smith")  # a given name is not a family name


@pytest.mark.parametrize(
    ("style", "linked_by", "substitutes"),
    [
        ("apa", "first", False),  # given names by primary names
        ("chicago-author-date", "first", False),
        ("harvard-cite-them-right", "all", False),  # "by-cite" counts every name
        ("modern-language-association", "all", True),  # "———" for a repeated author
        ("vancouver", "", False),  # numbered: formatted entry by entry instead
        ("chicago-notes-bibliography", "", False),  # notes are numbered across the document
    ],
)
def test_styles_say_which_names_tie_their_entries(style, linked_by, substitutes):
    info = formatting.csl.style_info(style)
    assert (info.linked_by, info.substitutes) == (linked_by, substitutes)


def test_entries_sharing_no_compared_family_name_are_grouped_apart():
    groups = formatting._groups(SORTED_LIST, formatting.csl.style_info("apa"))
    keys = [[data.key for data in group] for group in groups]
    assert ["s1", "s2", "s3", "s4"] in keys
    assert ["e1", "e2"] in keys  # the editor stands in for the author
    assert ["z1"] in keys and ["a1", "a2"] in keys  # APA compares first authors only
    for pair in (["g1", "g2"], ["m1", "m2"], ["o1", "o2"], ["c1", "c2"], ["n1", "n2"]):
        assert pair in keys
    assert len(groups) == 10  # and y1 alone
    linked = formatting._groups(SORTED_LIST, formatting.csl.style_info("harvard-cite-them-right"))
    assert ["z1", "a1", "a2"] in [[data.key for data in group] for group in linked]


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
    added = [*SORTED_LIST, _entry("s5", ["Smith, John"], "2019", "Ergodicity")]
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
        _entry("a1", ["Adams, Ruth"], "2003", "Isoperimetry"),
        _entry("a2", ["Adams, Ruth", "Zhou, Wei"], "2004", "Concentration"),
        _entry("b1", ["Brown, Carl"], "2001", "Percolation"),
        _entry("z1", ["Zhou, Wei"], "1999", "Large deviations"),
        _entry("z2", ["Zhou, Wei"], "2000", "Moderate deviations"),
    ]
    style = formatting.csl.style_info("modern-language-association")
    assert [[data.key for data in group] for group in formatting._groups(entries, style)] == [
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
    split = formatting._groups

    def torn(entries, style):
        groups = split(entries, style)
        smiths = next(group for group in groups if group[0].key == "s1")
        return [[smiths[0]], smiths[1:], *(group for group in groups if group is not smiths)]

    monkeypatch.setattr(formatting, "_groups", torn)
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
