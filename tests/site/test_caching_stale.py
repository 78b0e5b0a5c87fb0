"""A stale page is served at once while one process renders it again in the background
(scidraft.site.caching, scidraft.site.render_claims): no reader waits for a render someone
else's write caused, and the fresh page is served once that render is stored.

The local-memory cache stands in for Redis (SCIDRAFT_GENERATION_TTL above 0, as with
REDIS_URL). Background renders run in threads with database connections of their own: the
tests are transactional, and wait for them with `refreshes.join()`. Renders are counted by
the templates they render, in every thread.
"""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.test.signals import template_rendered

from notes.models import Note
from scidraft.site import caching, render_claims
from scidraft.site.models import SiteSettings
from tests.factories import imported_note

NOTE, OTHER = "/notes/first/", "/notes/second/"


@pytest.fixture(autouse=True)
def _by_dependencies(by_dependencies):
    by_dependencies.SCIDRAFT_PAGE_STALE_MAX_SECONDS = 10
    by_dependencies.SCIDRAFT_PAGE_REFRESH_MS = 0


@pytest.fixture
def notes(db):
    return imported_note("first", title="First title"), imported_note("second")


class Renders:
    """Note pages rendered, from any thread."""

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()

    def __call__(self, sender, template, **kwargs):
        if template.name == "notes/note_detail.html":
            with self.lock:
                self.count += 1


@pytest.fixture
def renders():
    counter = Renders()
    template_rendered.connect(counter, dispatch_uid="test-renders")
    yield counter
    template_rendered.disconnect(dispatch_uid="test-renders")


def _retitle(title: str) -> None:
    note = Note.objects.get(slug="first")
    note.title = title
    note.save()


@pytest.mark.django_db(transaction=True)
def test_a_stale_page_is_served_at_once_and_the_fresh_one_follows(client, notes, renders):
    """The first reader after the write gets the old page (`stale`) without a render of its
    own; once the background render is stored, readers get the new page as a hit."""
    client.get(NOTE)
    assert client.get(NOTE)["X-Cache"] == "hit"
    _retitle("Second title")
    renders.count = 0
    stale = client.get(NOTE)
    assert stale["X-Cache"] == "stale" and b"First title" in stale.content
    assert "max-age=0" in stale["Cache-Control"]  # browsers keep the fresh one, not this
    assert not stale.templates  # nothing rendered on the reader's path
    caching.refreshes.join()
    assert renders.count == 1
    fresh = client.get(NOTE)
    assert fresh["X-Cache"] == "hit" and b"Second title" in fresh.content
    assert client.get(OTHER)["X-Cache"] in ("miss", "hit")


@pytest.mark.django_db(transaction=True)
def test_many_readers_of_a_stale_page_cause_one_background_render(notes, renders):
    for _ in range(2):
        Client().get(NOTE)
    _retitle("Second title")
    renders.count = 0
    answers, start = [], threading.Barrier(8)

    def read():
        start.wait()
        answers.append(Client().get(NOTE)["X-Cache"])

    readers = [threading.Thread(target=read) for _ in range(8)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    caching.refreshes.join()
    assert renders.count == 1
    assert set(answers) <= {"stale", "hit"}


@pytest.mark.django_db(transaction=True)
def test_a_page_another_process_renders_is_served_stale_without_a_render_here(
    client, notes, renders
):
    client.get(NOTE)
    _retitle("Second title")
    key = caching.page_key(client.get(NOTE).wsgi_request)
    caching.refreshes.join()
    _retitle("Third title")
    assert cache.add(render_claims._Refreshes.PREFIX + key, 1, 30)  # held by another process
    renders.count = 0
    assert client.get(NOTE)["X-Cache"] == "stale"
    caching.refreshes.join()
    assert renders.count == 0


@pytest.mark.django_db(transaction=True)
def test_the_writer_logged_in_sees_the_change_at_once(client, notes):
    """A session bypasses the cache: the writer's own page is rendered, with the change,
    while anonymous readers are served the stale page until its render is stored."""
    client.get(NOTE)
    writer = Client()
    writer.force_login(User.objects.create_user("writer", password="correct horse battery"))
    _retitle("Second title")
    own = writer.get(NOTE)
    assert b"Second title" in own.content and "X-Cache" not in own
    assert client.get(NOTE)["X-Cache"] == "stale"


@pytest.mark.django_db(transaction=True)
def test_past_the_bound_a_stale_page_is_rendered_by_its_reader(settings, client, notes):
    settings.SCIDRAFT_PAGE_STALE_MAX_SECONDS = 0
    client.get(NOTE)
    _retitle("Second title")
    response = client.get(NOTE)
    assert response["X-Cache"] == "miss" and b"Second title" in response.content


@pytest.mark.django_db(transaction=True)
def test_a_setting_changed_serves_every_page_stale_until_rendered_again(client, notes):
    for url in (NOTE, OTHER):
        client.get(url)
    site = SiteSettings.objects.current()
    site.title = "Renamed site"
    site.save()
    assert [client.get(url)["X-Cache"] for url in (NOTE, OTHER)] == ["stale", "stale"]
    caching.refreshes.join()
    # One background render a process at a time (SCIDRAFT_PAGE_REFRESH_THREADS): a page read
    # while it was busy is claimed by its next reader.
    for url in (NOTE, OTHER):
        for _ in range(3):
            response = client.get(url)
            if response["X-Cache"] != "stale":
                break
            caching.refreshes.join()
        assert response["X-Cache"] == "hit" and b"Renamed site" in response.content


@pytest.mark.django_db(transaction=True)
def test_a_cache_outage_renders_pages(client, notes, monkeypatch):
    """Redis down: no entry, no tag version, no claim; pages are rendered, never an error."""
    client.get(NOTE)

    def broken(*args, **kwargs):
        raise ConnectionError("cache unreachable")

    for name in ("get", "get_many", "set", "set_many", "add", "delete", "touch"):
        monkeypatch.setattr(cache, name, broken)
    caching.local_pages.clear()
    response = client.get(NOTE)
    assert response.status_code == 200 and response["X-Cache"] == "miss"


@pytest.mark.django_db(transaction=True)
def test_an_unpublished_note_is_gone_once_its_page_is_rendered_again(client, notes):
    """Its stale page is served until the background render, which finds it gone (404): the
    copy is dropped, and readers get the 404 from then on."""
    client.get(NOTE)
    note = Note.objects.get(slug="first")
    note.status = "draft"
    note.save()
    assert client.get(NOTE)["X-Cache"] == "stale"
    caching.refreshes.join()
    assert client.get(NOTE).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_process_runs_a_bounded_number_of_background_renders(client, notes, settings):
    """With every slot (SCIDRAFT_PAGE_REFRESH_THREADS) busy, a stale page is still served at
    once, and not claimed: a later reader claims it once a slot is free."""
    settings.SCIDRAFT_PAGE_REFRESH_THREADS = 2
    client.get(NOTE)
    _retitle("Second title")
    refreshes = caching.refreshes
    taken = 0
    while refreshes._take_slot():
        taken += 1
    assert taken == 2
    try:
        assert client.get(NOTE)["X-Cache"] == "stale"
        assert (
            cache.get(
                render_claims._Refreshes.PREFIX + caching.page_key(client.get(NOTE).wsgi_request)
            )
            is None
        )
    finally:
        for _ in range(taken):
            refreshes._free_slot()
    assert client.get(NOTE)["X-Cache"] == "stale"
    caching.refreshes.join()
    assert b"Second title" in client.get(NOTE).content


@pytest.mark.django_db(transaction=True)
def test_a_page_rendered_moments_ago_is_served_stale_until_the_interval_ends(
    settings, client, notes, renders
):
    """Writes in quick succession to what a page shows cost one render per
    SCIDRAFT_PAGE_REFRESH_MS, not one each: until the page is that old its readers get it
    stale and no render starts; the first reader after starts it."""
    import time

    settings.SCIDRAFT_PAGE_REFRESH_MS = 300
    client.get(NOTE)
    renders.count = 0
    for title in ("Second title", "Third title", "Fourth title"):
        _retitle(title)
        assert client.get(NOTE)["X-Cache"] == "stale"
    caching.refreshes.join()
    assert renders.count == 0
    time.sleep(0.35)
    assert client.get(NOTE)["X-Cache"] == "stale"
    caching.refreshes.join()
    assert renders.count == 1
    fresh = client.get(NOTE)
    assert fresh["X-Cache"] == "hit" and b"Fourth title" in fresh.content


def _counting_gets(monkeypatch) -> list[str]:
    asked = []
    get = cache.get

    def counting(name, *args, **kwargs):
        asked.append(name)
        return get(name, *args, **kwargs)

    monkeypatch.setattr(cache, "get", counting)
    return asked


@pytest.mark.django_db(transaction=True)
def test_a_stale_page_younger_than_the_refresh_interval_is_served_without_asking(
    client, notes, settings, monkeypatch
):
    """Until a stale page is due for its next render, its readers are served this process's
    copy without a round trip to the shared cache."""
    settings.SCIDRAFT_PAGE_REFRESH_MS = 60_000  # no render starts during the test
    client.get(NOTE)
    _retitle("Second title")
    key = caching.page_key(client.get(NOTE).wsgi_request)
    asked = _counting_gets(monkeypatch)
    for _ in range(3):
        assert client.get(NOTE)["X-Cache"] == "stale"
    assert asked.count(key) == 0 and asked.count(key + ":latest") == 0


@pytest.mark.django_db(transaction=True)
def test_a_process_holding_the_latest_render_of_a_stale_page_does_not_fetch_it_again(
    client, notes, settings, monkeypatch
):
    """Once a stale page is due, its read asks the shared cache for the id of the latest
    render only, and fetches the page when another process stored a newer one."""
    settings.SCIDRAFT_PAGE_REFRESH_MS = 60_000
    client.get(NOTE)
    _retitle("Second title")
    key = caching.page_key(client.get(NOTE).wsgi_request)
    started = []
    monkeypatch.setattr(render_claims.refreshes, "start", lambda key, *_: started.append(key))
    held = caching.local_pages.get(key)
    due = held.get("rendered_at", 0) - 120
    caching.local_pages.put(key, {**held, "rendered_at": due})
    asked = _counting_gets(monkeypatch)
    assert client.get(NOTE)["X-Cache"] == "stale" and started == [key]
    assert asked.count(key) == 0 and asked.count(key + ":latest") == 1
    newer = {**held, "id": "another-process", "content": b"<p>newer</p>"}
    caching.keep(key, newer)
    caching.local_pages.put(key, {**newer, "id": "older", "rendered_at": due})
    assert b"newer" in client.get(NOTE).content and asked.count(key) == 1
