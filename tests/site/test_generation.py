"""The generation lease: a process reuses the generation it read for a few milliseconds instead
of asking the shared cache on every page hit, and writers wait one lease before answering, so no
page is stale once a write has answered (scidraft.site.generation). Without a shared cache (the
embedded default) the generation is read from the database instead, leased the same way.

The shared-cache tests keep the generation in the test process's cache, as Redis would
(SCIDRAFT_GENERATION_TTL above 0, its default with REDIS_URL)."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.db import transaction

from notes.models import Note
from scidraft.site import generation
from scidraft.site.models import ContentGeneration

NOTE = "/notes/result-theorem-gronwall-inequality/"


@pytest.fixture(autouse=True)
def _generation_in_the_cache(settings, request):
    if "without_shared_cache" not in request.node.name:
        settings.SCIDRAFT_GENERATION_TTL = 300
    # What is checked here is the generation itself: every write makes every page stale.
    settings.SCIDRAFT_PAGE_INVALIDATION = "generation"


class CountingGets:
    """Counts the shared-cache reads of the generation key."""

    def __init__(self, monkeypatch):
        self.count = 0
        real_get = cache.get

        def get(key, *args, **kwargs):
            if key == generation.GENERATION_KEY:
                self.count += 1
            return real_get(key, *args, **kwargs)

        monkeypatch.setattr(cache, "get", get)


def _leased_gets(settings, monkeypatch, lease_ms: int) -> CountingGets:
    """Leases of `lease_ms`, none held yet: the shared-cache reads of the generation from then
    on, counted."""
    settings.SCIDRAFT_GENERATION_LEASE_MS = lease_ms
    generation.lease.drop()
    return CountingGets(monkeypatch)


@pytest.mark.django_db
def test_within_a_lease_the_generation_is_not_read_from_the_shared_cache_again(
    settings, monkeypatch, demo_loaded
):
    gets = _leased_gets(settings, monkeypatch, 60_000)
    first = generation.current_generation()
    assert [generation.current_generation() for _ in range(50)] == [first] * 50
    assert gets.count == 1


@pytest.mark.django_db
def test_without_a_lease_every_request_reads_the_shared_cache(settings, monkeypatch, demo_loaded):
    gets = _leased_gets(settings, monkeypatch, 0)
    for _ in range(5):
        generation.current_generation()
    assert gets.count == 5


@pytest.mark.django_db
def test_a_lease_expires_after_its_length(settings, monkeypatch, demo_loaded):
    gets = _leased_gets(settings, monkeypatch, 20)
    generation.current_generation()
    time.sleep(0.03)
    generation.current_generation()
    assert gets.count == 2


@pytest.mark.django_db(transaction=True)
def test_a_writer_answers_only_after_every_lease_taken_before_its_publication_has_ended(
    settings, demo_loaded
):
    """Another process's lease is simulated by a second _Lease taken just before the write: once
    the write's transaction (and so its on_commit publication) has returned, that lease is
    over, so the other process reads the new generation on its next request."""
    settings.SCIDRAFT_GENERATION_LEASE_MS = 80
    elsewhere = generation._Lease()
    elsewhere.hold((generation.current_generation(), None), time.monotonic())
    assert elsewhere.held() is not None
    note = Note.objects.published().first()
    with transaction.atomic():
        note.title = "A new title"
        note.save()
    assert elsewhere.held() is None
    assert cache.get(generation.GENERATION_KEY)[0] == generation.current_generation()


@pytest.mark.django_db(transaction=True)
def test_this_process_sees_its_own_write_at_once(settings, client, demo_loaded):
    """The writer's own process drops its lease when it bumps: no wait is needed to see it."""
    settings.SCIDRAFT_GENERATION_LEASE_MS = 60_000
    generation.lease.drop()
    assert client.get(NOTE)["X-Cache"] == "miss"
    assert client.get(NOTE)["X-Cache"] == "hit"
    settings.SCIDRAFT_GENERATION_LEASE_MS = 0  # do not sleep a minute in publish_generation
    note = Note.objects.get(slug=NOTE.split("/")[2])
    note.title = "Gronwall, retitled"
    note.save()
    settings.SCIDRAFT_GENERATION_LEASE_MS = 60_000
    response = client.get(NOTE)
    assert response["X-Cache"] == "miss"
    assert b"Gronwall, retitled" in response.content


@pytest.mark.django_db
def test_a_hit_carries_the_same_cache_control_as_the_render(client, demo_loaded):
    miss, hit = client.get(NOTE), client.get(NOTE)
    assert (miss["X-Cache"], hit["X-Cache"]) == ("miss", "hit")
    assert hit["Cache-Control"] == miss["Cache-Control"]


@pytest.mark.django_db(transaction=True)
def test_a_transaction_publishes_once_however_many_rows_it_changes(
    settings, monkeypatch, demo_loaded
):
    """Each published generation costs the writer one lease wait: a save touching the note, its
    tags and its authors waits once."""
    settings.SCIDRAFT_GENERATION_LEASE_MS = 1
    waits = []
    monkeypatch.setattr(generation.time, "sleep", waits.append)
    note = Note.objects.published().first()
    with transaction.atomic():
        note.title = "Retitled"
        note.save()
        note.tags.clear()
        note.save()
    assert waits == [0.001]


@pytest.mark.django_db
def test_with_the_database_down_and_the_key_gone_the_last_generation_seen_is_used(
    settings, monkeypatch, demo_loaded
):
    """A write that died with the database deleted the key: cached pages keep their key."""
    from django.db import OperationalError

    settings.SCIDRAFT_GENERATION_LEASE_MS = 0  # no lease: each call asks the cache
    seen = generation.current_generation()
    cache.delete(generation.GENERATION_KEY)

    def down():
        raise OperationalError("connection refused")

    monkeypatch.setattr(generation, "_load_generation", down)
    assert generation.current_generation() == seen
    generation.lease.last = None  # a process that never read one has nothing to fall back on
    with pytest.raises(OperationalError):
        generation.current_generation()


class CountingReads:
    """Counts the database reads of the generation."""

    def __init__(self, monkeypatch):
        self.count = 0
        real_load = generation._load_generation

        def load():
            self.count += 1
            return real_load()

        monkeypatch.setattr(generation, "_load_generation", load)


@pytest.mark.django_db
def test_without_shared_cache_the_generation_is_read_from_the_database(
    settings, monkeypatch, demo_loaded
):
    """No shared cache (SCIDRAFT_GENERATION_TTL 0): the cache is never asked, the database is,
    once per lease; a number another process wrote is read at once."""
    settings.SCIDRAFT_GENERATION_TTL = 0
    settings.SCIDRAFT_GENERATION_LEASE_MS = 0
    generation.lease.drop()
    gets, reads = CountingGets(monkeypatch), CountingReads(monkeypatch)
    first = generation.current_generation()
    assert [generation.current_generation() for _ in range(4)] == [first] * 4
    assert (gets.count, reads.count) == (0, 5)
    cache.set(generation.GENERATION_KEY, (first - 1, None))  # a stale copy is never read
    ContentGeneration.objects.filter(pk=1).update(value=first + 7)  # another process's write
    assert generation.current_generation() == first + 7
    settings.SCIDRAFT_GENERATION_LEASE_MS = 60_000
    generation.lease.drop()
    generation.current_generation()
    ContentGeneration.objects.filter(pk=1).update(value=first + 8)
    assert generation.current_generation() == first + 7  # within its lease
    assert reads.count == 7


@pytest.mark.django_db(transaction=True)
def test_without_shared_cache_a_read_of_the_database_is_one_query(settings, demo_loaded):
    """The next due time is known per generation number: a hit costs one query, not two."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.SCIDRAFT_GENERATION_TTL = 0
    settings.SCIDRAFT_GENERATION_LEASE_MS = 0
    generation.lease.drop()
    generation.current_generation()
    with CaptureQueriesContext(connection) as queries:
        generation.current_generation()
    assert len(queries) == 1 and "site_contentgeneration" in queries[0]["sql"]


@pytest.mark.django_db
def test_a_scheduled_note_is_due_for_a_process_that_first_reads_after_its_date(
    settings, monkeypatch, demo_loaded
):
    """The due time counts from the generation's last change, not from the moment it is read:
    a process that first reads the generation after a scheduled note's date still bumps it."""
    import datetime as dt

    from django.utils import timezone

    settings.SCIDRAFT_GENERATION_TTL = 0
    note = Note.objects.published().first()
    note.date = timezone.now() + dt.timedelta(hours=1)
    note.save()
    before = generation.current_generation()
    later = timezone.now() + dt.timedelta(hours=2)
    monkeypatch.setattr(timezone, "now", lambda: later)
    generation.lease.drop()  # a process that never read the generation before
    assert generation.current_generation() == before + 1
