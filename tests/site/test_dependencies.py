"""Which pages a write makes stale (scidraft.site.dependencies, scidraft.site.receivers):
exactly those that show what it changed; every page for a write that names nothing.

The local-memory cache stands in for Redis here (SCIDRAFT_GENERATION_TTL above 0, as with
REDIS_URL). A stale page is not served (SCIDRAFT_PAGE_STALE_MAX_SECONDS = 0), so it is
rendered by its reader: `miss` and a template rendered tell a stale page from a fresh one
(`hit`, nothing rendered). Writes commit (transactional tests): their tags get new versions
in the commit hook.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from notes.models import Author, Note, Status, Tag
from scidraft.site import dependencies
from scidraft.site.models import ContentGeneration, SiteSettings
from tests.factories import imported_note


@pytest.fixture(autouse=True)
def _by_dependencies(by_dependencies):
    by_dependencies.SCIDRAFT_PAGE_STALE_MAX_SECONDS = 0


def _days_ago(days: int) -> dt.datetime:
    return timezone.now() - dt.timedelta(days=days)


@pytest.fixture
def notes(db):
    """Five published notes a day or more apart, oldest first, and a draft dated between the
    third and the fourth."""
    made = {
        "alpha": imported_note("alpha", tags=["Waves"], date=_days_ago(10)),
        "beta": imported_note("beta", tags=["Waves"], date=_days_ago(9)),
        "gamma": imported_note("gamma", tags=["Heat"], date=_days_ago(8)),
        "delta": imported_note("delta", tags=["Optics"], date=_days_ago(2)),
        "epsilon": imported_note("epsilon", tags=["Optics"], date=_days_ago(1)),
        "newcomer": imported_note(
            "newcomer", tags=["Heat"], authors=["Ada Lovelace"], date=_days_ago(5), draft=True
        ),
    }
    assert made["newcomer"].status != Status.PUBLISHED
    return made


def _served(client, urls) -> dict[str, str]:
    """X-Cache of each page, checked against whether a template was rendered for it."""
    states = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        state = response["X-Cache"]
        if response["Content-Type"].startswith("text/html"):
            assert (state == "hit") == (not response.templates), url
        states[url] = state
    return states


def _cached(client, urls) -> None:
    for url in urls:
        client.get(url)
    assert set(_served(client, urls).values()) == {"hit"}


def _after(client, write, urls) -> dict[str, str]:
    """Each page cached, then `write` run (committed): X-Cache of each page after it."""
    _cached(client, urls)
    write()
    return _served(client, urls)


def _retitle(slug: str, title: str) -> None:
    note = Note.objects.get(slug=slug)
    note.title = title
    note.save()


PAGES = [
    "/", "/notes/", "/tags/heat/", "/tags/waves/", "/tags/optics/",
    "/notes/alpha/", "/notes/beta/", "/notes/gamma/", "/notes/delta/", "/notes/epsilon/",
    "/notes/alpha/cite.bib",
]  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_publishing_a_note_makes_stale_only_the_pages_that_show_it(client, notes):
    """Its page, the feeds, its tag's page, its author's page and the pages of the notes
    dated either side of it (their « Prev / Next ») go stale; the other notes' pages, the other
    tags' pages and the exports of another note stay fresh."""
    author = Author.objects.get(name="Ada Lovelace")
    pages = [*PAGES, f"/authors/{author.handle}/"]
    newcomer = notes["newcomer"]

    def publish():
        newcomer.status = Status.PUBLISHED
        newcomer.save()

    stale = {url for url, state in _after(client, publish, pages).items() if state != "hit"}
    assert stale == {
        "/", "/notes/", "/tags/heat/", f"/authors/{author.handle}/", "/notes/gamma/",
        "/notes/delta/",
    }  # fmt: skip
    assert client.get("/notes/newcomer/").status_code == 200
    assert b"Newcomer" in client.get("/notes/gamma/").content  # its Next now


@pytest.mark.django_db(transaction=True)
def test_editing_a_published_note_makes_stale_its_page_and_the_pages_showing_it(client, notes):
    """A new title, no move in any list: the note's page and exports, the feeds and tag page
    that show its card, and its neighbours' pages (they show its title) go stale; no other."""
    states = _after(client, lambda: _retitle("beta", "Beta, retitled"), PAGES)
    assert {url for url, state in states.items() if state != "hit"} >= {
        "/", "/notes/", "/tags/waves/", "/notes/beta/", "/notes/alpha/", "/notes/gamma/",
    }  # fmt: skip
    assert states["/tags/heat/"] == states["/tags/optics/"] == "hit"
    assert states["/notes/alpha/cite.bib"] == "hit"
    assert b"Beta, retitled" in client.get("/notes/alpha/").content


@pytest.mark.django_db(transaction=True)
def test_a_new_tag_on_a_note_makes_that_tag_page_stale_not_the_others(client, notes):
    def tag():
        Note.objects.get(slug="epsilon").tags.add(Tag.objects.get(slug="heat"))

    states = _after(client, tag, PAGES)
    assert states["/tags/heat/"] == "miss" and states["/notes/epsilon/"] == "miss"
    # Note pages recommend a random few others: only the tag pages are sure not to show it.
    assert states["/tags/waves/"] == "hit"


@pytest.mark.django_db(transaction=True)
def test_a_site_wide_write_makes_every_page_stale(client, notes):
    """A setting (or a menu, a standalone page...) names no tag: every page shows it."""

    def rename():
        site = SiteSettings.objects.current()
        site.title = "Renamed site"
        site.save()

    assert set(_after(client, rename, PAGES).values()) == {"miss"}


@pytest.mark.django_db(transaction=True)
def test_a_draft_saved_makes_no_page_stale(client, notes):
    states = _after(client, lambda: _retitle("newcomer", "Still a draft"), PAGES)
    assert set(states.values()) == {"hit"}


@pytest.mark.django_db(transaction=True)
def test_a_lost_tag_version_makes_its_pages_stale(client, notes):
    """An evicted version is unknown, never the one a page recorded: its pages render again."""
    from django.core.cache import cache

    def evict():
        cache.delete(dependencies.PREFIX + dependencies.listing_tag("optics"))

    states = _after(client, evict, PAGES)
    assert states["/tags/optics/"] == "miss" and states["/tags/heat/"] == "hit"


@pytest.mark.django_db(transaction=True)
def test_a_version_newer_than_the_render_is_not_recorded(notes):
    """A write that committed while a page rendered (its version's generation is newer than
    the one the render started from): the page cannot vouch for it, and falls back."""
    tag = dependencies.note("alpha")
    start = ContentGeneration.objects.get(pk=1).value
    dependencies.renew([tag], start + 1)
    assert dependencies.recorded({tag}, start) is None
    assert dependencies.recorded({tag}, start + 1)[tag][0] == start + 1


@pytest.mark.django_db(transaction=True)
def test_in_generation_mode_every_write_makes_every_page_stale(settings, client, notes):
    """SCIDRAFT_PAGE_INVALIDATION = "generation": the design before dependencies."""
    settings.SCIDRAFT_PAGE_INVALIDATION = "generation"
    settings.SCIDRAFT_PAGE_STALE_MAX_SECONDS = 10
    states = _after(client, lambda: _retitle("epsilon", "Epsilon, retitled"), PAGES)
    assert set(states.values()) == {"miss"}


@pytest.mark.django_db(transaction=True)
def test_without_a_shared_cache_pages_follow_the_generation(settings, client, notes):
    settings.SCIDRAFT_GENERATION_TTL = 0
    assert not dependencies.by_dependencies()
    states = _after(client, lambda: _retitle("epsilon", "Epsilon, retitled"), PAGES)
    assert set(states.values()) == {"miss"}


@pytest.mark.django_db(transaction=True)
def test_a_read_that_stores_a_render_anew_makes_no_page_stale(client, notes):
    """A note rendered by an older engine is rendered again when read, and stored: that write
    is what the page being rendered shows, so neither the generation nor any tag moves."""
    _cached(client, PAGES)
    Note.objects.filter(slug="delta").update(render_version="0")  # no signal: as after a deploy
    before = ContentGeneration.objects.get(pk=1).value
    from django.core.cache import cache
    from django.test import RequestFactory

    from scidraft.site import caching

    cache.delete(caching.page_key(RequestFactory().get("/notes/delta/")))  # renders again
    caching.local_pages.clear()
    assert client.get("/notes/delta/")["X-Cache"] == "miss"
    assert Note.objects.get(slug="delta").render_version != "0"  # stored
    assert ContentGeneration.objects.get(pk=1).value == before
    assert _served(client, ["/", "/tags/optics/", "/notes/epsilon/"]) == {
        "/": "hit", "/tags/optics/": "hit", "/notes/epsilon/": "hit",
    }  # fmt: skip


@pytest.mark.django_db
def test_a_page_showing_too_many_things_falls_back_to_the_generation(db):
    tags = {dependencies.note(f"n{index}") for index in range(dependencies.MAX_TAGS + 1)}
    assert dependencies.recorded(tags, 1) is None
    assert dependencies.recorded(set(list(tags)[:3]), 1) is not None


FEEDS = ["/index.xml", "/tags/heat/index.xml", "/tags/waves/index.xml", "/tags/optics/index.xml"]


@pytest.mark.django_db(transaction=True)
def test_the_rss_feeds_go_stale_with_the_notes_they_carry(client, notes):
    """The site's feed and a tag's feed show their notes' text: a note retitled makes stale
    the site's feed and its tag's feed, not the feeds of the other tags."""
    _cached(client, FEEDS)
    beta = Note.objects.get(slug="beta")
    beta.title = "Beta, retitled"
    beta.save()
    states = _served(client, FEEDS)
    assert states["/index.xml"] == states["/tags/waves/index.xml"] == "miss"
    assert states["/tags/heat/index.xml"] == states["/tags/optics/index.xml"] == "hit"
    assert b"Beta, retitled" in client.get("/index.xml").content


@pytest.mark.django_db(transaction=True)
def test_a_note_published_or_let_into_rss_makes_its_feeds_stale(client, notes):
    """A note the feeds did not show yet (a draft published; a note no longer hidden from
    RSS) makes stale the site's feed and its tags' feeds: membership, not only what is shown."""
    newcomer = notes["newcomer"]
    newcomer.status = Status.PUBLISHED
    newcomer.hidden_in_rss = True
    newcomer.save()
    _cached(client, FEEDS)
    newcomer.hidden_in_rss = False
    newcomer.save()
    states = _served(client, FEEDS)
    assert states["/index.xml"] == states["/tags/heat/index.xml"] == "miss"
    assert states["/tags/waves/index.xml"] == "hit"
    assert b"/notes/newcomer/" in client.get("/tags/heat/index.xml").content


@pytest.mark.django_db(transaction=True)
def test_versions_read_are_reused_until_a_write_moves_the_counter(settings, notes):
    """A process reads a page's tags once, then only the write counter (once per lease): a
    version changed without a renewal is not seen, one renewed is seen once the lease on the
    counter ends."""
    import time

    from django.core.cache import cache

    settings.SCIDRAFT_GENERATION_LEASE_MS = 20
    dependencies.lease.drop()
    alpha, beta = dependencies.note("unread-a"), dependencies.note("unread-b")
    first = dependencies.versions([alpha, beta])
    assert first == {alpha: None, beta: None}  # never renewed yet

    cache.set(dependencies.PREFIX + alpha, (0, 0.0, "behind its back"))  # no counter moved
    time.sleep(0.03)
    assert dependencies.versions([alpha, beta]) == first

    dependencies.renew([beta], 1)
    assert dependencies.versions([beta])[beta][0] == 1  # the writer's own process at once
    time.sleep(0.03)  # another process's lease on the counter ends
    dependencies.lease.held.pop(beta, None)
    now = dependencies.versions([alpha, beta])
    assert now[alpha] == (0, 0.0, "behind its back") and now[beta][0] == 1


@pytest.mark.django_db(transaction=True)
def test_an_evicted_write_counter_makes_every_version_read_again(settings, notes):
    """The counter starts again from a random number: versions held under the old one are
    never taken for current."""
    import time

    from django.core.cache import cache

    settings.SCIDRAFT_GENERATION_LEASE_MS = 20
    dependencies.lease.drop()
    alpha = dependencies.note("alpha")
    dependencies.renew([alpha], 1)
    held = dependencies.versions([alpha])[alpha]
    before = cache.get(dependencies.WRITES)
    cache.delete(dependencies.WRITES)
    cache.set(dependencies.PREFIX + alpha, (2, 0.0, "changed"))
    time.sleep(0.03)
    assert dependencies.versions([alpha])[alpha] == (2, 0.0, "changed") != held
    assert cache.get(dependencies.WRITES) not in (None, before)
