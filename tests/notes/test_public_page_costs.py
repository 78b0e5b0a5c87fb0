"""What a public page costs, with the test client: it loads Mermaid's script and KaTeX's and
Pygments' stylesheets only for what is on it, runs no inline script and never KaTeX's
JavaScript, sends the security headers, and makes as many queries with 500 notes as with 10,
reading one page of rows for a tag's or an author's list."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.cache import cache

from notes.models import Author, Note, NoteAuthor, Status, Tag
from notes.rendering import RENDERED_FIELDS
from scidraft.site.models import SiteSettings
from tests.markup.dom import Element, parse
from tests.notes.public_pages import PREVIEW, SEP_22, _search_page, get, html, make_note, site

pytestmark = pytest.mark.django_db


# --- JavaScript budget and security headers ----------------------------------------------------


MERMAID = "A diagram:\n\n```mermaid\ngraph TD\n  A --> B\n```\n"


MATH = "Inline math \\(x^2 + y^2\\) here."


def _scripts(tree: Element) -> list[str]:
    return [s.get("src", "") for s in tree.select("script") if s.get("src")]


def _has_mermaid(tree: Element) -> bool:
    return any("mermaid" in src for src in _scripts(tree))


def _stylesheets(tree: Element) -> list[str]:
    return [link.get("href") for link in tree.select("link[rel=stylesheet]")]


def test_mermaid_script_only_with_a_diagram(client, db):
    """Mermaid's script loads on a feed page or note page only when a diagram is on it."""
    site(notes_per_page=1)
    make_note("diagram", MERMAID, date=SEP_22)
    make_note("plain", "No diagram.", date=SEP_22 - dt.timedelta(days=1))
    assert _has_mermaid(html(client, "/"))
    assert not _has_mermaid(html(client, "/page/2/"))
    assert _has_mermaid(html(client, "/notes/diagram/"))
    assert not _has_mermaid(html(client, "/notes/plain/"))
    assert html(client, "/notes/diagram/").has("pre.mermaid")


def test_a_feed_loads_only_what_its_cards_show(client, db):
    """A card shows its preview region only: a diagram (or code) past the region loads no
    Mermaid (nor Pygments' CSS) on the feed, and does on the note's page; a diagram inside
    the region does load it on the feed."""
    site(notes_per_page=1)
    make_note("behind", PREVIEW + "\n\n" + MERMAID + "\n```python\nx = 1\n```\n", date=SEP_22)
    feed = html(client, "/")
    assert not _has_mermaid(feed)
    assert not any("pygments" in href for href in _stylesheets(feed))
    page = html(client, "/notes/behind/")
    assert _has_mermaid(page)
    assert any("pygments" in href for href in _stylesheets(page))
    on_card = "{{< preview >}}\n" + MERMAID + "{{< /preview >}}\n\nThe rest."
    make_note("shown", on_card, date=SEP_22 + dt.timedelta(days=1))
    assert _has_mermaid(html(client, "/"))


def test_katex_css_only_with_math_and_never_katex_js(client, db):
    """Math arrives typeset: KaTeX's CSS only where math is, its JavaScript nowhere."""
    site(notes_per_page=1)
    make_note("maths", MATH, date=SEP_22)
    make_note("plain", "No math.", date=SEP_22 - dt.timedelta(days=1))
    _search_page()
    with_math = html(client, "/notes/maths/")
    assert any("katex" in href for href in _stylesheets(with_math))
    assert with_math.has("span.katex")
    assert any("katex" in href for href in _stylesheets(html(client, "/")))
    assert not any("katex" in href for href in _stylesheets(html(client, "/page/2/")))
    assert not any("katex" in href for href in _stylesheets(html(client, "/notes/plain/")))
    for url in ("/", "/page/2/", "/notes/maths/", "/notes/plain/", "/search/?q=math", "/tags/"):
        body = get(client, url).content
        assert b"katex.min.js" not in body and b"katex.js" not in body, url


def test_no_katex_js_on_the_demo(client, demo_loaded):
    """No demo page references katex.min.js."""
    for url in ("/", "/page/2/", "/notes/result-proof-gershgorin-discs/", "/results-a-to-z/",
                "/about/", "/search/?q=matrix", "/archives/"):  # fmt: skip
        assert b"katex.min.js" not in get(client, url).content, url


def test_no_inline_scripts(client, demo_loaded):
    """Every <script> has a src, except the JSON-LD data block."""
    urls = ["/", "/page/3/", "/notes/method-citations-two-bibliographies/",
            "/notes/method-mermaid-job-lifecycle-state/", "/tags/", "/tags/citations/",
            "/about/", "/results-a-to-z/", "/search/?q=matrix", "/archives/",
            "/authors/ada-novak/", "/notes/nope/"]  # fmt: skip
    for url in urls:
        response = client.get(url)
        for script in parse(response.content.decode()).select("script"):
            if script.get("src"):
                assert not script.raw_text.strip(), url
            else:
                assert script.get("type") == "application/ld+json", url


@pytest.mark.parametrize("url", ["/", "/notes/n/", "/tags/", "/index.xml", "/no-such-page/"])
def test_security_headers(client, db, url):
    """CSP without unsafe-inline scripts, nosniff, a referrer policy and frame denial."""
    make_note("n")
    response = client.get(url)
    policy = response["Content-Security-Policy"]
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    script_src = directives.get("script-src", directives.get("default-src"))
    assert script_src and "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"]
    assert response["X-Frame-Options"] in ("DENY", "SAMEORIGIN")


# --- Constant queries --------------------------------------------------------------------------


AUTHOR_HANDLES = ["ada", "ben"]


# Measured, uncached; the same at 10 and at 500 notes. Each includes the two queries that
# read the content generation on a cold cache (its value and the next scheduled note's date).
QUERY_BUDGET = {
    "feed first page": 13,
    "feed last page": 13,
    "note page": 15,
    "tag page": 9,
    "author page": 9,
    "tag index": 6,
    # Which pages are search pages: once per generation (notes.views.page_query); on PostgreSQL
    # four more bound the highlights' time (a savepoint, the timeout set and restored).
    "search": 15,
    "rss": 5,
    "sitemap": 7,  # the sitemap index: a chunk aggregate each for notes, tags and pages
    "index.json": 7,  # notes and pages counted and their text summed in SQL first
}


def _urls(total: int) -> dict[str, str]:
    per_page = SiteSettings.objects.current().notes_per_page
    return {
        "feed first page": "/",
        "feed last page": f"/page/{-(-total // per_page)}/",
        "note page": "/notes/bulk-0003/",
        "tag page": "/tags/common/",
        "author page": "/authors/ada/",
        "tag index": "/tags/",
        "search": "/search/?q=bulk",
        "rss": "/index.xml",
        "sitemap": "/sitemap.xml",
        "index.json": "/index.json",
    }


def _corpus_start():
    """A real rendered note to copy, two promotions, authors, tags and the search page."""
    site(promotions_per_page=1)
    template = make_note(
        "template",
        "Bulk note body with math \\(x^2\\).\n\n```python\nprint(1)\n```\n",
        title="Bulk template",
        tags=["Common", "Extra"],
        authors=AUTHOR_HANDLES,
        summary="A bulk note.",
        show_title=True,
    )
    for index in range(2):
        make_note(f"promo-{index}", "Promoted.", title="", promotion=True)
    _search_page()
    return template


def _bulk(template: Note, start: int, count: int) -> None:
    """`count` published copies of the template (rendered fields included), with tags and
    authors written through the through tables in bulk."""
    rendered = {name: getattr(template, name) for name in RENDERED_FIELDS}
    Note.objects.bulk_create(
        Note(
            slug=f"bulk-{index:04d}",
            title=f"Bulk note {index}",
            body=template.body,
            has_body=True,  # bulk_create skips save(), which keeps it
            status=Status.PUBLISHED,
            date=SEP_22 - dt.timedelta(hours=index + 1),
            date_offset_minutes=540,
            show_title=True,
            summary=template.summary,
            **rendered,
        )
        for index in range(start, start + count)
    )
    ids = list(
        Note.objects.filter(
            slug__in=[f"bulk-{index:04d}" for index in range(start, start + count)]
        ).values_list("pk", flat=True)
    )
    authors = list(Author.objects.filter(handle__in=AUTHOR_HANDLES).order_by("handle"))
    NoteAuthor.objects.bulk_create(
        NoteAuthor(note_id=pk, author=author, position=position)
        for pk in ids
        for position, author in enumerate(authors)
    )
    tags = list(Tag.objects.filter(name__in=["Common", "Extra"]))
    Note.tags.through.objects.bulk_create(
        Note.tags.through(note_id=pk, tag_id=tag.pk) for pk in ids for tag in tags
    )


@pytest.mark.parametrize("name", list(QUERY_BUDGET))
def test_constant_queries(client, db, django_assert_max_num_queries, settings, name):
    """The page costs the same number of queries with 10 notes as with 500."""
    settings.SCIDRAFT_INDEX_JSON_MAX_NOTES = 1000  # index.json served at 500 notes too
    settings.SCIDRAFT_INDEX_JSON_MAX_BYTES = 100_000_000
    template = _corpus_start()
    _bulk(template, 0, 10)
    budget = QUERY_BUDGET[name]
    url = _urls(Note.objects.published().regular().count())[name]
    cache.clear()  # measure the render, not the page cache
    with django_assert_max_num_queries(budget):
        response = client.get(url)
    assert response.status_code == 200, url

    _bulk(template, 10, 490)
    cache.clear()  # bulk_create sends no signals; the rows are new all the same
    total = Note.objects.published().regular().count()
    assert total >= 500
    url = _urls(total)[name]
    with django_assert_max_num_queries(budget):
        response = client.get(url)
    assert response.status_code == 200, url
    if name == "feed first page":
        assert len(parse(response.content.decode()).select("article.note-card")) == 8 + 1


@pytest.mark.parametrize(
    ("url", "notes"),
    [
        ("/tags/common/page/{}/", lambda: Note.objects.published().filter(tags__slug="common")),
        ("/authors/ada/page/{}/", lambda: Note.objects.published().filter(authors__handle="ada")),
    ],
)
def test_list_pages_read_one_page_of_rows(client, db, url, notes):
    """A tag's or an author's page reads its entries' rows for that page only: the ordered
    read of the notes has a LIMIT, and the entries' columns (their card HTML) are read by id;
    the entries are those of the feed's order, pinned notes first."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    template = _corpus_start()
    _bulk(template, 0, 60)
    Note.objects.filter(slug__in=["bulk-0040", "bulk-0007"]).update(weight=2)
    size = SiteSettings.objects.current().pager_size
    expected = list(notes().in_feed_order().values_list("slug", flat=True))
    for page in (1, 2, -(-len(expected) // size)):
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            tree = html(client, url.format(page))
        statements = [query["sql"] for query in captured.captured_queries]
        ordered = [sql for sql in statements if re.search(r'ORDER BY .*"date" DESC', sql)]
        assert ordered and all(re.search(r"\bLIMIT \d+", sql) for sql in ordered), ordered
        entries = [sql for sql in statements if "rendered_card_html" in sql]
        assert len(entries) == 1 and re.search(r'"id" IN \(', entries[0]), entries
        shown = [a.get("href") for a in tree.select(".tag-entry a.entry-link")]
        first = (page - 1) * size
        assert shown == [f"/notes/{slug}/" for slug in expected[first : first + size]]
