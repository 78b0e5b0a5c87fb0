"""Golden tests for citations and reference lists (docs/theme.md#citations-and-reference-lists),
against a fake bibliography."""

from __future__ import annotations

import pytest

from scidraft.markup import FormattedReferences, RenderContext, render

from .dom import normalise_space, parse


class FakeBibliography:
    """A bibliography file: `format` returns HTML for the keys it holds."""

    def __init__(self, url: str, keys: list[str]):
        self.url = url
        self.keys = list(keys)
        self.calls: list[tuple[list[str], str | None]] = []

    def format(self, keys, style, locale=None):
        self.calls.append((list(keys), style))
        return {key: f'<span class="entry">Entry {key}</span>' for key in keys if key in self.keys}


@pytest.fixture
def bibs():
    return {
        "bib/refs.bib": FakeBibliography("/bib/refs.bib", ["a", "b", "c", "d", "shared"]),
        "bib/other.bib": FakeBibliography("/bib/other.bib", ["x", "y", "b"]),
    }


def context(bibs, **kwargs) -> RenderContext:
    return RenderContext(resolve_bibliography=bibs.get, **kwargs)


def _codes(rendered, code):
    return [warning for warning in rendered.warnings if warning.code == code]


def _markers(doc):
    """[(sup id, [(href, text), …]), …] for every citation marker, in order."""
    return [
        (sup.id, [(a.get("href"), a.text) for a in sup.select("a")])
        for sup in doc.select("sup.citation")
    ]


def test_single_list_numbering_and_markers(bibs):
    """Keys number from 1 by first appearance; repeats reuse numbers; `\\cite{a,b}` → `[1],[2]`."""
    source = (
        "First \\cite{a} then \\cite{b, c}.\n\nAgain \\cite{a}.\n\n"
        '{{< references bib="bib/refs.bib" title="References" >}}\n'
    )
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    assert _markers(doc) == [
        ("cite-back-0", [("#ref-0-a", "[1]")]),
        ("cite-back-1", [("#ref-0-b", "[2]"), ("#ref-0-c", "[3]")]),
        ("cite-back-2", [("#ref-0-a", "[1]")]),
    ]
    assert doc.select("sup.citation")[1].text == "[2],[3]"
    box = doc.select_one("div.references")
    assert box.get("hidden") is None and "hidden" not in box.attrs
    assert box.select_one("h2.references-title").text == "References"
    items = box.select("ol.ref-list > li")
    assert [li.id for li in items] == ["ref-0-a", "ref-0-b", "ref-0-c"]
    assert [li.select_one("span.ref-num").text for li in items] == ["[1]", "[2]", "[3]"]
    assert items[0].select_one("span.entry").text == "Entry a"
    back = items[0].select("span.ref-back > a")
    assert [(a.get("href"), a.get("title"), a.text) for a in back] == [
        ("#cite-back-0", "Back to citation 1", "↩"),
        ("#cite-back-2", "Back to citation 2", "↩"),
    ]
    assert [a.get("href") for a in items[1].select("span.ref-back > a")] == ["#cite-back-1"]
    assert [(c.keys, c.missing, c.title) for c in rendered.citations] == [
        (["a", "b", "c"], [], "References")
    ]
    assert rendered.has_citations
    assert rendered.warnings == []


def test_two_lists_each_numbered_from_one(bibs):
    """Each list takes the citations before it not taken by an earlier list, numbering from 1."""
    source = (
        "Part one \\cite{a} and \\cite{b}.\n\n"
        '{{< references bib="bib/refs.bib" title="First" >}}\n\n'
        "Part two \\cite{x} and \\cite{b} and \\cite{x}.\n\n"
        '{{< references bib="bib/other.bib" title="Second" >}}\n'
    )
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    assert _markers(doc) == [
        ("cite-back-0", [("#ref-0-a", "[1]")]),
        ("cite-back-1", [("#ref-0-b", "[2]")]),
        ("cite-back-2", [("#ref-1-x", "[1]")]),
        ("cite-back-3", [("#ref-1-b", "[2]")]),
        ("cite-back-4", [("#ref-1-x", "[1]")]),
    ]
    boxes = doc.select("div.references")
    assert [box.select_one("h2.references-title").text for box in boxes] == ["First", "Second"]
    assert [li.id for li in boxes[0].select("li")] == ["ref-0-a", "ref-0-b"]
    assert [li.id for li in boxes[1].select("li")] == ["ref-1-x", "ref-1-b"]
    second_x = boxes[1].select_one("li#ref-1-x")
    assert [a.get("href") for a in second_x.select(".ref-back a")] == [
        "#cite-back-2",
        "#cite-back-4",
    ]
    assert boxes[0].get("data-bib-src") == "/bib/refs.bib"
    assert boxes[1].get("data-bib-src") == "/bib/other.bib"
    assert [c.keys for c in rendered.citations] == [["a", "b"], ["x", "b"]]
    assert rendered.warnings == []


def test_data_bib_src_is_the_bibliography_url():
    """`data-bib-src` is the URL the bibliography says it is served at."""
    bib = FakeBibliography("/media/bibliographies/refs.bib", ["a"])
    rendered = render(
        '\\cite{a}\n\n{{< references bib="bib/refs.bib" >}}',
        RenderContext(resolve_bibliography={"bib/refs.bib": bib}.get),
    )
    box = parse(rendered.html).select_one("div.references")
    assert box.get("data-bib-src") == "/media/bibliographies/refs.bib"


def test_citation_in_table_cell_and_list_item(bibs):
    """Citations inside table cells and list items are numbered like any other."""
    source = (
        "| Model | Source |\n|---|---|\n| BERT | \\cite{b} |\n\n- item \\cite{a}\n\n"
        '{{< references bib="bib/refs.bib" >}}\n'
    )
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    cell = doc.select("tbody td")[1]
    assert _markers(cell) == [("cite-back-0", [("#ref-0-b", "[1]")])]
    assert _markers(doc.select_one("ul > li")) == [("cite-back-1", [("#ref-0-a", "[2]")])]


def test_cite_inside_code_stays_literal(bibs):
    """`\\cite{…}` in inline code or a fence is not a citation and does not consume a number."""
    source = (
        "Use `\\cite{a}` in prose.\n\n```latex\n\\cite{b}\n```\n\nReal \\cite{c}.\n\n"
        '{{< references bib="bib/refs.bib" >}}\n'
    )
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    assert doc.select("code")[0].text == "\\cite{a}"
    assert "\\cite{b}" in doc.select_one("pre").text
    assert _markers(doc) == [("cite-back-0", [("#ref-0-c", "[1]")])]
    assert rendered.citations[0].keys == ["c"]


def test_cites_after_last_list_stay_literal_and_warn(bibs):
    """Cites after the last list stay literal `\\cite{…}`, each with a `cite-unlisted` warning
    that says what to do (the theme's rule: an author's own lists decide)."""
    source = 'Before \\cite{a}.\n\n{{< references bib="bib/refs.bib" >}}\n\nAfter \\cite{b, c}.\n'
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    assert len(doc.select("sup.citation")) == 1
    assert "After \\cite{b, c}." in doc.text
    assert [(w.code, w.line) for w in rendered.warnings] == [("cite-unlisted", 5)]
    assert "add a {{< references >}} line after it" in rendered.warnings[0].message


def test_a_note_that_cites_without_a_list_gets_one_at_its_end(bibs):
    """Citations and no list: the list comes at the end, headed "References", from the
    note's default bibliographies, as \\bibliography does in LaTeX."""
    rendered = render(
        "Only \\cite{a} and \\cite{b}.", context(bibs, default_bibliographies=("bib/refs.bib",))
    )
    doc = parse(rendered.html)
    assert [a.text for a in doc.select("sup.citation a")] == ["[1]", "[2]"]
    lists = doc.select("div.references")
    assert len(lists) == 1 and lists[0].select_one("h2").text == "References"
    assert [li.id for li in lists[0].select("li")] == ["ref-0-a", "ref-0-b"]
    assert rendered.html.rstrip().endswith("</ol></div>")
    assert rendered.warnings == []


def test_the_card_of_a_note_without_a_list_gets_its_own(bibs):
    """The preview region's citations, in a note that relies on the list at the end, are
    numbered in a list of the card's own (as in a note with lists)."""
    source = "{{< preview >}}\nCard \\cite{a}.\n{{< /preview >}}\n\nBody \\cite{b}.\n"
    rendered = render(source, context(bibs, default_bibliographies=("bib/refs.bib",)))
    card = parse(rendered.card_html)
    assert [a.text for a in card.select("sup.citation a")] == ["[1]"]
    box = card.select_one("div.references.references-in-card")
    assert box is not None and [li.id for li in box.select("li")] == ["ref-0-a"]


def test_without_the_setting_citations_without_a_list_stay_literal(bibs):
    """With the site's list at the end turned off, a note without a list keeps its citations
    literal, and the warning says how to get a list."""
    rendered = render("Only \\cite{a}.", context(bibs, auto_references=False))
    assert "Only \\cite{a}." in parse(rendered.html).text
    assert [w.code for w in rendered.warnings] == ["cite-unlisted"]
    assert "has no reference list to go to" in rendered.warnings[0].message
    assert "after the last reference list" not in rendered.warnings[0].message


def test_a_list_at_the_end_without_a_bibliography_says_where_to_choose_one(bibs):
    """The list at the end of a note with no default bibliography says where to choose one,
    on the line of the first citation."""
    rendered = render("Text.\n\nOnly \\cite{a}.", context(bibs))
    (warning,) = _codes(rendered, "bib-missing")
    assert warning.line == 3 and "choose the note's bibliographies" in warning.message


def test_missing_key(bibs):
    """A key not in the file renders `missing reference: KEY` and a `cite-missing` warning."""
    source = 'Line\n\nSee \\cite{a, nope}.\n\n{{< references bib="bib/refs.bib" >}}\n'
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    item = doc.select_one("li#ref-0-nope")
    assert item.select_one("span.ref-num").text == "[2]"
    assert item.select_one("em").text == "missing reference: nope"
    assert [(w.code, w.line) for w in rendered.warnings] == [("cite-missing", 3)]
    assert "nope" in rendered.warnings[0].message
    assert rendered.citations[0].missing == ["nope"]


def test_missing_bibliography_file(bibs):
    """A list naming a file that does not exist gives a `bib-missing` warning on its line."""
    source = 'See \\cite{a}.\n\n{{< references bib="bib/gone.bib" >}}\n'
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    assert [(w.code, w.line) for w in rendered.warnings] == [("bib-missing", 3)]
    assert "bib/gone.bib" in rendered.warnings[0].message
    item = doc.select_one("li#ref-0-a")
    assert "bib/gone.bib" in item.text
    assert _markers(doc) == [("cite-back-0", [("#ref-0-a", "[1]")])]


def test_list_without_citations_is_hidden(bibs):
    """A list whose scope cites nothing stays hidden (heading included) and formats nothing."""
    source = (
        "Cite \\cite{a}.\n\n"
        '{{< references bib="bib/refs.bib" title="One" >}}\n\n'
        "No citations here.\n\n"
        '{{< references bib="bib/other.bib" title="Two" >}}\n'
    )
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    boxes = doc.select("div.references")
    assert "hidden" not in boxes[0].attrs
    assert "hidden" in boxes[1].attrs
    assert not boxes[1].select("li")
    assert bibs["bib/other.bib"].calls == []
    assert rendered.warnings == []


def test_card_gets_list_from_first_references_bib(bibs):
    """A preview citing keys with no list of its own gets `div.references.references-in-card`."""
    source = (
        "{{< preview >}}\nCard text \\cite{c} and \\cite{a}.\n{{< /preview >}}\n\n"
        "Body continues.\n\n"
        '{{< references bib="bib/refs.bib" title="Refs" >}}\n\n'
        "More \\cite{x}.\n\n"
        '{{< references bib="bib/other.bib" title="Other" >}}\n'
    )
    rendered = render(source, context(bibs))
    card = parse(rendered.card_html)
    box = card.select_one("div.references.references-in-card")
    assert box is not None
    assert box.get("data-bib-src") == "/bib/refs.bib"
    assert box.select_one("h2") is None  # untitled
    assert [li.id for li in box.select("li")] == ["ref-0-c", "ref-0-a"]
    assert [li.select_one(".ref-num").text for li in box.select("li")] == ["[1]", "[2]"]
    assert _markers(card) == [
        ("cite-back-0", [("#ref-0-c", "[1]")]),
        ("cite-back-1", [("#ref-0-a", "[2]")]),
    ]
    assert "Body continues." not in card.text
    # the page itself is unaffected
    page = parse(rendered.html)
    assert not page.select(".references-in-card")
    assert len(page.select("div.references")) == 2


def test_card_shows_wrapped_references_list(bibs):
    """A preview that wraps a references list shows that list (titled) in `card_html`."""
    source = (
        "{{< preview >}}\nCard \\cite{a}.\n\n"
        '{{< references bib="bib/refs.bib" title="Card refs" >}}\n'
        "{{< /preview >}}\n\nRest \\cite{x}.\n\n"
        '{{< references bib="bib/other.bib" >}}\n'
    )
    rendered = render(source, context(bibs))
    card = parse(rendered.card_html)
    boxes = card.select("div.references")
    assert len(boxes) == 1
    assert "references-in-card" not in boxes[0].classes
    assert boxes[0].select_one("h2.references-title").text == "Card refs"
    assert [li.id for li in boxes[0].select("li")] == ["ref-0-a"]
    assert "Rest" not in card.text
    assert rendered.has_preview


def test_card_list_with_several_files(bibs):
    """The card's list searches every file named by the first `references bib="a,b"`."""
    source = (
        "{{< preview >}}\nCard \\cite{y}.\n{{< /preview >}}\n\n"
        '{{< references bib="bib/refs.bib,bib/other.bib" >}}\n'
    )
    rendered = render(source, context(bibs))
    box = parse(rendered.card_html).select_one("div.references-in-card")
    item = box.select_one("li#ref-0-y")
    assert item.select_one("span.entry").text == "Entry y"


def test_default_bibliographies_when_bib_omitted(bibs):
    """A list without `bib=` searches the context's default bibliographies, in order."""
    source = "See \\cite{a} and \\cite{y}.\n\n{{< references >}}\n"
    defaults = ("bib/refs.bib", "bib/other.bib")
    rendered = render(source, context(bibs, default_bibliographies=defaults))
    doc = parse(rendered.html)
    assert doc.select_one("li#ref-0-a span.entry").text == "Entry a"
    assert doc.select_one("li#ref-0-y span.entry").text == "Entry y"
    assert rendered.citations[0].bib == ["bib/refs.bib", "bib/other.bib"]
    assert rendered.warnings == []


def test_no_bib_and_no_default_warns(bibs):
    """A list without `bib=` and no default bibliography gives `bib-missing`."""
    rendered = render("See \\cite{a}.\n\n{{< references >}}\n", context(bibs))
    assert [w.code for w in rendered.warnings] == ["bib-missing"]


def test_several_files_searched_in_order(bibs):
    """`bib="a.bib,b.bib"`: each key comes from the first file that has it."""
    source = (
        '\\cite{b} \\cite{y} \\cite{a}\n\n{{< references bib="bib/other.bib,bib/refs.bib" >}}\n'
    )
    rendered = render(source, context(bibs))
    doc = parse(rendered.html)
    assert [li.id for li in doc.select("li")] == ["ref-0-b", "ref-0-y", "ref-0-a"]
    other, refs = bibs["bib/other.bib"], bibs["bib/refs.bib"]
    assert sorted(other.calls[0][0]) == ["a", "b", "y"]
    assert refs.calls == [(["a"], None)]  # only what the first file lacked
    assert rendered.warnings == []


def test_style_passed_to_bibliography(bibs):
    """The list's `style=` (else the context's) reaches `format`."""
    render('\\cite{a}\n\n{{< references bib="bib/refs.bib" style="alpha" >}}', context(bibs))
    render(
        '\\cite{a}\n\n{{< references bib="bib/refs.bib" >}}', context(bibs, citation_style="plain")
    )
    assert [call[1] for call in bibs["bib/refs.bib"].calls] == ["alpha", "plain"]


def test_bibliography_html_is_sanitised():
    """Entry HTML from the bibliography is cleaned (no script, no event handlers)."""

    class Evil(FakeBibliography):
        def format(self, keys, style, locale=None):
            return {key: '<b onclick="x()">T</b><script>alert(1)</script>' for key in keys}

    rendered = render(
        '\\cite{a}\n\n{{< references bib="e.bib" >}}',
        RenderContext(resolve_bibliography={"e.bib": Evil("/bib/e.bib", [])}.get),
    )
    assert "<script" not in rendered.html and "onclick" not in rendered.html
    assert normalise_space(parse(rendered.html).select_one("li#ref-0-a .csl-entry").text) == "T"


def test_card_list_from_default_bibliographies(bibs):
    """When the body's first list omits `bib=`, the card's list uses the default bibliographies."""
    source = "{{< preview >}}\nCard \\cite{a}.\n{{< /preview >}}\n\n{{< references >}}\n"
    rendered = render(source, context(bibs, default_bibliographies=("bib/refs.bib",)))
    card = parse(rendered.card_html)
    box = card.select_one("div.references.references-in-card")
    assert box is not None
    assert box.select_one("li#ref-0-a span.entry").text == "Entry a"
    assert _markers(card) == [("cite-back-0", [("#ref-0-a", "[1]")])]


class AuthorDate:
    """A bibliography answering as an author–date CSL style does."""

    url = "/bib/l.bib"

    def format(self, keys, style, locale=None):
        names = {"vaswani": "Vaswani et al., 2017", "devlin": "Devlin et al., 2019"}
        return FormattedReferences(
            {key: f"Entry {key}" for key in keys if key in names},
            numeric=False,
            order=sorted(key for key in keys if key in names),  # the style sorts by author
            markers={key: names[key] for key in keys if key in names},
            prefix="(",
            suffix=")",
            delimiter="; ",
        )


def test_author_date_styles_print_their_own_markers_and_order():
    """An author–date style: `(Vaswani et al., 2017; Devlin et al., 2019)`, one link per key,
    the same cite-back ids, no [n], and the list in the style's order."""
    context = RenderContext(resolve_bibliography=lambda name: AuthorDate())
    source = (
        "See \\cite{vaswani, devlin} and \\cite{vaswani}.\n\n"
        '{{< references bib="bib/l.bib" style="apa" >}}\n'
    )
    doc = parse(render(source, context).html)
    first, second = doc.select("span.citation")
    assert first.id == "cite-back-0" and second.id == "cite-back-1"
    assert normalise_space(first.text) == "(Vaswani et al., 2017; Devlin et al., 2019)"
    assert [a.get("href") for a in first.select("a")] == ["#ref-0-vaswani", "#ref-0-devlin"]
    assert not doc.select("sup.citation") and not doc.select(".ref-num")
    assert [li.id for li in doc.select("li")] == ["ref-0-devlin", "ref-0-vaswani"]
    back = doc.select_one("li#ref-0-vaswani .ref-back")
    assert [a.get("href") for a in back.select("a")] == ["#cite-back-0", "#cite-back-1"]


def test_back_links_are_separated_by_a_space():
    """Several ↩ in one entry are joined by a space, as the theme's join(" ")."""
    bibs = {"bib/refs.bib": FakeBibliography("/bib/refs.bib", ["a"])}
    source = '\\cite{a} \\cite{a} \\cite{a}\n\n{{< references bib="bib/refs.bib" >}}\n'
    html = render(source, context(bibs)).html
    assert (
        '<span class="ref-back"><a href="#cite-back-0" title="Back to citation 1">↩</a> '
        '<a href="#cite-back-1" title="Back to citation 2">↩</a> '
        '<a href="#cite-back-2" title="Back to citation 3">↩</a></span>'
    ) in html


class WithMath:
    url = "/bib/m.bib"

    def format(self, keys, style, locale=None):
        return FormattedReferences(
            {"k": "Rates of \ue0100\ue011 and \ue0101\ue011."},
            math={"k": ("O(1/k^2)", "\\frac{")},
            problems={},
        )


def test_math_in_an_entry_is_typeset_by_katex_and_bad_math_is_shown_with_a_warning():
    """Formula placeholders in an entry become KaTeX HTML; one KaTeX refuses stays as its
    source in a math-error span, with a warning."""
    rendered = render(
        '\\cite{k}\n\n{{< references bib="bib/m.bib" >}}\n',
        RenderContext(resolve_bibliography=lambda name: WithMath()),
    )
    entry = parse(rendered.html).select_one("li#ref-0-k .csl-right-inline")
    assert entry.select_one(".katex annotation").text == "O(1/k^2)"
    assert entry.select_one(".math-error code").text == "\\frac{"
    assert "\ue010" not in rendered.html
    assert [w.code for w in rendered.warnings] == ["math-error"]


class Unformattable:
    url = "/bib/u.bib"

    def format(self, keys, style, locale=None):
        return FormattedReferences(
            {"k": '<span class="ref-unformatted"><code>k</code> (misc): title = {T}</span>'},
            problems={"k": "could not be formatted: citeproc-js printed nothing for it"},
        )


def test_an_entry_that_cannot_be_formatted_is_shown_raw_with_a_warning():
    """The bibliography's problem becomes a cite-unformatted warning; the entry is listed."""
    rendered = render(
        '\\cite{k}\n\n{{< references bib="bib/u.bib" >}}\n',
        RenderContext(resolve_bibliography=lambda name: Unformattable()),
    )
    assert parse(rendered.html).select_one("li#ref-0-k .ref-unformatted code").text == "k"
    (warning,) = rendered.warnings
    assert warning.code == "cite-unformatted" and "printed nothing" in warning.message


class HostileBibliography(FakeBibliography):
    """Entries whose formatted HTML carries script: a field a hostile .bib could hold."""

    def format(self, keys, style, locale=None):
        self.calls.append((list(keys), style))
        return {
            key: f'<span class="entry">Entry {key}<script>alert(1)</script>'
            f'<img src=x onerror="alert(2)"></span>'
            for key in keys
            if key in self.keys
        }


def test_a_formatted_entry_is_sanitised_for_every_note_that_cites_it():
    """Sanitised entries are remembered by their text: a second note citing the same entry gets
    the same clean HTML, never the formatter's raw output."""
    bibs = {"bib/refs.bib": HostileBibliography("/bib/refs.bib", ["evil"])}
    source = 'See \\cite{evil}.\n\n{{< references bib="bib/refs.bib" >}}\n'
    first = render(source, context(bibs)).html
    second = render("Again " + source, context(bibs)).html
    for html in (first, second):
        assert "<script" not in html and "onerror" not in html and "alert(1)" not in html
        assert "Entry evil" in html
    entry = parse(first).select_one("li#ref-0-evil .csl-entry")
    assert str(entry) == str(parse(second).select_one("li#ref-0-evil .csl-entry"))


def test_an_unavailable_file_gives_a_warning_on_its_line_and_no_entries(bibs):
    """A file the site says this note may not name (UnavailableBibliography) is not asked for
    entries: the warning has the list's line and the site's reason; other files of the same
    list still resolve."""
    from scidraft.markup import UnavailableBibliography

    bibs["bib/secret.bib"] = UnavailableBibliography("is private: attach it first.")
    source = (
        "See \\cite{a} and \\cite{x}.\n\n"
        '{{< references bib="bib/secret.bib" >}}\n\n'
        "Then \\cite{b}.\n\n"
        '{{< references bib="bib/secret.bib,bib/refs.bib" >}}\n'
    )
    rendered = render(source, context(bibs))
    assert [(w.line, w.code, w.message) for w in _codes(rendered, "bib-private")] == [
        (3, "bib-private", "bibliography file bib/secret.bib is private: attach it first."),
        (7, "bib-private", "bibliography file bib/secret.bib is private: attach it first."),
    ]
    doc = parse(rendered.html)
    first, second = doc.select("div.references")
    assert "Entry" not in first.text
    assert "bibliography not available to this note: bib/secret.bib" in first.text
    assert "Entry b" in second.text
    assert not _codes(rendered, "cite-missing")
