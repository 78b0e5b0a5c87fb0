"""Every shipped CSL style on a small fixture (fixtures/styles.bib), against outputs known from
citation-js with the same style file (fixtures/styles-expected.json, re-checked against the
Node oracle when node is here); locales, style names, in-text markers (bibliography.csl)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from bibliography import csl
from bibliography.entries import entry_data, plain_text
from bibliography.formatting import format_references
from bibliography.parsing import parse_bibtex

from .oracle import oracle, text_of

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BIB = FIXTURES / "styles.bib"
EXPECTED = json.loads((FIXTURES / "styles-expected.json").read_text(encoding="utf-8"))
STYLES = [name for name, _ in csl.FEATURED_STYLES]


def _entries():
    return [entry_data(entry) for entry in parse_bibtex(BIB.read_text()).entries]


def _ours(style: str, locale: str | None = None) -> dict[str, str]:
    formatted = format_references(_entries(), style, locale)
    return {key: plain_text(value, formatted.math.get(key, ())) for key, value in
            formatted.entries.items()}  # fmt: skip


def _expected(style: str) -> dict[str, str]:
    # citation-js leaves {\TeX}book as "\TeXbook"; we decode the commands it leaves.
    return {key: text.replace("\\TeXbook", "TeXbook") for key, text in EXPECTED[style].items()}


def test_every_featured_style_is_shipped_and_has_known_outputs():
    """The ten most used styles are all shipped, each with expected outputs."""
    assert set(STYLES) >= {
        "vancouver", "apa", "ieee", "chicago-author-date", "nature", "harvard-cite-them-right",
        "association-for-computing-machinery", "american-physics-society", "elsevier-harvard",
        "modern-language-association",
    }  # fmt: skip
    assert all(csl.style_exists(name) for name in STYLES)
    assert set(EXPECTED) == set(STYLES)


@pytest.mark.parametrize("style", STYLES)
def test_style_formats_the_fixture_as_citation_js_does(style):
    """Each entry reads as citation-js prints it in that style (the number column dropped)."""
    assert _ours(style) == _expected(style)


@pytest.mark.slow
@pytest.mark.parametrize("style", STYLES)
def test_expected_outputs_are_citation_js_s(style):
    """The known outputs are what citation-js 0.6.9 prints today with the shipped file."""
    xml = "" if style in csl.BUILT_IN else str(csl._style_path(style))
    theirs = oracle(str(BIB), style, "en-US", xml)
    assert not theirs["errors"] and theirs["broken"] is None
    assert {key: text_of(markup) for key, markup in theirs["entries"].items()} == EXPECTED[style]


@pytest.mark.parametrize(
    ("style", "marker", "numeric"),
    [
        ("vancouver", "", True),
        ("ieee", "", True),
        ("apa", "Vaswani et al., 2017", False),
        ("chicago-author-date", "Vaswani et al. 2017", False),
        ("harvard-cite-them-right", "Vaswani <i>et al.</i>, 2017", False),
        ("elsevier-harvard", "Vaswani et al., 2017", False),
        ("modern-language-association", "Vaswani et al.", False),
    ],
)
def test_author_date_styles_give_in_text_markers_and_their_order(style, marker, numeric):
    """Numbered styles leave markers to the theme's [n]; the others give theirs, without the
    cluster's parentheses, and sort the list by author."""
    formatted = format_references(_entries(), style)
    assert formatted.numeric is numeric
    if numeric:
        assert formatted.markers == {}
    else:
        assert formatted.markers["vaswani2017"] == marker
        assert (formatted.prefix, formatted.suffix) == ("(", ")")
        assert formatted.order[0] == "garcia2021" and formatted.order[-1] == "vaswani2017"


def test_the_site_language_chooses_the_locale():
    """de → de-DE terms and dates, fr-FR likewise; an unknown language falls back to en-US."""
    assert "[zitiert 2. Mai 2024]. Verfügbar unter:" in _ours("vancouver", "de")["halden2024"]
    assert "Consulté le: 2 mai 2024" in _ours("ieee", "fr-fr")["halden2024"]
    assert _ours("vancouver", "xx-YY") == _expected("vancouver")
    assert csl.resolve_locale("en-us") == "en-US" and csl.resolve_locale("pt_BR") == "pt-BR"


def test_style_names_resolve_to_shipped_styles():
    """Unknown names give Vancouver; the former pybtex styles their nearest CSL style; a
    dependent style formats with its independent parent."""
    assert csl.resolve_style("no-such-style") == "vancouver"
    assert csl.resolve_style(" APA.csl ") == "apa"
    assert csl.resolve_style("unsrt") == "ieee"
    assert csl.resolve_style("author-year") == "chicago-author-date"
    assert csl.style_info("nature-communications").parent == "nature"
    assert _ours("nature-communications")["knuth1984"] == _expected("nature")["knuth1984"]
    with pytest.raises(ValidationError):
        csl.validate_style("../../etc/passwd")
    csl.validate_style("ieee")


def test_when_citation_js_fails_entries_show_their_key_and_fields(monkeypatch):
    """A failed or stopped call (a timeout, the render's budget) is never an exception: each
    entry shows its key and raw fields with the reason, and nothing wrong is cached."""
    from bibliography import formatting
    from scidraft.markup import v8pool

    def fail(*args, **kwargs):
        raise v8pool.JSError("took longer than 5 s and was stopped")

    formatting.format_cache_clear()
    monkeypatch.setattr(v8pool, "run", fail)  # every call of the engine, one or at once
    formatted = format_references(_entries()[:1], "vancouver")
    assert "took longer" in formatted.problems["vaswani2017"]
    assert (
        "<code>vaswani2017</code> (article): author = {Vaswani, Ashish and"
        in (formatted.entries["vaswani2017"])
    )
    monkeypatch.undo()
    assert format_references(_entries()[:1], "vancouver").problems == {}


def test_author_date_lists_disambiguate_their_entries_against_each_other():
    """Two works by the same author in the same year become 2017a and 2017b, in the markers
    and in the list (the list is formatted as a whole)."""
    text = (
        "@article{one, author = {Smith, Jane}, title = {First}, journal = {J}, year = 2017}\n"
        "@article{two, author = {Smith, Jane}, title = {Second}, journal = {J}, year = 2017}\n"
    )
    entries = [entry_data(entry) for entry in parse_bibtex(text).entries]
    formatted = format_references(entries, "apa")
    assert formatted.markers == {"one": "Smith, 2017a", "two": "Smith, 2017b"}
    assert "(2017a). First." in plain_text(formatted.entries["one"])
