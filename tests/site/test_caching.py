"""The page cache: headers, 304s, who is never cached, and invalidation on every write path."""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from bibliography.services import bibfile_import
from notes.models import Author, Environment, Note, Page, Status, Tag
from scidraft.markup import ENGINE_VERSION, jsengine
from scidraft.site.models import ContentGeneration, EntrySet, MenuItem, SiteSettings
from tests.factories import imported_note

NOTE = "/notes/result-theorem-gronwall-inequality/"


def fetch(client, url: str, **headers):
    return client.get(url, **headers)


@pytest.mark.django_db
def test_second_anonymous_request_is_served_from_the_cache(client, demo_loaded):
    """The first request renders and stores the page; the second is a hit with the same body."""
    first, second = fetch(client, NOTE), fetch(client, NOTE)
    assert (first["X-Cache"], second["X-Cache"]) == ("miss", "hit")
    assert first.content == second.content
    assert first["ETag"] == second["ETag"]


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", NOTE, "/tags/", "/about/", "/index.xml", "/sitemap.xml"])
def test_readers_get_public_cache_headers(client, demo_loaded, url):
    """Public pages say public, max-age and stale-while-revalidate, with an ETag."""
    response = fetch(client, url)
    control = response["Cache-Control"]
    assert "public" in control and "max-age=60" in control
    assert "stale-while-revalidate=600" in control
    assert response["ETag"] and response["Last-Modified"]


@pytest.mark.django_db
def test_revalidation_with_the_etag_answers_304_without_a_body(client, demo_loaded):
    """If-None-Match with the current ETag gives 304 and no body."""
    etag = fetch(client, NOTE)["ETag"]
    response = fetch(client, NOTE, HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 304 and response.content == b""
    changed = fetch(client, NOTE, HTTP_IF_NONE_MATCH='"something-else"')
    assert changed.status_code == 200


@pytest.mark.django_db
def test_logged_in_pages_are_private_and_never_stored(client, demo_loaded):
    """Someone logged in gets private, no-store; their page is not put in the shared cache."""
    user = User.objects.create_user("reader", password="correct horse battery")
    client.force_login(user)
    response = fetch(client, NOTE)
    assert "private" in response["Cache-Control"] and "no-store" in response["Cache-Control"]
    assert "X-Cache" not in response
    client.logout()
    assert fetch(client, NOTE)["X-Cache"] == "miss"


@pytest.mark.django_db
def test_a_cache_outage_degrades_to_rendering(client, demo_loaded, monkeypatch):
    """If the cache raises (Redis down), pages are still served, just not from the cache."""

    def broken(*args, **kwargs):
        raise ConnectionError("cache unreachable")

    for name in ("get", "set", "add", "delete"):
        monkeypatch.setattr(cache, name, broken)
    response = fetch(client, NOTE)
    assert response.status_code == 200 and b"note-single" in response.content


def _publish(db):
    imported_note(
        "fresh",
        "Text $x$.",
        title="Fresh result",
        path="fresh.md",
        date=timezone.now() - dt.timedelta(minutes=5),
    )


def _unpublish(db):
    note = Note.objects.get(slug="result-theorem-gronwall-inequality")
    note.status = Status.DRAFT
    note.save()


def _edit(db):
    note = Note.objects.get(slug="result-theorem-gronwall-inequality")
    note.title = "Edited Grönwall"
    note.save()


def _delete(db):
    Note.objects.get(slug="result-theorem-gronwall-inequality").delete()


def _tag(db):
    tag = Tag.objects.get(name="ODEs")
    tag.name = "Differential Equations"
    tag.save()


def _bibliography(db):
    bibfile_import(name="bib/new.bib", raw="@misc{n, title={New}}")


def _environment(db):
    kind = Environment.objects.get(key="theorem")
    kind.label = "Satz"
    kind.save()


def _settings(db):
    site = SiteSettings.objects.current()
    site.title = "Renamed Lab"
    site.save()


def _menu(db):
    item = MenuItem.objects.get(identifier="about")
    item.name = "About the lab"
    item.save()


def _entry_set(db):
    entry_set = EntrySet.objects.get(key="results")
    entry_set.count_label = "Statements"
    entry_set.save()


def _page(db):
    page = Page.objects.get(slug="about")
    page.title = "About the Halden lab"
    page.save()


def _author(db):
    author = Author.objects.get(handle="ada-novak")
    author.name = "Ada M. Novak"
    author.save()


def _tags_of_a_note(db):
    note = Note.objects.get(slug="result-theorem-gronwall-inequality")
    note.tags.add(Tag.objects.create(name="Stability"))


WRITES = [
    _publish, _unpublish, _edit, _delete, _tag, _bibliography, _environment, _settings, _menu,
    _entry_set, _page, _author, _tags_of_a_note,
]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("write", WRITES, ids=lambda write: write.__name__.strip("_"))
def test_every_write_path_bumps_the_generation_and_the_next_request_renders(
    client, demo_loaded, write
):
    """After any change a reader could see, cached pages are no longer served."""
    for url in ("/", NOTE):
        fetch(client, url)
        assert fetch(client, url)["X-Cache"] == "hit"
    before = ContentGeneration.objects.value()
    write(None)
    assert ContentGeneration.objects.value() > before
    assert fetch(client, "/")["X-Cache"] == "miss"


@pytest.mark.django_db
def test_an_edit_is_visible_on_the_next_request(client, demo_loaded):
    """The new title appears right after the edit, on the note and on the feed."""
    fetch(client, NOTE), fetch(client, "/")
    _edit(None)
    assert "Edited Grönwall" in fetch(client, NOTE).content.decode()
    assert (
        "Edited Grönwall"
        in fetch(client, "/page/2/").content.decode() + fetch(client, "/").content.decode()
    )


@pytest.mark.django_db
def test_reading_the_revision_record_does_not_invalidate(client, demo_loaded):
    """Writes readers cannot see (the revision record) leave cached pages in place."""
    from notes.services import revision_record

    fetch(client, NOTE)
    before = ContentGeneration.objects.value()
    revision_record(note=Note.objects.get(slug="result-theorem-gronwall-inequality"), kind="save")
    assert ContentGeneration.objects.value() == before
    assert fetch(client, NOTE)["X-Cache"] == "hit"


@pytest.mark.django_db
def test_a_row_from_an_older_engine_is_rendered_again_once_when_read(client, demo_loaded):
    """A stale stored render is refreshed on its first read and saved."""
    Note.objects.filter(slug="result-theorem-gronwall-inequality").update(
        render_version="0", rendered_html="<p>old</p>"
    )
    response = fetch(client, NOTE)
    assert b"<p>old</p>" not in response.content
    note = Note.objects.get(slug="result-theorem-gronwall-inequality")
    assert note.render_version == ENGINE_VERSION and "katex" in note.rendered_html


@pytest.mark.django_db
def test_changing_a_kind_marks_renders_stale_and_reading_refreshes_them(client, demo_loaded):
    """Renaming a kind marks every row stale; the next read shows the new word."""
    _environment(None)
    assert not Note.objects.exclude(source_hash="").exists()
    assert "Satz 1" in fetch(client, NOTE).content.decode()


@pytest.mark.django_db
def test_rerender_command_renders_only_stale_rows_unless_all(demo_loaded):
    """`rerender` skips current rows; `rerender --all` renders everything."""
    out = StringIO()
    call_command("rerender", stdout=out)
    assert out.getvalue().startswith("0 notes and 0 pages")
    Note.objects.filter(slug="result-theorem-gronwall-inequality").update(render_version="0")
    out = StringIO()
    call_command("rerender", stdout=out)
    assert out.getvalue().startswith("1 notes and 0 pages")
    out = StringIO()
    call_command("rerender", "--all", stdout=out)
    assert out.getvalue().startswith(f"{Note.objects.count()} notes and {Page.objects.count()}")


def test_formulas_typeset_by_another_process_are_reused_from_the_shared_cache(monkeypatch):
    """A formula in the shared cache is not typeset again by a process that has not seen it."""
    jsengine.tex_cache_clear()
    html = jsengine.render_tex("\\zeta(2)=\\pi^2/6", display=False)
    jsengine.tex_cache_clear()  # as if another process: its own LRU is empty

    def no_katex(*args, **kwargs):
        raise AssertionError("KaTeX should not run")

    monkeypatch.setattr(jsengine, "_call", no_katex)
    assert jsengine.render_tex("\\zeta(2)=\\pi^2/6", display=False) == html


@pytest.mark.django_db
def test_pages_served_from_the_cache_keep_their_security_headers(client, demo_loaded):
    """A cache hit carries the same CSP and frame options as the rendered page."""
    first, second = fetch(client, NOTE), fetch(client, NOTE)
    assert second["X-Cache"] == "hit"
    for header in ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options"):
        assert second[header] == first[header]
