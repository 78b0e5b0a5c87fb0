"""notes.excerpts: one rule for what every page quotes of a note, and every quote inert.

`excerpt_note` is the note the feed, search, tag-page and meta tests quote: inline and display
math, a \\ref to a lemma, a \\cite, a Mermaid diagram, a code block and a pseudo-algorithm.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from notes.excerpts import DESCRIPTION, excerpt_of
from notes.models import Note
from scidraft.site.models import SiteSettings
from tests.factories import imported_note, imported_page, site_bib_file
from tests.markup.test_excerpt import NOTE as ENGINE_NOTE
from tests.markup.xss import BODY_PAYLOADS, violations

pytestmark = pytest.mark.django_db

# The engine's sample note (tests/markup/test_excerpt.py), citing this module's bibliography.
BODY = ENGINE_NOTE.replace("\\cite{vaswani}", "\\cite{vaswani2017}").replace(
    'bib="bib/r.bib"', 'bib="bib/excerpt.bib"'
)
BIB = "@article{vaswani2017, title={Attention}, author={Vaswani, Ashish}, year={2017}}"
# What no excerpt may show: diagram, code and algorithm text, raw commands.
LEFT_OUT = ("Mermaidnode", "codeword", "Algoword", "\\cite", "\\ref", "\\label")


def excerpt_note(slug: str = "excerpt-note", body: str = BODY, **fields) -> Note:
    """The note every excerpt test quotes, published yesterday and tagged `Excerpts`."""
    site_bib_file("bib/excerpt.bib", BIB)
    fields.setdefault("title", "Excerpt Note")
    fields.setdefault("tags", ["Excerpts"])
    return imported_note(slug, body, **fields)


def search_page() -> None:
    """The standalone page that serves /search/ (layout "search")."""
    imported_page("search", title="Search", layout="search")


def test_written_description_and_summary_win():
    """A description (where the theme prefers it) or a summary is quoted whole, as written;
    without them the card's opening words are."""
    note = excerpt_note(summary="A summary with $x^2$.", description="The description.")
    assert excerpt_of(note).text() == "A summary with \\(x^2\\)."
    assert excerpt_of(note, lead=DESCRIPTION).text() == "The description."
    note.summary = note.description = ""
    assert excerpt_of(note).text().startswith("By Lemma 1 and [1], the sum \\(\\sum_i x_i\\)")


def test_author_date_citations_keep_their_label():
    """In an author–date style the citation reads as the style prints it."""
    site = SiteSettings.objects.current()
    site.citation_style = "apa"
    site.save()
    text = excerpt_of(excerpt_note()).text()
    assert text.startswith("By Lemma 1 and (Vaswani, 2017), the sum")


def test_excerpt_reads_a_bounded_prefix_of_the_card():
    """Lists read `excerpt_source`, the start of the card: the excerpt is the same as from
    the whole card."""
    note = excerpt_note()
    listed = Note.objects.with_excerpt_source().get(pk=note.pk)
    assert listed.excerpt_source == note.rendered_card_html  # shorter than the prefix
    assert excerpt_of(listed).text() == excerpt_of(note).text()


def test_a_card_quoted_again_is_read_once_and_a_changed_card_anew(monkeypatch):
    """A list rendered again quotes the same cards: each card's excerpt is read from its HTML
    once (and its HTML made once), until the card changes."""
    from notes import excerpts
    from scidraft.markup import excerpt as engine

    reads = []
    segments_from_html = engine.segments_from_html

    def counting(html, *args):
        reads.append(html)
        return segments_from_html(html, *args)

    monkeypatch.setattr(engine, "segments_from_html", counting)
    excerpts._card_excerpts.clear()  # an earlier test may have quoted the same card
    note = excerpt_note()
    first = [excerpt_of(note).html() for _ in range(3)]
    assert len(reads) == 1 and first[0] == first[1] == first[2]
    words = excerpts.SUMMARY_WORDS
    made = engine.excerpt(segments_from_html(note.rendered_card_html, words + 1), words=words)
    assert first[0] == made._html(None, "…")  # what it is made of without the caches
    note.rendered_card_html = "<p>Since then.</p>" + note.rendered_card_html
    assert excerpt_of(note).text().startswith("Since then. By Lemma 1") and len(reads) == 2


PAYLOADS = "\n\n".join(payload for _, payload in BODY_PAYLOADS)


def test_payloads_stay_inert_in_every_quote(client):
    """The XSS corpus at the start of a note: the RSS description, the tag page, the search
    preview, index.json and the note's meta carry nothing that runs."""
    body = f"Quuxword opens.\n\n{PAYLOADS}"
    excerpt_note("payloads", body, tags=["Payloads"], title="Payloads")
    search_page()
    for note in Note.objects.filter(slug="payloads"):
        for lead in ((), DESCRIPTION):
            quoted = excerpt_of(note, lead=lead, words=10_000)
            assert not violations(quoted.html()), quoted.html()
    rss = ET.fromstring(client.get("/index.xml").content)  # noqa: S314 - our own output
    for item in rss.iter("item"):
        assert not violations(item.findtext("description")), item.findtext("description")
    tag_page = client.get("/tags/payloads/").content.decode()
    entry = tag_page.split('<div class="entry-content">')[1].split("</div>")[0]
    assert not violations(entry) and "<a " not in entry and "<img" not in entry
    search = client.get("/search/", {"q": "quuxword"}).content.decode()
    preview = search.split('<div class="search-preview">')[1].split("</div>")[0]
    assert not violations(preview) and "<a " not in preview and "<img" not in preview
    index = json.loads(client.get("/index.json").content)
    summary = next(entry["summary"] for entry in index if entry["title"] == "Payloads")
    assert summary.startswith("Quuxword opens.")
    page = client.get("/notes/payloads/").content.decode()
    head = page.split("</head>")[0]
    assert not re.search(r"<(?:script|img|iframe|svg)\b(?![^>]*(?:src=\"/static|ld\+json))", head)
