"""notes.entry_index: an entry set's A–Z and category views typeset the math of their titles,
aliases and summaries on the server (the theme prints them as written and MathJax typesets
them in the browser), escape everything else, and tell the page's author of a formula KaTeX
refuses."""

from __future__ import annotations

import pytest

from notes.entry_index import render_entry_index
from notes.rendering import SITE_MACROS
from scidraft.markup import RenderContext, render
from scidraft.markup.mathmacros import Preamble
from tests.factories import note_row


def _page(view: str, macros: str = ""):
    preambles = (Preamble(SITE_MACROS, macros),) if macros else ()
    context = RenderContext(render_entry_index=render_entry_index, math_macros=preambles)
    return render(f"{{{{< {view} >}}}}\n", context)


@pytest.mark.django_db
@pytest.mark.parametrize("view", ["entry-a-to-z", "entry-categories"])
def test_math_in_an_entrys_fields_is_typeset_and_the_rest_escaped(view):
    note_row(
        "rates",
        "x",
        title="rates",
        params=dict(
            entryTitle=r"Rates of $O(1/k^2)$",
            entryAliases=[r"\(\ell_1\) descent", "<b>bold</b>"],
            entrySummary=r"Shows $f(x_k) - f^\star \le L/k$ for <script>x</script> steps",
            entryCategory="Optimisation",
        ),
    )
    page = _page(view)
    assert page.html.count('<span class="katex">') == 3
    assert "<math" in page.html and 'style="height:' in page.html  # KaTeX's own, kept whole
    assert "$" not in page.html and r"\(" not in page.html
    assert "&lt;b&gt;bold&lt;/b&gt;" in page.html and "&lt;script&gt;x" in page.html
    assert "<script" not in page.html and "<b>" not in page.html
    assert '<a class="entry-title" href="/notes/rates/">Rates of <span class="katex">' in page.html
    assert page.has_math  # the page loads KaTeX's stylesheet
    assert page.warnings == []


@pytest.mark.django_db
def test_a_formula_katex_refuses_shows_as_written_with_a_warning_for_the_page():
    note_row(
        "broken",
        "x",
        title="broken",
        params=dict(entryTitle="Broken", entrySummary=r"Bound $\frac{1}{$ holds"),
    )
    page = _page("entry-a-to-z")
    assert r"<code>\frac{1}{</code>" in page.html
    assert [(w.line, w.code) for w in page.warnings] == [(1, "math-error")]
    assert "math in an entry index" in page.warnings[0].message


@pytest.mark.django_db
def test_placeholder_characters_in_a_field_are_text_not_markup():
    """A summary holding the engine's private-use characters cannot forge a formula or a
    placeholder: they are dropped."""
    note_row(
        "forged",
        "x",
        title="forged",
        params=dict(entryTitle="Forged", entrySummary="a \ue014i\\alpha\ue015 \ue0000\ue001 b"),
    )
    page = _page("entry-a-to-z")
    assert 'class="katex"' not in page.html
    assert "a i\\alpha 0 b" in page.html


@pytest.mark.django_db
def test_entries_are_still_filed_under_the_first_letter_of_their_title_as_written():
    """As the theme files them: a title that starts with math is under "$"."""
    note_row("zeta", "x", title="zeta", params=dict(entryTitle=r"$\zeta$ functions"))
    note_row("alpha", "x", title="alpha", params=dict(entryTitle="Alpha"))
    html = _page("entry-a-to-z").html
    assert '<h2 class="entry-letter" id="$">$</h2>' in html
    assert html.index('id="$"') < html.index('id="A"')


@pytest.mark.django_db
def test_the_sites_macros_apply_to_an_entrys_math():
    note_row(
        "mean", "x", title="mean", params=dict(entryTitle="Mean", entrySummary=r"Defines $\Ex[X]$")
    )
    without = _page("entry-a-to-z")
    assert 'class="math-error"' in without.html
    page = _page("entry-a-to-z", macros=r"\newcommand{\Ex}{\mathbb{E}}")
    assert 'class="math-error"' not in page.html and "mathbb" in page.html
    assert page.warnings == []


@pytest.mark.django_db
def test_only_notes_naming_the_field_belong_to_the_set_whatever_its_case():
    """A note whose front matter names the field only as a value, or not at all, is not in the
    set (SQL reads only rows whose JSON names it, Python keeps only keys); a field written in
    another case (Hugo lower-cases keys) still belongs to it."""
    from notes.entry_index import _entries, _settings

    note_row("upper", "x", title="upper", params={"ENTRYTITLE": "Upper"})
    note_row("plain", "x", title="plain", params={"other": "entryTitle"})
    note_row("none", "x", title="none", params={})
    entries = _entries(_settings({}))
    assert [entry["url"] for entry in entries] == ["/notes/upper/"]


@pytest.mark.django_db
@pytest.mark.parametrize("view", ["entry-a-to-z", "entry-categories"])
def test_a_large_set_lists_its_first_entries_and_says_how_many_there_are(view, settings):
    """Past SCIDRAFT_ENTRY_INDEX_MAX_ENTRIES the view lists that many entries, keeps the full
    count, and says that only the first are listed."""
    settings.SCIDRAFT_ENTRY_INDEX_MAX_ENTRIES = 3
    for letter in "abcde":
        note_row(letter, "x", title=letter, params=dict(entryTitle=letter.upper() * 3))
    html = _page(view).html
    assert html.count('class="entry-item"') == 3
    assert "5 Entries Covered" in html
    assert "The first 3 of 5 Entries are listed here." in html
    if view == "entry-a-to-z":
        assert 'href="/notes/c/"' in html and 'href="/notes/d/"' not in html
