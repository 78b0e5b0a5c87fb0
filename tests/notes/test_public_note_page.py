"""A note's own page with the test client: the large card with its Prev / Next links,
recommendations, share buttons and "Cite this note" block, the styled 404 for an unknown note,
and the page head's title, description, keywords, canonical link, OpenGraph, Twitter, JSON-LD
and Google Scholar tags (docs/theme.md#the-note-page, #feeds-sitemap-and-meta)."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.markup.dom import Element
from tests.notes.public_pages import DEMO_BASE, SEP_22, dated, get, html, make_note, meta, site

pytestmark = pytest.mark.django_db

SHARE_ORDER = ["x", "linkedin", "reddit", "facebook", "whatsapp", "telegram", "ycombinator"]


# --- The note page -----------------------------------------------------------------------------


def test_note_page_elements(client, db):
    """The large card and its navigation, in the theme's classes (docs/theme.md#the-note-page)."""
    site(recommendation_count=2)
    dated(5, tags=["Demo"])
    tree = html(client, "/notes/note-02/")
    article = tree.one("main > article.note-card.note-single")
    assert article.has("header.note-head span.note-avatar")
    assert article.has("div.note-body.md-content")
    assert article.one("footer.note-tags a.note-tag").get("href") == "/tags/demo/"
    assert _share_names(tree) == SHARE_ORDER

    nav = tree.one("nav.paginav")
    prev, nxt = nav.one("a.prev"), nav.one("a.next")
    # « Prev is the newer note, as in the theme's pages built by Hugo (its $pages.Next).
    assert prev.get("href") == "/notes/note-01/"  # newer
    assert nxt.get("href") == "/notes/note-03/"  # older
    assert prev.one("span.title").flat_text == "« Prev" and "Note 01" in prev.flat_text
    assert nxt.one("span.title").flat_text == "Next »" and "Note 03" in nxt.flat_text

    recommendations = tree.one("nav.note-recommendations").select("li a")
    assert len(recommendations) == 2
    assert "/notes/note-02/" not in [a.get("href") for a in recommendations]

    back = tree.one("nav.notes-pagination a.button")
    assert (back.flat_text, back.get("href")) == ("« Back to feed", "/notes/")
    assert "data-copy-code" in tree.one("body").attrs
    assert not tree.has(".breadcrumbs") and not tree.has("details.toc")


def test_note_page_ends_of_the_chain(client, db):
    """The newest note has no Prev, the oldest no Next; no wrap-around."""
    dated(3)
    assert not html(client, "/notes/note-00/").has("nav.paginav a.prev")
    assert html(client, "/notes/note-00/").has("nav.paginav a.next")
    assert not html(client, "/notes/note-02/").has("nav.paginav a.next")
    assert html(client, "/notes/note-02/").has("nav.paginav a.prev")


def test_recommendations_are_stable(client, db):
    """Reloading a note page shows the same recommendations."""
    dated(12)
    first = [
        a.get("href") for a in html(client, "/notes/note-05/").select("nav.note-recommendations a")
    ]
    assert len(first) == 3
    again = [
        a.get("href") for a in html(client, "/notes/note-05/").select("nav.note-recommendations a")
    ]
    assert again == first


def test_copy_code_switch(client, db):
    """body[data-copy-code] follows ShowCodeCopyButtons."""
    make_note("code", "```python\nprint(1)\n```\n")
    assert "data-copy-code" in html(client, "/notes/code/").one("body").attrs
    site(show_code_copy_buttons=False)
    assert "data-copy-code" not in html(client, "/notes/code/").one("body").attrs


def test_cite_this_note(client, db):
    """The "Cite this note" block: formatted citation, BibTeX and working cite.* links."""
    make_note("citable", authors=["Ada Novak"])
    block = html(client, "/notes/citable/").one("article.note-single details.cite-note")
    assert block.one("summary").flat_text == "Cite this note"
    hrefs = [a.get("href") for a in block.select("a")]
    for suffix in ("cite.bib", "cite.ris", "cite.json"):
        assert f"/notes/citable/{suffix}" in hrefs
        assert get(client, f"/notes/citable/{suffix}").content
    assert "Novak" in block.one(".cite-text").flat_text
    assert "@" in block.one("pre.cite-bibtex").flat_text


def test_unknown_note_is_a_styled_404(client, db):
    """An unknown note answers 404 with the site's styled page."""
    tree = html(client, "/notes/no-such-note/", 404)
    assert tree.one("div.not-found").flat_text == "404"
    assert tree.has("header.header") and tree.has("footer.footer")
    assert any("scidraft.css" in link.get("href") for link in tree.select("link[rel=stylesheet]"))
    assert meta(tree, "robots") == ["noindex, nofollow"]
    html(client, "/no-such-page/", 404)


# --- Share buttons -----------------------------------------------------------------------------


def test_disable_share(client, db):
    """disableShare removes the share row; the site switch does too."""
    make_note("quiet", disable_share=True)
    make_note("loud")
    assert not html(client, "/notes/quiet/").has("ul.share-buttons")
    assert html(client, "/notes/loud/").has("ul.share-buttons")
    site(show_share_buttons=False)
    assert not html(client, "/notes/loud/").has("ul.share-buttons")


def _share_names(tree: Element) -> list[str]:
    return [
        a.get("aria-label").removeprefix("share on ") for a in tree.select("ul.share-buttons li a")
    ]


def test_share_buttons_in_theme_order_and_restricted(client, db):
    """All seven buttons in theme order; a note's or the site's list restricts (order kept)."""
    make_note("all", tags=["Linear Algebra"])
    make_note("some", share_buttons=["telegram", "x", "reddit"])
    tree = html(client, "/notes/all/")
    assert _share_names(tree) == SHARE_ORDER
    x = tree.one("ul.share-buttons a[aria-label='share on x']")
    assert x.get("href").startswith("https://x.com/intent/tweet/")
    assert "hashtags=LinearAlgebra" in x.get("href")
    assert all(a.get("rel") == "noopener noreferrer" for a in tree.select("ul.share-buttons a"))
    assert _share_names(html(client, "/notes/some/")) == ["x", "reddit", "telegram"]
    site(share_buttons=["ycombinator", "linkedin"])
    assert _share_names(html(client, "/notes/all/")) == ["linkedin", "ycombinator"]
    assert _share_names(html(client, "/notes/some/")) == ["x", "reddit", "telegram"]


# --- Head meta ---------------------------------------------------------------------------------


def test_note_head_meta(client, db):
    """Title `Title | Site`, description, keywords, canonical, OpenGraph, Twitter and JSON-LD."""
    site(title="Lab Notes", base_url="https://lab.example/")
    make_note(
        "meta-note",
        "Body text.",
        title="On Meta",
        description="What the note says.",
        keywords=["alpha", "beta"],
        tags=["Gamma"],
        authors=["Ada Novak"],
    )
    tree = html(client, "/notes/meta-note/")
    assert tree.one("head title").flat_text == "On Meta | Lab Notes"
    assert meta(tree, "description") == ["What the note says."]
    assert meta(tree, "keywords") == ["alpha, beta"]
    url = "https://lab.example/notes/meta-note/"
    assert tree.one("head link[rel=canonical]").get("href") == url
    assert meta(tree, "og:title") == ["On Meta"]
    assert meta(tree, "og:type") == ["article"]
    assert meta(tree, "og:url") == [url]
    assert meta(tree, "og:site_name") == ["Lab Notes"]
    assert meta(tree, "og:description") == ["What the note says."]
    assert meta(tree, "article:tag") == ["Gamma"]
    published = dt.datetime.fromisoformat(meta(tree, "article:published_time")[0])
    assert published == SEP_22
    assert meta(tree, "twitter:card") == ["summary"]
    assert meta(tree, "twitter:title") == ["On Meta"]
    scripts = tree.select("script[type='application/ld+json']")
    assert len(scripts) == 1
    data = json.loads(scripts[0].raw_text)
    assert data["@context"] == "https://schema.org"
    assert data["headline"] == "On Meta" and data["url"] == url
    assert [author["name"] for author in data["author"]] == ["Ada Novak"]
    assert dt.datetime.fromisoformat(data["datePublished"]) == SEP_22


def test_a_huge_description_is_cut_in_the_head(client, db):
    """A 2 MB description is quoted to about META_CHARS characters, whole words, in the meta
    description, OpenGraph and JSON-LD alike, instead of being copied into the head four
    times; what the page head reads of it is bounded too."""
    from notes.excerpts import META_CHARS

    make_note("long-description", description="word $x^2$ and text " * 100_000)
    tree = html(client, "/notes/long-description/")
    (described,) = meta(tree, "description")
    assert described.startswith("word \\(x^2\\) and text word")
    # About META_CHARS of text: a formula counts its TeX, shown with its delimiters.
    assert described.endswith("…") and len(described) <= 2 * META_CHARS
    assert meta(tree, "og:description") == [described]
    data = json.loads(tree.one("script[type='application/ld+json']").raw_text)
    assert data["description"] == described


def test_a_huge_summary_is_cut_in_cite_this_note(client, db):
    """A 2 MB summary: "cite this note" (the page's BibTeX block, cite.bib, cite.ris) gives
    an abstract of at most ABSTRACT_CHARS characters, cut at a word, and the page stays small."""
    from notes.citing import ABSTRACT_CHARS

    make_note("long-summary", summary="summary words " * 150_000)
    page = get(client, "/notes/long-summary/")
    assert len(page.content) < 100_000
    bibtex = get(client, "/notes/long-summary/cite.bib").content.decode()
    (abstract,) = re.findall(r"abstract = \{(.*)\}", bibtex)
    assert abstract.startswith("summary words summary") and abstract.endswith("words…")
    assert len(abstract) <= ABSTRACT_CHARS
    ris = get(client, "/notes/long-summary/cite.ris").content.decode()
    assert len(ris) < ABSTRACT_CHARS + 1_000


def test_keywords_fall_back_to_tags_and_canonical_override(client, db):
    """No keywords: the tags, in the order the note gives them; canonicalURL replaces the
    canonical link."""
    make_note(
        "fallback", tags=["Zeta", "Alpha"], canonical_url="https://elsewhere.example/original/"
    )
    tree = html(client, "/notes/fallback/")
    assert meta(tree, "keywords") == ["Zeta, Alpha"]
    assert tree.one("link[rel=canonical]").get("href") == "https://elsewhere.example/original/"


def test_json_ld_cannot_close_its_script(client, db):
    """A title with </script> stays inside the JSON-LD data block, which still parses."""
    make_note("evil", title="</script><script>alert(1)</script>")
    tree = html(client, "/notes/evil/")
    scripts = tree.select("script")
    assert all(s.get("src") or s.get("type") == "application/ld+json" for s in scripts)
    data = json.loads(tree.one("script[type='application/ld+json']").raw_text)
    assert data["headline"] == "</script><script>alert(1)</script>"


def test_meta_descriptions_quote_the_rendered_opening(client, db):
    """Without a description or summary, the meta, OpenGraph, Twitter and JSON-LD descriptions
    are the note's first 30 words as plain text: labels kept, TeX between delimiters."""
    from tests.notes.test_excerpts import LEFT_OUT, excerpt_note

    excerpt_note()
    tree = html(client, "/notes/excerpt-note/")
    (description,) = meta(tree, "description")
    assert description.startswith("By Lemma 1 and [1], the sum \\(\\sum_i x_i\\) is unchanged.")
    assert meta(tree, "og:description") == [description]
    assert meta(tree, "twitter:description") == [description]
    data = json.loads(tree.one("script[type='application/ld+json']").raw_text)
    assert data["description"] == description
    assert not any(text in description for text in LEFT_OUT)


def test_google_scholar_tags(client, demo_loaded):
    """Highwire tags on a demo note: one citation_reference per distinct cited entry."""
    slug = "method-citations-two-bibliographies"
    tree = html(client, f"/notes/{slug}/")
    assert meta(tree, "citation_title") == ["A Calibration Study Cited from Two Bibliographies"]
    assert meta(tree, "citation_author") == ["halden-lab"]
    assert meta(tree, "citation_publication_date") == ["2026/11/17"]
    assert meta(tree, "citation_online_date") == ["2026/11/17"]
    assert meta(tree, "citation_journal_title") == ["Halden Notes"]
    assert meta(tree, "citation_fulltext_html_url") == [f"{DEMO_BASE}/notes/{slug}/"]
    source = (Path(settings.SCIDRAFT_DEMO_DIR) / "content" / "notes" / f"{slug}.md").read_text()
    keys = {
        key.strip()
        for group in re.findall(r"\\cite[tp]?\{([^}]*)\}", source)
        for key in group.split(",")
    }
    references = meta(tree, "citation_reference")
    assert len(references) == len(keys) == 30
    assert len(set(references)) == len(references)
    assert any("Equation of State Calculations" in ref for ref in references)


def test_scholar_reference_of_a_huge_title_is_bounded_and_decoded_before_the_page(client, db):
    """A cited entry with a 1.9 MB title full of LaTeX accents: its citation_reference was
    decoded when the file was read, cut to SCHOLAR_VALUE_CHARS a value, so the reader's first
    page does no decoding (it took 13.7 s of CPU) and carries a short tag."""
    from bibliography.exports import SCHOLAR_VALUE_CHARS
    from bibliography.models import BibEntry
    from bibliography.services import bibfile_import

    title = 'Sch\\"onhage und Stra\\ss en multiplizieren ' * 45_500
    assert 1_900_000 < len(title) < 2_000_000
    bibfile_import(
        name="bib/long.bib",
        raw=f'@article{{long, title = {{{title}}}, author = {{Sch\\"onhage, A.}}, year = 1971}}',
    )
    stored = BibEntry.objects.get(key="long").scholar
    assert stored.startswith("citation_title=Schönhage und Straßen multiplizieren")
    make_note("huge-title", body='See \\cite{long}.\n\n{{< references bib="bib/long.bib" >}}\n')
    start = time.process_time()
    tree = html(client, "/notes/huge-title/")
    cpu = time.process_time() - start
    (reference,) = meta(tree, "citation_reference")
    assert reference == stored
    title_part = reference.split("; ")[0]
    assert len(title_part) <= len("citation_title=") + SCHOLAR_VALUE_CHARS
    assert title_part.endswith("…")
    assert "citation_author=Schönhage, A." in reference
    assert cpu < 2.0, f"{cpu:.2f} s of CPU for the page"
