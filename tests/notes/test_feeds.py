"""index.json, RSS, sitemap.xml, robots.txt, archives, 404 and 500
(docs/theme.md#search-and-the-search-index, #feeds-sitemap-and-meta)."""

from __future__ import annotations

import datetime as dt
import json
import re
import xml.etree.ElementTree as ET

import pytest
from django.template import engines

from notes.feeds import rfc822, w3c
from notes.models import Note, Tag
from scidraft.site.generation import bump_generation
from scidraft.site.models import SiteSettings
from tests.factories import note_rows

pytestmark = pytest.mark.django_db

BASE = "http://testserver"  # the request's host: the demo sets no address of its own
NS = {"atom": "http://www.w3.org/2005/Atom", "content": "http://purl.org/rss/1.0/modules/content/"}
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def _rss(client, path="/index.xml"):
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/rss+xml; charset=utf-8"
    return ET.fromstring(response.content).find("channel")  # noqa: S314 - our own output


def _links(channel) -> list[str]:
    return [item.findtext("link") for item in channel.findall("item")]


def _settings(**values) -> None:
    site = SiteSettings.objects.current()
    for name, value in values.items():
        setattr(site, name, value)
    site.save()


def test_date_formats_are_locale_independent():
    """RFC 822 and W3C dates print the note's own offset with English names."""
    moment = dt.datetime(2026, 9, 22, 7, 20, tzinfo=dt.timezone(dt.timedelta(hours=9)))
    assert rfc822(moment) == "Tue, 22 Sep 2026 07:20:00 +0900"
    assert w3c(moment) == "2026-09-22T07:20:00+09:00"


def test_index_json(client, demo_loaded):
    """index.json lists published notes and pages, minus searchHidden, search and archives."""
    response = client.get("/index.json")
    assert response.status_code == 200
    entries = json.loads(response.content)
    links = {entry["permalink"] for entry in entries}
    assert f"{BASE}/notes/result-proof-gershgorin-discs/" in links
    assert f"{BASE}/methods-a-to-z/" in links
    assert f"{BASE}/notes/promo-halden-winter-school/" in links
    for hidden in ("notes/method-tables-solver-benchmarks", "about", "search", "archives"):
        assert f"{BASE}/{hidden}/" not in links
    assert f"{BASE}/notes/method-draft-checkpoint-interval/" not in links
    assert f"{BASE}/notes/method-mermaid-campaign-gantt/" not in links
    entry = next(e for e in entries if e["permalink"].endswith("/result-proof-gershgorin-discs/"))
    assert set(entry) == {"title", "content", "permalink", "summary"}
    assert "Gershgorin" in entry["content"] and entry["summary"]


def test_site_rss(client, demo_loaded, settings):
    """The site feed parses, dates a known note exactly and respects hiddenInRss."""
    settings.SCIDRAFT_RSS_LIMIT = 1000  # every demo note
    channel = _rss(client)
    assert channel.findtext("title") == "Halden Notes"
    assert channel.findtext("generator") == "SciDraft"
    assert channel.findtext("language") == "en-us"
    assert channel.find("atom:link", NS).get("href") == f"{BASE}/index.xml"
    items = {item.findtext("link"): item for item in channel.findall("item")}
    gronwall = items[f"{BASE}/notes/result-theorem-gronwall-inequality/"]
    # demo/content/notes/result-theorem-gronwall-inequality.md: 2026-11-02T10:00:00+01:00
    assert gronwall.findtext("pubDate") == "Mon, 02 Nov 2026 10:00:00 +0100"
    assert gronwall.findtext("guid") == f"{BASE}/notes/result-theorem-gronwall-inequality/"
    assert gronwall.findtext("description").startswith("Most stability statements")
    assert gronwall.find("content:encoded", NS) is None
    assert f"{BASE}/notes/promo-halden-winter-school/" in items
    assert f"{BASE}/notes/method-mermaid-pipeline-flowcharts/" not in items
    assert f"{BASE}/notes/method-draft-checkpoint-interval/" not in items
    assert f"{BASE}/notes/method-mermaid-campaign-gantt/" not in items
    dates = [item.findtext("pubDate") for item in channel.findall("item")]
    assert channel.findtext("lastBuildDate") == dates[0]
    assert all(re.fullmatch(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}", d) for d in dates)


def test_rss_description_prefers_description(client, demo_loaded, settings):
    """The item description is the note's description, else its summary, escaped."""
    settings.SCIDRAFT_RSS_LIMIT = 1000
    items = {i.findtext("link"): i for i in _rss(client).findall("item")}
    note = Note.objects.get(slug="method-pseudo-metropolis-hastings")
    assert items[f"{BASE}/notes/{note.slug}/"].findtext("description") == note.description
    note = Note.objects.get(slug="result-proposition-power-iteration-rate")
    assert items[f"{BASE}/notes/{note.slug}/"].findtext("description") == note.summary


def test_rss_full_text_option(client, demo_loaded, settings):
    """content:encoded carries the rendered HTML only when the site asks for full text."""
    settings.SCIDRAFT_RSS_LIMIT = 1000
    _settings(show_full_text_in_rss=True)
    items = {i.findtext("link"): i for i in _rss(client).findall("item")}
    content = items[f"{BASE}/notes/result-theorem-gronwall-inequality/"].find("content:encoded", NS)
    assert content is not None and 'class="katex"' in content.text


def test_rss_limit(client, demo_loaded):
    """rss_limit caps the number of items, newest first."""
    _settings(rss_limit=3)
    links = _links(_rss(client))
    assert links == [
        f"{BASE}/notes/result-rule-composite-simpson/",
        f"{BASE}/notes/method-citations-reference-heading/",
        f"{BASE}/notes/result-definition-contraction-mapping/",
    ]


def test_tag_rss(client, demo_loaded, settings):
    """A tag's feed lists only its notes, still without hiddenInRss ones; unknown tags 404."""
    settings.SCIDRAFT_RSS_LIMIT = 1000
    channel = _rss(client, "/tags/mermaid/index.xml")
    assert channel.findtext("link") == f"{BASE}/tags/mermaid/"
    links = _links(channel)
    expected = (
        Note.objects.published()
        .filter(tags__slug="mermaid", hidden_in_rss=False)
        .values_list("slug", flat=True)
    )
    assert sorted(links) == sorted(f"{BASE}/notes/{slug}/" for slug in expected)
    assert f"{BASE}/notes/method-mermaid-pipeline-flowcharts/" not in links
    assert client.get("/tags/no-such-tag/index.xml").status_code == 404


def _sitemap_files(client) -> list[str]:
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/xml")
    root = ET.fromstring(response.content)  # noqa: S314 - our own output
    assert root.tag == f"{SITEMAP}sitemapindex"
    return [entry.findtext(f"{SITEMAP}loc") for entry in root.findall(f"{SITEMAP}sitemap")]


def _sitemap_urls(client, path: str) -> dict[str, str]:
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/xml")
    root = ET.fromstring(response.content)  # noqa: S314 - our own output
    assert root.tag == f"{SITEMAP}urlset"
    return {url.findtext(f"{SITEMAP}loc"): url.findtext(f"{SITEMAP}lastmod") for url in root}


def test_sitemap(client, demo_loaded):
    """The sitemap index names the site file and the notes, tags and pages files; together they
    list pages and tags and leave out robotsNoIndex, drafts, scheduled."""
    files = _sitemap_files(client)
    assert files[0] == f"{BASE}/sitemap-site.xml"
    kinds = {re.fullmatch(rf"{BASE}/sitemap-(\w+)-\d+\.xml", file)[1] for file in files[1:]}
    assert kinds == {"notes", "tags", "pages"}
    entries = {}
    for file in files:
        entries.update(_sitemap_urls(client, file.removeprefix(BASE)))
    for path in ("/", "/notes/", "/tags/", "/tags/mermaid/", "/about/", "/methods-a-to-z/"):
        assert f"{BASE}{path}" in entries
    assert f"{BASE}/notes/result-theorem-gronwall-inequality/" in entries
    assert f"{BASE}/notes/method-code-simulation-project-layout/" not in entries
    assert f"{BASE}/notes/method-draft-checkpoint-interval/" not in entries
    assert f"{BASE}/notes/method-mermaid-campaign-gantt/" not in entries
    pattern = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"
    assert all(re.fullmatch(pattern, lastmod) for lastmod in entries.values())
    # The later of the date and the last edit, in the note's own offset (+01:00).
    note = Note.objects.get(slug="result-theorem-gronwall-inequality")
    lastmod = entries[f"{BASE}/notes/{note.slug}/"]
    assert lastmod.endswith("+01:00")
    assert dt.datetime.fromisoformat(lastmod) == max(note.date, note.updated_at).replace(
        microsecond=0
    )


def test_robots_txt(client, demo_loaded):
    """robots.txt keeps crawlers out of the admin and editor and names the sitemap."""
    response = client.get("/robots.txt")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode().splitlines() == [
        "User-agent: *",
        "Disallow: /admin/",
        "Disallow: /write/",
        f"Sitemap: {BASE}/sitemap.xml",
    ]


def test_archives(client, demo_loaded, django_assert_max_num_queries):
    """The archive groups published notes by year, then month, newest first."""
    with django_assert_max_num_queries(10):
        response = client.get("/archives/")
    assert response.status_code == 200
    text = response.text
    published = Note.objects.published().count()
    assert re.search(rf'<h2 class="archive-year-header" id="2026">.*?&nbsp;{published}</sup>', text)
    months = re.findall(r'<h3 class="archive-month-header" id="2026-(\w+)">', text)
    assert months == ["November", "October"]
    november = Note.objects.published().filter(date__month=11).count()
    assert re.search(rf'id="2026-November">.*?&nbsp;{november}</sup>', text)
    assert 'href="/notes/method-draft-checkpoint-interval/"' not in text
    assert 'href="/notes/method-mermaid-campaign-gantt/"' not in text
    entry = re.search(
        r'<h3 class="archive-entry-title">The Composite Simpson Rule \(rule\)</h3>\s*'
        r'<div class="archive-meta"><time [^>]*>November 25, 2026</time></div>\s*'
        r'<a class="entry-link" [^>]*href="/notes/result-rule-composite-simpson/">',
        text,
    )
    assert entry


def test_404(client, demo_loaded):
    """Unknown pages answer 404 with the styled page."""
    response = client.get("/no-such-page-here/")
    assert response.status_code == 404
    assert "404.html" in [template.name for template in response.templates]
    assert '<div class="not-found">404</div>' in response.text
    assert 'href="/"' in response.text


def test_500_template_is_standalone():
    """500.html renders without a database, request or context processors."""
    template = engines["django"].get_template("500.html")
    text = template.render({})
    assert '<link rel="stylesheet" href="/static/css/scidraft.css">' in text
    assert '<div class="not-found">500</div>' in text


@pytest.mark.parametrize(
    "path",
    [
        "/index.xml",
        "/tags/mermaid/index.xml",
        "/sitemap.xml",
        "/sitemap-notes-{note}.xml",
        "/sitemap-tags-{tag}.xml",
    ],
)
def test_constant_queries(client, demo_loaded, django_assert_max_num_queries, settings, path):
    """Feeds and the sitemap run the same bounded number of queries at 30 and 230 notes."""
    settings.SCIDRAFT_RSS_LIMIT = 1000
    from notes.sitemaps import CHUNK

    note = Note.objects.get(slug="result-theorem-gronwall-inequality").pk // CHUNK
    path = path.format(note=note, tag=Tag.objects.get(slug="mermaid").pk // CHUNK)
    with django_assert_max_num_queries(7):
        assert client.get(path).status_code == 200
    note_rows(200, title="Extra note {}", body="Extra.", text="Extra.")
    Tag.objects.get(slug="mermaid").notes.add(*Note.objects.filter(slug__startswith="extra-"))
    with django_assert_max_num_queries(7):
        response = client.get(path)
    assert response.status_code == 200
    extra = Note.objects.get(slug="extra-0").pk // CHUNK
    if path == "/sitemap.xml":
        assert f"/sitemap-notes-{extra}.xml" in response.text
    elif "/sitemap-" not in path:
        assert f"{BASE}/notes/extra-0/" in response.text


# --- Excerpts: what the feeds quote of a note -----------------------------------------------------


def test_rss_description_is_the_rendered_excerpt(client, db):
    """Without a description or summary, an RSS item's description is the note's opening as
    HTML: references and citations as labels, formulas as KaTeX typeset them, no diagram, code
    or algorithm (it once showed raw TeX and "By and , summation")."""
    from tests.notes.test_excerpts import LEFT_OUT, excerpt_note

    excerpt_note()
    item = next(i for i in _rss(client).findall("item") if i.findtext("title") == "Excerpt Note")
    description = item.findtext("description")
    assert description.startswith('By Lemma 1 and [1], the sum <span class="katex">')
    assert description.count('<span class="katex">') == 3
    assert "Closing words after the blocks." in description
    assert not any(text in description for text in LEFT_OUT)
    assert "$" not in description.split("<annotation")[0]


def test_index_json_summary_is_plain_text_with_tex(client, db):
    """index.json's summary is plain text: labels kept, formulas as TeX between delimiters,
    no markup, nothing from the diagram, code or algorithm."""
    from tests.notes.test_excerpts import LEFT_OUT, excerpt_note

    excerpt_note()
    entries = json.loads(client.get("/index.json").content)
    entry = next(e for e in entries if e["title"] == "Excerpt Note")
    summary = entry["summary"]
    assert summary.startswith("By Lemma 1 and [1], the sum \\(\\sum_i x_i\\) is unchanged.")
    assert "\\[\\mathrm{softmax}(x + c) = \\mathrm{softmax}(x)" in summary
    assert "<" not in summary and not any(text in summary for text in LEFT_OUT)
    # `content` is the note's searchable text (Rendered.text): every word, labels included.
    assert entry["content"].startswith("By Lemma 1 and [1], the sum \\(\\sum_i x_i\\)")
    assert "codeword" in entry["content"]


# --- Bounds: what the feeds and index.json hold as the site grows -----------------------------


@pytest.fixture
def sixty(db):
    SiteSettings.objects.current()
    notes = note_rows(60, title="Note {}", body="Text.", text="Text.")
    Tag.objects.create(name="many").notes.add(*notes)
    return notes


@pytest.mark.parametrize("path", ["/index.xml", "/tags/many/index.xml"])
@pytest.mark.parametrize(("site_limit", "items"), [(None, 5), (3, 3), (50, 5)])
def test_a_feed_carries_the_newest_items_up_to_the_limit(
    client, sixty, settings, path, site_limit, items
):
    """A feed holds the newest SCIDRAFT_RSS_LIMIT items, or the site's services.rss.limit when
    that is smaller, and reads no more rows than that from the database."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.SCIDRAFT_RSS_LIMIT = 5
    _settings(rss_limit=site_limit)
    with CaptureQueriesContext(connection) as queries:
        links = _links(_rss(client, path))
    assert links == [f"{BASE}/notes/extra-{n}/" for n in range(items)]
    note_selects = [
        query["sql"]
        for query in queries
        if 'FROM "notes_note"' in query["sql"] and "rendered_html" in query["sql"]
    ]
    assert note_selects and all(f"LIMIT {items}" in sql for sql in note_selects)


def test_a_feed_for_a_tag_name_out_of_all_bounds_is_404(client, sixty):
    """A huge or unknown tag in a feed's URL is a 404, never an error."""
    assert client.get(f"/tags/{'x' * 5000}/index.xml").status_code == 404


def test_index_json_is_complete_up_to_its_bound_and_404_past_it(client, sixty, settings):
    """Up to SCIDRAFT_INDEX_JSON_MAX_NOTES notes and pages index.json lists them all; past it
    the answer is a 404 whatever the size of the site, never a partial index."""
    settings.SCIDRAFT_INDEX_JSON_MAX_NOTES = 60
    entries = json.loads(client.get("/index.json").content)
    assert len(entries) == 60
    settings.SCIDRAFT_INDEX_JSON_MAX_NOTES = 59
    bump_generation()  # the page cached above is not served again
    response = client.get("/index.json")
    assert response.status_code == 404
    assert len(response.content) < 20_000


def test_index_json_past_its_bytes_is_404(client, sixty, settings):
    """An index whose text would pass SCIDRAFT_INDEX_JSON_MAX_BYTES is a 404, counted in SQL
    before any row is loaded; under it, the whole index."""
    settings.SCIDRAFT_INDEX_JSON_MAX_BYTES = 60 * 600  # the notes' text and overheads pass it
    assert client.get("/index.json").status_code == 404
    settings.SCIDRAFT_INDEX_JSON_MAX_BYTES = 100_000
    bump_generation()
    response = client.get("/index.json")
    assert response.status_code == 200 and len(response.content) <= 100_000
