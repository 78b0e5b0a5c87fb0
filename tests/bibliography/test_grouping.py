"""bibliography.grouping: a numbered list in even slices, one per core; a sorted style's
entries in groups that share no compared family name."""

from __future__ import annotations

import pytest

from bibliography import csl, grouping, jsbundle
from bibliography.entries import EntryData


def made_up_articles(count: int) -> list[EntryData]:
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
    articles = made_up_articles(entries)
    slices = grouping.slices(articles)
    assert [len(part) for part in slices] == sizes
    assert [data for part in slices for data in part] == articles


def entry(key, authors, year, title, **fields) -> EntryData:
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
    entry("s1", ["Smith, John", "Jones, Anna", "Brown, Carl"], "2019", "Mixing times of walks"),
    entry("s2", ["Smith, Kate", "Lee, Dan", "Park, Eun"], "2019", "Cutoff for shuffles"),
    entry("s3", ["Smith, John", "Jones, Anna", "Brown, Carl"], "2019", "Spectral gaps"),
    entry("s4", ["Smith, John", "Jones, Anna", "White, Fay"], "2019", "Coupling from the past"),
    entry("g1", ["van Gogh, Vincent"], "2001", "Sunflowers and percolation"),
    entry("g2", ["Gogh, Theo"], "2001", "Letters on branching processes"),
    entry("m1", ['M{\\"u}ller, Anja'], "2010", "Random graphs"),
    entry("m2", ["Muller, Bernd"], "2010", "Random matrices"),
    entry("o1", ["O'Brien, Cian"], "2015", "Queues in tandem"),
    entry("o2", ["OBrien, Dara"], "2015", "Queues in parallel"),
    entry("c1", ["{World Health Organization}"], "2020", "Global report on epidemics"),
    entry("c2", ["{World Health Organization}"], "2020", "Epidemic models in practice"),
    entry("e1", [], "2018", "Proceedings on stochastic networks", editor=["Kelly, Frank"]),
    entry("e2", ["Kelly, Frank"], "2018", "Reversibility and networks"),
    entry("n1", [], "2012", "Anonymous notes on martingales"),
    entry("n2", [], "2012", "Anonymous notes on martingales"),
    entry("z1", ["Zhou, Wei"], "1999", "Large deviations"),
    entry("a1", ["Adams, Ruth", "Zhou, Wei"], "2003", "Concentration of measure"),
    entry("a2", ["Adams, Ruth"], "2003", "Isoperimetry"),
    entry("y1", ["Young, Lauren"], "2007", "Hitting times"),
]


def test_names_are_filed_under_their_family_name_folded():
    keys = grouping.name_keys
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
    info = csl.style_info(style)
    assert (info.linked_by, info.substitutes) == (linked_by, substitutes)


def test_entries_sharing_no_compared_family_name_are_grouped_apart():
    groups = grouping.groups(SORTED_LIST, csl.style_info("apa"))
    keys = [[data.key for data in group] for group in groups]
    assert ["s1", "s2", "s3", "s4"] in keys
    assert ["e1", "e2"] in keys  # the editor stands in for the author
    assert ["z1"] in keys and ["a1", "a2"] in keys  # APA compares first authors only
    for pair in (["g1", "g2"], ["m1", "m2"], ["o1", "o2"], ["c1", "c2"], ["n1", "n2"]):
        assert pair in keys
    assert len(groups) == 10  # and y1 alone
    linked = grouping.groups(SORTED_LIST, csl.style_info("harvard-cite-them-right"))
    assert ["z1", "a1", "a2"] in [[data.key for data in group] for group in linked]
