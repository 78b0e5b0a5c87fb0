"""Within a request, the site's settings row is read once however many code paths ask for it,
and read again after the request saves it."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from scidraft.site.models import SiteSettings, settings_read_once
from tests.editor.forms import editor_form
from tests.factories import published_note

pytestmark = pytest.mark.django_db


def _settings_reads(queries) -> int:
    return sum(
        1
        for query in queries.captured_queries
        if query["sql"].startswith("SELECT") and "site_sitesettings" in query["sql"]
    )


def test_outside_a_scope_each_call_reads_the_row():
    """Commands and services called directly keep reading the row on every call."""
    SiteSettings.objects.current()
    with CaptureQueriesContext(connection) as queries:
        SiteSettings.objects.current()
        SiteSettings.objects.current()
    assert _settings_reads(queries) == 2


def test_within_a_scope_the_row_is_read_once():
    """Every caller in the scope gets the same row, from one query."""
    SiteSettings.objects.current()  # the row exists, as on any site past its first request
    with CaptureQueriesContext(connection) as queries, settings_read_once():
        first = SiteSettings.objects.current()
        assert SiteSettings.objects.current() is first
    assert _settings_reads(queries) == 1


def test_a_scope_that_saves_the_row_reads_it_again_after_a_rollback():
    """A saved row could roll back, so the scope stops keeping it: a later read sees what the
    database holds."""
    with settings_read_once():
        SiteSettings.objects.current()
        with pytest.raises(RuntimeError), transaction.atomic():
            row = SiteSettings.objects.current()
            row.title = "Rolled back"
            row.save()
            assert SiteSettings.objects.current().title == "Rolled back"
            raise RuntimeError
        assert SiteSettings.objects.current().title != "Rolled back"


def test_scopes_do_not_share_their_row():
    """A new scope (the next request) reads the row anew and sees a change made meanwhile."""
    with settings_read_once():
        assert SiteSettings.objects.current().title != "Changed"
    SiteSettings.objects.filter(pk=1).update(title="Changed")
    with settings_read_once():
        assert SiteSettings.objects.current().title == "Changed"


def test_a_publish_through_the_editor_reads_the_row_once(client, author):
    """The review rule, the render's context, the kept references and the search language of
    one publish share one read."""
    note = published_note(author, body="Some $x$ text.")
    client.force_login(author)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"/write/{note.pk}/", editor_form(note, body="Changed $y$.", action="publish")
        )
    assert response.status_code == 302
    note.refresh_from_db()
    assert note.body == "Changed $y$."
    assert _settings_reads(queries) == 1
