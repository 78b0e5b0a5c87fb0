"""Search (docs/theme.md#search-and-the-search-index): ranking, phrases, exclusions, excerpts,
escaping, pagination.

The same tests run on SQLite (the theme's scoring, in Python) and PostgreSQL (full-text search).
"""

from __future__ import annotations

import datetime as dt
import html
import re

import pytest
from django.db import connection
from django.utils import timezone

from notes import search, search_index
from notes.models import Note, Page, Status
from scidraft.markup import excerpt
from scidraft.site.models import SiteSettings
from tests.factories import note_row, note_rows

pytestmark = pytest.mark.django_db


def _slugs(query: str) -> list[str]:
    hits = search.search_notes(query)
    notes = dict(Note.objects.filter(pk__in=[h.pk for h in hits]).values_list("pk", "slug"))
    pages = dict(Page.objects.filter(pk__in=[h.pk for h in hits]).values_list("pk", "slug"))
    return [(notes if hit.kind == "note" else pages)[hit.pk] for hit in hits]


def _items(response) -> list[str]:
    return re.findall(r'<li class="search-result-item">(.*?)</li>', response.text, re.S)


def test_backend_follows_the_database(demo_loaded):
    """PostgreSQL uses full-text search; every other database the Python fallback."""
    assert search.use_full_text() is (connection.vendor == "postgresql")


def test_tokenise_keeps_quoted_phrases():
    """Quoted phrases stay one term; other words are lower-cased tokens."""
    assert search.tokenise('Power "Largest Eigenvalue" power x') == [
        "power",
        "largest eigenvalue",
        "x",
    ]


def test_title_match_ranks_first(demo_loaded):
    """A note with the word in its title ranks above notes that only mention it."""
    slugs = _slugs("Gershgorin")
    assert slugs[0] == "result-proof-gershgorin-discs"
    assert "result-criterion-diagonal-dominance-jacobi" in slugs[1:]


def test_finds_by_summary_and_body(demo_loaded):
    """Words only in a summary or only in the body text are found."""
    assert "result-proposition-power-iteration-rate" in _slugs("settle")
    assert "result-rule-composite-simpson" in _slugs("sixteenfold")


def test_quoted_phrase(demo_loaded):
    """A quoted phrase matches the words together, not scattered."""
    assert "result-proposition-power-iteration-rate" in _slugs('"power iteration"')
    note_row(
        "scattered-words", "Iteration of the loop, with power drawn from the grid.", rendered=True
    )
    assert "scattered-words" in _slugs("power iteration")
    assert "scattered-words" not in _slugs('"power iteration"')


def test_standalone_pages_are_results(demo_loaded):
    """Published standalone pages are searched too; searchHidden pages are not."""
    assert "methods-a-to-z" in _slugs("technique")
    assert "about" not in _slugs("Halden Notes notebook")


def test_excludes_hidden_draft_scheduled_and_empty(demo_loaded):
    """searchHidden, drafts, scheduled and empty notes never appear."""
    assert "method-tables-solver-benchmarks" not in _slugs("Benchmarking")
    assert "method-draft-checkpoint-interval" not in _slugs("checkpoint")
    assert "method-mermaid-campaign-gantt" not in _slugs("Gantt")
    Note.objects.create(
        slug="empty-note",
        title="Zymurgy",
        body="  ",
        status=Status.PUBLISHED,
        date=timezone.now() - dt.timedelta(days=1),
    )
    assert _slugs("Zymurgy") == []


def test_short_query_shows_nothing(client, demo_loaded):
    """Under two characters: no results list and no "no results" message."""
    response = client.get("/search/", {"q": "a"})
    assert response.status_code == 200
    assert "search-results-list" not in response.text
    assert "search-no-results" not in response.text
    assert search.search_notes("a") == []


def test_page_markup_and_highlight(client, demo_loaded):
    """Results carry the theme's classes, a highlighted title, date and tags."""
    response = client.get("/search/", {"q": "Gershgorin"})
    assert response.status_code == 200
    text = response.text
    assert 'id="search-container"' in text and 'id="search-input"' in text
    assert 'value="Gershgorin"' in text
    assert 'placeholder="Search notes, results and methods…"' in text
    first = _items(response)[0]
    assert re.search(
        # h2 under the page's h1 (the theme's h3 skipped a level), at the theme's size.
        r'<h2><a href="/notes/result-proof-gershgorin-discs/">Proof of the '
        r'<mark class="search-highlight">Gershgorin</mark>',
        first,
    )
    assert '<div class="search-preview">' in first
    assert '<mark class="search-highlight">Gershgorin</mark>' in first.split("search-preview")[1]
    assert "Oct 12, 2026" in first
    # The note's tags in its front matter's order (Proof, Linear Algebra), not by name.
    assert re.findall(r'class="note-tag" href="[^"]+">([^<]+)</a>', first) == [
        "#Proof",
        "#Linear Algebra",
    ]


def test_excerpt_typesets_math(client, demo_loaded):
    """Formulas in an excerpt arrive typeset by KaTeX, never highlighted inside."""
    item = _items(client.get("/search/", {"q": "Gershgorin"}))[0]
    preview = item.split('<div class="search-preview">')[1]
    assert 'class="katex"' in preview
    assert "\\mathbb" not in re.sub(r"<annotation.*?</annotation>", "", preview, flags=re.S)
    katex = re.findall(r'<span class="katex">.*?</annotation>', preview, re.S)
    assert katex and all("search-highlight" not in part for part in katex)


def test_excerpt_math_in_summary_source():
    """`$..$` and `\\(..\\)` in a summary are typeset; a bad formula stays as escaped source."""
    segments = excerpt.segments_from_text(r"Rate \(|\lambda_2|\) and $x<y$ and \(\frac{\)")
    found = excerpt.Excerpt(segments)
    html_out = found.html()
    assert found.has_math and html_out.count('class="katex"') == 2
    assert "\\frac{" in html.unescape(html_out)
    assert "<y" not in html_out.replace("&lt;y", "")


def test_excerpt_is_escaped_and_cut_at_words(client, demo_loaded):
    """Stored text is escaped before marks are added; long text is cut with an ellipsis."""
    filler = " ".join(f"word{index}" for index in range(120))
    note_row("escape-me", f"{filler} Quuxly AT&T and `<b onmouseover=x>` {filler}", rendered=True)
    item = _items(client.get("/search/", {"q": "quuxly"}))[0]
    preview = item.split('<div class="search-preview">')[1].split("</div>")[0]
    assert "AT&amp;T" in preview
    assert "<b onmouseover" not in preview and "&lt;b onmouseover=x&gt;" in preview
    assert preview.startswith("… word") and preview.endswith(" …")
    assert re.search(r"… word\d+ ", preview) and re.search(r" word\d+ …$", preview)
    assert '<mark class="search-highlight">Quuxly</mark>' in preview
    assert len(re.sub(r"<[^>]+>", "", html.unescape(preview))) < 360


def test_xss_query_is_reflected_escaped(client, demo_loaded):
    """A script payload in q is shown as text in the input and the no-results message."""
    payload = '"><script>alert(1)</script><img src=x onerror=alert(1)>'
    response = client.get("/search/", {"q": payload})
    assert response.status_code == 200
    assert "<script>alert(1)" not in response.text
    assert "<img src=x" not in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert '<p class="search-no-results">No results found for "&quot;&gt;&lt;script' in (
        response.text
    )


def test_pagination(client, demo_loaded):
    """Results are paged with the numbered bar and ?q=…&page=N links."""
    site = SiteSettings.objects.current()
    site.pager_size = 2
    site.save()
    total = len(search.search_notes("matrix"))
    assert total >= 5
    response = client.get("/search/", {"q": "matrix", "page": 2})
    assert len(_items(response)) == 2
    text = response.text
    assert '<nav class="numbered-pagination"' in text
    assert 'class="page-num active" aria-current="page" href="?q=matrix&amp;page=2"' in text
    assert 'class="page-step prev" href="?q=matrix&amp;page=1"' in text
    assert 'class="page-step next" href="?q=matrix&amp;page=3"' in text
    last = client.get("/search/", {"q": "matrix", "page": 999})
    assert f'aria-current="page" href="?q=matrix&amp;page={-(-total // 2)}"' in last.text
    assert "page-step next" not in last.text


def test_postgres_stemming_or_fallback_substring(client, demo_loaded):
    """PostgreSQL matches and highlights word forms (stemming); the fallback, substrings."""
    if connection.vendor == "postgresql":
        assert "result-theorem-doeblin-convergence" in _slugs("converging")
        response = client.get("/search/", {"q": "converging"})
        assert '<mark class="search-highlight">Convergence</mark>' in response.text
    else:
        assert _slugs("gershgor")[0] == "result-proof-gershgorin-discs"
        assert "result-theorem-doeblin-convergence" in _slugs("converg")


def test_constant_queries(client, demo_loaded, django_assert_max_num_queries):
    """The search page runs the same bounded number of queries at 30 and 230 notes."""
    # 15: one is which pages are search pages, read once per content generation (each write
    # here starts a new one; notes.views.page_query: only their pages are keyed by `q`); on
    # PostgreSQL four bound the highlights' time (a savepoint, the timeout set and restored).
    with django_assert_max_num_queries(15):
        assert client.get("/search/", {"q": "matrix"}).status_code == 200
    note_rows(
        200,
        title="Extra matrix note {}",
        body="A matrix note.",
        text="A matrix note about the spectrum.",
    )
    search_index.vectors_store(Note.objects.filter(slug__startswith="extra-"))  # as has_body
    for note in Note.objects.filter(slug__startswith="extra-")[:50]:
        note.tags.add(*Note.objects.get(slug="result-proof-gershgorin-discs").tags.all())
    with django_assert_max_num_queries(15):
        response = client.get("/search/", {"q": "matrix", "page": 3})
    assert response.status_code == 200 and len(_items(response)) == 8


def test_preview_leaves_out_blocks_and_keeps_labels(client, db):
    """A search preview shows the passage around the match with references as labels and
    formulas typeset, never a diagram's, code's or algorithm's text, and never marks inside a
    formula (`sum` is in `\\sum`)."""
    from tests.notes.test_excerpts import LEFT_OUT, excerpt_note, search_page

    excerpt_note()
    search_page()
    item = _items(client.get("/search/", {"q": "sum"}))[0]
    preview = item.split('<div class="search-preview">')[1].split("</div>")[0]
    assert preview.startswith('By Lemma 1 and [1], the <mark class="search-highlight">sum</mark>')
    assert preview.count("search-highlight") == 1
    assert preview.count('<span class="katex">') == 3
    assert not any(text in preview for text in LEFT_OUT)


def test_words_only_in_code_are_still_found(client, db):
    """Full-text search indexes every word of the note, code included, though previews leave
    code out: a note is found by a word of its code block and shows its opening."""
    from tests.notes.test_excerpts import excerpt_note, search_page

    excerpt_note()
    search_page()
    assert _slugs("codeword") == ["excerpt-note"]
    item = _items(client.get("/search/", {"q": "codeword"}))[0]
    preview = item.split('<div class="search-preview">')[1].split("</div>")[0]
    assert preview.startswith("By Lemma 1 and [1]") and "codeword" not in preview


def test_words_after_a_less_than_sign_in_math_are_found(db):
    """A `<` in a formula is text: the paragraphs after it are searchable (they were cut from
    the search text up to the next tag, so "zebra" found nothing)."""
    note_row(
        "angles", "Let $0 < x$ hold.\n\nThe zebra sentence.\n\nThen $y > 0$ follows.", rendered=True
    )
    assert _slugs("zebra") == ["angles"]


def test_the_demo_note_that_mentions_folders_is_found(demo_loaded):
    """The demo's project-layout note, whose words followed a `<` in code, is found by them."""
    assert "method-code-simulation-project-layout" in _slugs("folders")


def test_oversized_queries_are_refused_with_a_message(client, demo_loaded):
    """A query over 200 characters or 16 words is not searched; the page says why."""
    long = "Gershgorin " + "x" * 250
    response = client.get("/search/", {"q": long})
    assert response.status_code == 200
    assert "A search is at most 200 characters; this one has 261." in response.text
    assert "search-results-list" not in response.text
    assert search.search_notes(long) == []
    wordy = " ".join(["Gershgorin"] * 17)
    response = client.get("/search/", {"q": wordy})
    assert "A search is at most 16 words; this one has 17." in response.text
    assert "search-results-list" not in response.text
    assert search.search_notes(wordy) == []
    assert _slugs(" ".join(["Gershgorin"] * 16))


# --- Bounded ranking: the newest SEARCH_CANDIDATES matches ------------------------------------

DEMO_QUERIES = (
    "matrix", "Gershgorin", "settle", '"power iteration"', "power iteration", "technique",
    "converging", "eigenvalue -matrix", "Simpson or Jacobi", "the", "of",
)  # fmt: skip


def test_results_on_the_demo_are_those_of_ranking_every_match(demo_loaded, monkeypatch):
    """Under the cap, ranking only the newest matches changes nothing: the same hits, scores
    and order as ranking every match (a cap larger than the site)."""
    bounded = {query: search.search_notes(query) for query in DEMO_QUERIES}
    assert all(len(hits) < search.SEARCH_CANDIDATES for hits in bounded.values())
    assert not any(search.capped(hits) for hits in bounded.values())
    monkeypatch.setattr(search, "SEARCH_CANDIDATES", 10**6)
    assert {query: search.search_notes(query) for query in DEMO_QUERIES} == bounded
    assert sum(len(hits) for hits in bounded.values()) > 20  # stop words find none on PostgreSQL


def test_a_query_matching_more_than_the_cap_ranks_the_newest_matches(client, db, monkeypatch):
    """Past SEARCH_CANDIDATES matches, the newest that many are ranked and shown, best
    first, and the page says there are more ("5+ results")."""
    from tests.factories import imported_page

    imported_page("search", "Search.", title="Search", layout=Page.Layout.SEARCH)
    extra = note_rows(12, title="Extra {}", body="A lattice note.", text="A lattice note.")
    note_row("lattice-title", "Lattice.", title="Lattice", rendered=True,
             date=timezone.now() - dt.timedelta(days=30))  # fmt: skip
    search_index.vectors_store(Note.objects.all())
    monkeypatch.setattr(search, "SEARCH_CANDIDATES", 5)
    hits = search.search_notes("lattice")
    newest = [note.pk for note in extra[:5]]  # extra-0 is the newest
    assert sorted(hit.pk for hit in hits) == sorted(newest)
    assert search.capped(hits)
    # The best-ranked note of all is older than the newest five: not among the five.
    assert Note.objects.get(slug="lattice-title").pk not in [hit.pk for hit in hits]
    response = client.get("/search/", {"q": "lattice"})
    assert '<p class="search-count">5+ results</p>' in response.text
    assert len(_items(response)) == 5
