"""Query strings and the page cache: only the parameters a page uses key it.

A parameter the page does not read (utm_*, fbclid, a random one) is removed before the view
runs and the canonical page is served: no render, no new entry. Search results, keyed by their
`q` and `page`, stay in each process's bounded memory and never reach the shared cache.
"""

from __future__ import annotations

import secrets

import pytest
from django.core.cache import cache

from scidraft.site import caching
from scidraft.site.models import SiteSettings

pytestmark = pytest.mark.django_db

NOTE = "/notes/result-theorem-gronwall-inequality/"


class StoredPages:
    """Counts the pages written to the shared cache (any backend)."""

    def __init__(self, monkeypatch):
        self.keys: list[str] = []
        self.in_set_many = False
        real_set, real_set_many = cache.set, cache.set_many

        def set_(key, *args, **kwargs):
            if not self.in_set_many:  # a backend whose set_many calls set counts once
                self._count([key])
            return real_set(key, *args, **kwargs)

        def set_many(mapping, *args, **kwargs):
            self._count(mapping)
            self.in_set_many = True
            try:
                return real_set_many(mapping, *args, **kwargs)
            finally:
                self.in_set_many = False

        monkeypatch.setattr(cache, "set", set_)
        monkeypatch.setattr(cache, "set_many", set_many)

    def _count(self, keys) -> None:
        # A page, not the id of its latest render kept beside it (page_entries.latest_key).
        pages = [key for key in keys if key.startswith("page:")]
        self.keys += [key for key in pages if not key.endswith(":latest")]


@pytest.fixture
def stored(monkeypatch):
    return StoredPages(monkeypatch)


def test_unused_parameters_get_the_canonical_page_from_the_cache(client, demo_loaded, stored):
    """?utm_source=…&fbclid=… on a note is a hit of the note's entry: same body and ETag."""
    canonical = client.get(NOTE)
    assert canonical["X-Cache"] == "miss" and len(stored.keys) == 1
    tracked = client.get(NOTE, {"utm_source": "mastodon", "fbclid": secrets.token_hex(8)})
    assert tracked.status_code == 200
    assert tracked["X-Cache"] == "hit"
    assert tracked["ETag"] == canonical["ETag"]
    assert tracked.content == canonical.content
    assert len(stored.keys) == 1


def test_a_flood_of_random_query_strings_makes_no_entries_and_no_renders(
    client, demo_loaded, stored
):
    """200 distinct query strings (the security review's flood): 200 hits, nothing stored."""
    client.get(NOTE)
    client.get("/")
    before = len(stored.keys)
    answers = [
        client.get(path, {secrets.token_hex(4): secrets.token_hex(16)})
        for path in [NOTE, "/"] * 100
    ]
    assert {(a.status_code, a["X-Cache"]) for a in answers} == {(200, "hit")}
    assert len(stored.keys) == before


def test_the_canonical_pages_etag_revalidates_with_extra_parameters(client, demo_loaded):
    """A 304 for If-None-Match with the canonical page's ETag, extra parameters or not."""
    etag = client.get(NOTE)["ETag"]
    response = client.get(NOTE, {"ref": "newsletter"}, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304 and response.content == b""


def test_a_cache_busting_parameter_is_not_redirected(client, demo_loaded):
    """custom.css?v=<time> (base.html's link) answers the current stylesheet, not a redirect
    to a URL the browser may hold stale."""
    site = SiteSettings.objects.current()
    site.custom_css = ".note-title { color: teal; }"
    site.save()
    plain = client.get("/custom.css")
    busted = client.get("/custom.css", {"v": "1234567890"})
    assert busted.status_code == 200 and busted["X-Cache"] == "hit"
    assert busted.content == plain.content == b".note-title { color: teal; }"


def test_the_view_sees_only_the_parameters_the_page_uses(client, demo_loaded):
    """The search page with an extra parameter is the same page as without it."""
    first = client.get("/search/", {"q": "Gronwall", "utm_campaign": "x"})
    assert first.status_code == 200 and first["X-Cache"] == "miss"
    assert b"Gronwall" in first.content
    second = client.get("/search/", {"q": "Gronwall"})
    assert second["X-Cache"] == "hit" and second.content == first.content


def test_repeated_values_in_another_order_are_another_search(client, demo_loaded):
    """?q=a&q=b and ?q=b&q=a do not share a key: the view reads the last value."""
    nothing = client.get("/search/?q=Gronwall&q=zzzzqqq")
    assert b"result-theorem-gronwall-inequality" not in nothing.content
    found = client.get("/search/?q=zzzzqqq&q=Gronwall")
    assert found["X-Cache"] == "miss"
    assert b"result-theorem-gronwall-inequality" in found.content


def test_random_searches_never_reach_the_shared_cache(client, demo_loaded, stored, monkeypatch):
    """Search results are kept in the process's own store, bounded by its byte budget; a
    repeated search is a hit there."""
    monkeypatch.setattr(caching.local_queries, "max_bytes", 400_000)
    caching.local_queries.clear()
    for _ in range(40):
        response = client.get("/search/", {"q": f"proof {secrets.token_hex(6)}"})
        assert response.status_code == 200 and response["X-Cache"] == "miss"
    assert stored.keys == []
    assert 0 < caching.local_queries.size <= 400_000
    client.get("/search/", {"q": "Gronwall"})
    assert client.get("/search/", {"q": "Gronwall"})["X-Cache"] == "hit"
    assert stored.keys == []


def test_pages_that_are_not_cached_keep_their_query_string(client, db):
    """The login page's ?next= reaches the view: only cached pages are canonicalised."""
    response = client.get("/accounts/login/", {"next": "/write/17/"})
    assert b'value="/write/17/"' in response.content


def test_only_the_search_page_among_standalone_pages_reads_q(client, demo_loaded, stored):
    """/about/?q=… is the about page from the cache; /search/?q=… is a search."""
    about = client.get("/about/")
    assert client.get("/about/", {"q": "Gronwall"})["X-Cache"] == "hit"
    assert client.get("/about/", {"q": "Gronwall"}).content == about.content
    assert client.get("/search/", {"q": "Gronwall"})["X-Cache"] == "miss"
    assert len(stored.keys) == 1  # the about page
