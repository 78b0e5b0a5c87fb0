"""Site settings and the main menu are read once per content generation by each process, and
read again as soon as a write changes the generation."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from scidraft.site import snapshot
from scidraft.site.generation import lease
from scidraft.site.models import MenuItem, SiteSettings

# Kept rows are only those read outside a transaction: these tests commit for real.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _nothing_held():
    snapshot.forget_all()
    yield
    snapshot.forget_all()


def _site_queries(queries) -> list[str]:
    return [
        query["sql"]
        for query in queries.captured_queries
        if "site_sitesettings" in query["sql"] or "site_menuitem" in query["sql"]
    ]


def _render(client, path: str = "/"):
    lease.drop()  # every request reads the generation afresh, as another process would
    return client.get(path, {"fresh": "1"} if path == "/" else {}).content.decode()


def test_a_second_page_of_the_same_generation_reads_neither_settings_nor_menu(client):
    SiteSettings.objects.current()
    MenuItem.objects.create(identifier="notes", name="Notes", url="/notes/")
    _render(client)
    with CaptureQueriesContext(connection) as queries:
        html = _render(client, "/tags/")
    assert _site_queries(queries) == []
    assert 'href="/notes/"' in html


def test_a_settings_write_is_shown_by_the_next_page(client):
    _render(client)
    site = SiteSettings.objects.current()
    site.title = "Renamed Lab"
    site.save()
    assert "<title>Renamed Lab</title>" in _render(client)


def test_a_menu_write_is_shown_by_the_next_page(client):
    _render(client)
    MenuItem.objects.create(identifier="about", name="About the lab", url="/about/")
    assert "About the lab" in _render(client)


def test_rows_read_inside_a_transaction_are_not_kept():
    """It could roll back, and another write then commit under the same generation."""
    with transaction.atomic():
        site = SiteSettings.objects.current()
        site.title = "Never committed"
        site.save()
        request = RequestFactory().get("/")
        assert snapshot.site_settings(request).title == "Never committed"
        transaction.set_rollback(True)
    assert snapshot.held.held is None
    assert snapshot.site_settings(RequestFactory().get("/")).title != "Never committed"


def test_each_request_gets_its_own_copy_of_the_settings():
    first = snapshot.site_settings(RequestFactory().get("/"))
    first.title = "Changed in one request"
    assert snapshot.site_settings(RequestFactory().get("/")).title != "Changed in one request"


def test_within_a_request_the_rows_are_read_once(django_assert_num_queries):
    request = RequestFactory().get("/")
    snapshot.site_settings(request)
    with django_assert_num_queries(0):
        snapshot.site_settings(request)
        snapshot.main_menu(request)


def test_the_header_is_rendered_once_per_pattern_of_active_menu_entries(client):
    """Pages whose paths mark the same entries active share one rendering of the header; each
    page still marks its own entries."""
    from scidraft.site.context_processors import rendered_headers

    MenuItem.objects.create(identifier="notes", name="Notes", url="/notes/", weight=1)
    MenuItem.objects.create(identifier="tags", name="Tags", url="/tags/", weight=2)
    feed = _render(client)
    tags = _render(client, "/tags/")
    _render(client, "/notes/")  # the feed's pattern again
    assert (
        '<span class="active">Notes</span>' in feed
        and '<span class="active">Tags</span>' not in feed
    )
    assert (
        '<span class="active">Tags</span>' in tags
        and '<span class="active">Notes</span>' not in tags
    )
    assert len(rendered_headers.held[1]) == 2


def test_a_page_reads_the_content_generation_once(client, monkeypatch):
    """The page cache's key and every snapshot the page is rendered from use one reading of
    the generation, so they agree on it, and a miss costs one read, not one per caller."""
    from scidraft.site import generation

    readings = []
    real = generation.current_generation
    monkeypatch.setattr(generation, "current_generation", lambda: readings.append(1) or real())
    assert client.get("/", {"once": "1"}).status_code == 200
    assert len(readings) == 1
