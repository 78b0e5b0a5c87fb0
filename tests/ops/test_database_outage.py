"""The database down: cached pages still served, everything else a clear 503, nothing half-saved.

The outage is simulated with `connection.execute_wrapper`: every query (or only the one named)
raises OperationalError, as psycopg does when PostgreSQL is gone. The whole running system,
with a real PostgreSQL stopped and started, is exercised by `make reliability`.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from django.core.cache import cache
from django.db import OperationalError, connection
from django.http import HttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext

from notes import services
from notes.models import Note, NoteRevision
from ops.outages import DatabaseOutageMiddleware
from scidraft.site.caching import local_pages
from tests.factories import imported_note

pytestmark = pytest.mark.django_db

SLUG = "outage-note"
URL = f"/notes/{SLUG}/"


@contextmanager
def database_down(only: str | None = None):
    """Queries fail with OperationalError (those whose SQL contains `only`, or all of them)."""

    def refuse(execute, sql, params, many, context):
        if only is None or only in sql:
            raise OperationalError("connection refused (simulated outage)")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(refuse):
        yield


@pytest.fixture
def published(db):
    return imported_note(SLUG, "Readers keep this page.\n", title="Outage note", path=f"{SLUG}.md")


@pytest.fixture
def anonymous():
    # Django's client re-raises an exception a middleware turned into a response; a browser
    # only sees the response.
    return Client(raise_request_exception=False)


@pytest.fixture
def writer(author):
    client = Client(raise_request_exception=False)
    client.force_login(author)
    return client


@pytest.fixture
def draft(author):
    return services.note_create(user=author, title="Draft during an outage")


def test_cached_page_is_served_without_the_database(anonymous, published, settings):
    """An anonymous reader gets a page already in the cache, 200, with no query at all when the
    generation is in the shared cache; without one, only the generation's read is tried (and
    the last generation seen is used)."""
    assert anonymous.get(URL)["X-Cache"] == "miss"
    with database_down(), CaptureQueriesContext(connection) as queries:
        response = anonymous.get(URL)
    assert response.status_code == 200
    assert response["X-Cache"] == "hit"
    assert b"Readers keep this page." in response.content
    tried = [query["sql"] for query in queries.captured_queries]
    if settings.SCIDRAFT_GENERATION_TTL > 0:
        assert tried == []
    else:
        assert len(tried) == 1 and "site_contentgeneration" in tried[0]


def test_uncached_page_answers_503_page(anonymous, published):
    """A page that must be rendered gives the standalone 503 page, not a 500."""
    anonymous.get("/")  # the generation is now in the cache: the view itself fails
    with database_down():
        response = anonymous.get(URL)
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert b"cannot reach its database" in response.content
    assert response["Retry-After"] == "5"
    assert "no-store" in response["Cache-Control"]
    assert response["X-Frame-Options"] == "DENY"


def test_a_lost_generation_key_falls_back_to_the_last_one_seen(anonymous, published):
    """The shared cache lost the generation (a write that died with the database deleted it):
    this process keys pages by the last generation it saw, so its cached page is still served
    (no write can commit while the database is down)."""
    first = anonymous.get(URL)
    cache.clear()  # the shared cache lost everything; this process still holds the page
    assert local_pages.entries
    with database_down():
        response = anonymous.get(URL)
    assert response.status_code == 200
    assert response.content == first.content


def test_unknown_generation_answers_503_and_serves_nothing_cached(anonymous, published):
    """A process that never read a generation cannot know any page's key: 503."""
    from scidraft.site.generation import lease

    anonymous.get(URL)
    cache.clear()
    lease.drop()
    lease.last = None
    with database_down():
        response = anonymous.get(URL)
    assert response.status_code == 503
    assert b"cannot reach its database" in response.content


def test_503_is_not_cached(anonymous, published):
    """Once the database is back the page renders and is served normally."""
    anonymous.get("/")
    with database_down():
        assert anonymous.get(URL).status_code == 503
    response = anonymous.get(URL)
    assert response.status_code == 200
    assert response["X-Cache"] == "miss"


def test_logged_in_page_answers_503(writer, draft):
    """The editor page (session and note both in the database) gives the 503 page."""
    with database_down():
        response = writer.get(f"/write/{draft.pk}/")
    assert response.status_code == 503
    assert b"cannot reach its database" in response.content


def test_autosave_answers_json_503(writer, draft):
    """The autosave endpoint answers the JSON its script understands, status 503."""
    payload = {"body": "typed during the outage", "base_version": draft.version}
    with database_down():
        response = writer.post(
            f"/write/{draft.pk}/autosave/", json.dumps(payload), content_type="application/json"
        )
    assert response.status_code == 503
    assert response.json() == {"status": "error", "error": "database unavailable, retrying"}


def test_failed_autosave_leaves_no_partial_write_and_succeeds_on_retry(writer, draft):
    """The revision insert fails after the note row was updated in the same transaction: the
    note is unchanged and no revision exists; the browser's retry then saves it."""
    before = Note.objects.get(pk=draft.pk)
    revisions = NoteRevision.objects.filter(note=draft).count()
    payload = {"body": "typed during the outage", "base_version": before.version}
    url = f"/write/{draft.pk}/autosave/"
    with database_down(only='INSERT INTO "notes_noterevision"'):
        failed = writer.post(url, json.dumps(payload), content_type="application/json")
    assert failed.status_code == 503
    after = Note.objects.get(pk=draft.pk)
    assert (after.body, after.version) == (before.body, before.version)
    assert NoteRevision.objects.filter(note=draft).count() == revisions

    retried = writer.post(url, json.dumps(payload), content_type="application/json")
    assert retried.status_code == 200
    assert retried.json()["status"] == "saved"
    assert Note.objects.get(pk=draft.pk).body == "typed during the outage"


def test_other_errors_are_left_to_django(rf):
    """Only database errors become 503: any other exception is not handled here (a bug stays
    a 500)."""
    middleware = DatabaseOutageMiddleware(lambda request: HttpResponse("ok"))
    request = rf.get("/")
    assert middleware.process_exception(request, RuntimeError("a bug")) is None
    assert middleware.process_exception(request, OperationalError("gone")).status_code == 503
