"""A note page's « Prev / Next »: exactly what the reference queries say, in two queries
however large the site; and the feed's counts read once per content generation."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from notes.models import Note, Status
from notes.navigation import older_and_newer
from scidraft.site.generation import lease


def _expected(note: Note):
    notes = Note.objects.published()
    older = notes.filter(date__lt=note.date).order_by("-date", "slug").first()
    newer = notes.filter(date__gt=note.date).order_by("date", "slug").first()
    return older, newer


def _pair(neighbour):
    return None if neighbour is None else (neighbour.slug, neighbour.title)


def test_neighbours_match_the_queries(demo_loaded):
    """Every published note of the demo, and two notes sharing one date (ties go by slug)."""
    moment = timezone.now() - dt.timedelta(days=400)
    for slug in ("tie-b", "tie-a", "tie-c"):
        Note.objects.create(slug=slug, title=slug, body="x", status=Status.PUBLISHED, date=moment)
    for note in Note.objects.published():
        older, newer = _expected(note)
        found_older, found_newer = older_and_newer(note)
        assert _pair(found_older) == _pair(older), note.slug
        assert _pair(found_newer) == _pair(newer), note.slug


def _forget_pages() -> None:
    """Empty the page cache, so the next request renders (a query string no longer does);
    the generation is read again, as a process that served pages before has it."""
    from django.core.cache import cache

    from scidraft.site.caching import local_pages
    from scidraft.site.generation import current_generation

    cache.clear()
    local_pages.clear()
    current_generation()


@pytest.mark.django_db
def test_neighbours_cost_two_queries_however_many_notes_are_published(
    django_assert_num_queries,
):
    """One query for the older neighbour (its date found by a subquery), one for the newer:
    nothing read grows with the site."""
    moment = timezone.now() - dt.timedelta(days=30)
    Note.objects.bulk_create(
        Note(slug=f"n{i:03}", title=f"N {i}", body="x", status=Status.PUBLISHED, has_body=True,
             date=moment + dt.timedelta(hours=i))
        for i in range(300)
    )  # fmt: skip
    note = Note.objects.get(slug="n150")
    with django_assert_num_queries(2):
        older, newer = older_and_newer(note)
    assert (older.slug, newer.slug) == ("n149", "n151")


@pytest.mark.django_db
def test_a_note_published_next_to_another_is_its_neighbour_at_once(client):
    """The neighbours are read with the page: a note published since the last render is there."""
    first = Note.objects.create(
        slug="first", body="x", status=Status.PUBLISHED, date=timezone.now() - dt.timedelta(days=2)
    )
    assert older_and_newer(first) == (None, None)
    Note.objects.create(
        slug="second", body="x", status=Status.PUBLISHED, date=timezone.now() - dt.timedelta(days=1)
    )
    assert older_and_newer(first)[1].slug == "second"
    assert 'href="/notes/second/"' in client.get("/notes/first/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_feed_counts_and_promotions_are_read_once_per_generation(client):
    """A second feed page of the same generation runs neither the count nor the promotions'
    queries; a publish is counted by the next one."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from notes.views import feed_counts, promotion_pool
    from scidraft.site.models import SiteSettings

    site = SiteSettings.objects.current()
    site.promotions_per_page = 1
    site.save()
    long_ago = timezone.now() - dt.timedelta(days=3)
    Note.objects.create(slug="a", body="a", status=Status.PUBLISHED, date=long_ago)
    Note.objects.create(
        slug="promo", body="p", status=Status.PUBLISHED, promotion=True, date=long_ago
    )
    client.get("/")  # renders the new rows once (a write)
    lease.drop()
    _forget_pages()
    client.get("/")
    lease.drop()
    _forget_pages()
    with CaptureQueriesContext(connection) as queries:
        html = client.get("/").content.decode()
    # The page's ids, its rows, their authorships and tags: no count, no promotions (and,
    # without a shared cache, the generation's own read).
    page_queries = [
        query["sql"]
        for query in queries.captured_queries
        if "site_contentgeneration" not in query["sql"]
    ]
    assert len(page_queries) == 4, page_queries
    assert not any("COUNT(" in query["sql"] for query in queries.captured_queries)
    assert feed_counts.held is not None and feed_counts.held[1] == (1, 0)
    assert [note.slug for note in promotion_pool.held[1]] == ["promo"]
    assert html.count('class="note-card') == 2

    Note.objects.create(slug="b", body="b", status=Status.PUBLISHED, date=long_ago)
    lease.drop()
    html = client.get("/").content.decode()
    assert 'href="/notes/b/"' in html
    assert feed_counts.held[1] == (2, 0)
    feed_counts.forget()
    promotion_pool.forget()
