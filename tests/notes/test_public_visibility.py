"""Which notes the public site shows, and where, with the test client: drafts, empty notes and
notes scheduled for later are in no list (feed, tag and author pages, RSS, sitemap, index.json)
and have no page until their date passes; searchHidden keeps a note out of search and
index.json and hiddenInRss out of the RSS feeds, both leaving it on the feed page; robotsNoIndex
marks the note's page noindex and leaves it out of the sitemap."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from django.utils import timezone

from tests.notes.public_pages import TOKYO, _search_page, get, html, make_note, meta

pytestmark = pytest.mark.django_db


# --- Drafts, empty and scheduled notes ---------------------------------------------------------


def _sitemap(client) -> bytes:
    """Every file the sitemap index names, one after another."""
    index = get(client, "/sitemap.xml").content.decode()
    files = re.findall(r"<loc>http://testserver(/[^<]+)</loc>", index)
    return b"".join(get(client, file).content for file in files)


def _listed(client, slug: str) -> dict[str, bool]:
    href = f"/notes/{slug}/"
    return {
        "feed": href in [a.get("href") for a in html(client, "/").select("a")],
        "tag": href in [a.get("href") for a in html(client, "/tags/shared/").select("a")],
        "author": href in [a.get("href") for a in html(client, "/authors/ada/").select("a")],
        "rss": href.encode() in get(client, "/index.xml").content,
        "sitemap": href.encode() in _sitemap(client),
        "index.json": href.encode() in get(client, "/index.json").content,
    }


@pytest.mark.parametrize(
    "fields",
    [{"draft": True}, {"body": "   \n\n  "}, {"body": ""}],
    ids=["draft", "blank", "empty"],
)
def test_unpublished_notes_are_never_listed(client, db, fields):
    """Drafts and empty notes appear nowhere and their page is a 404."""
    make_note("visible", tags=["Shared"], authors=["ada"])
    fields = {"body": "Text.", **fields}
    make_note("invisible", fields.pop("body"), tags=["Shared"], authors=["ada"], **fields)
    assert set(_listed(client, "invisible").values()) == {False}
    assert set(_listed(client, "visible").values()) == {True}
    get(client, "/notes/invisible/", 404)
    get(client, "/notes/invisible/cite.bib", 404)


def test_scheduled_note_appears_once_its_date_passes(client, db, monkeypatch):
    """A note dated in the future is hidden until then, then shows without any re-render."""
    make_note("visible", tags=["Shared"], authors=["ada"])
    soon = timezone.now().astimezone(TOKYO) + dt.timedelta(hours=1)
    make_note("scheduled", tags=["Shared"], authors=["ada"], date=soon)
    assert set(_listed(client, "scheduled").values()) == {False}
    get(client, "/notes/scheduled/", 404)
    assert "Shared" in html(client, "/tags/").flat_text
    assert "<sup>1</sup>" in get(client, "/tags/").content.decode()

    # Time passes (no write happens): the note's date is now in the past.
    later = timezone.now() + dt.timedelta(hours=2)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert set(_listed(client, "scheduled").values()) == {True}
    get(client, "/notes/scheduled/")
    assert "<sup>2</sup>" in get(client, "/tags/").content.decode()


# --- Hidden flags ------------------------------------------------------------------------------


def test_search_hidden(client, db):
    """searchHidden leaves a note out of search and index.json, not out of the feed."""
    _search_page()
    make_note("shown", "Zeppelin findable words.")
    make_note("hidden", "Zeppelin findable words.", search_hidden=True)
    results = html(client, "/search/?q=zeppelin").select("li.search-result-item h2 a")
    assert [a.get("href") for a in results] == ["/notes/shown/"]
    permalinks = [entry["permalink"] for entry in json.loads(get(client, "/index.json").content)]
    assert any(p.endswith("/notes/shown/") for p in permalinks)
    assert not any(p.endswith("/notes/hidden/") for p in permalinks)
    assert "/notes/hidden/" in [a.get("href") for a in html(client, "/").select("a")]


def test_hidden_in_rss(client, db):
    """hiddenInRss leaves a note out of the site and tag feeds, not out of the feed page."""
    make_note("shown", tags=["T"])
    make_note("hidden", tags=["T"], hidden_in_rss=True)
    for url in ("/index.xml", "/tags/t/index.xml"):
        body = get(client, url).content
        assert b"/notes/shown/" in body and b"/notes/hidden/" not in body
    assert "/notes/hidden/" in [a.get("href") for a in html(client, "/").select("a")]


def test_robots_noindex(client, db):
    """robotsNoIndex: `noindex, nofollow` on the page and no sitemap entry; others index."""
    make_note("shown")
    make_note("hidden", robots_noindex=True)
    assert meta(html(client, "/notes/hidden/"), "robots") == ["noindex, nofollow"]
    assert meta(html(client, "/notes/shown/"), "robots") == ["index, follow"]
    sitemap = _sitemap(client)
    assert b"/notes/shown/" in sitemap and b"/notes/hidden/" not in sitemap
