"""notes.sitemaps: /sitemap.xml is a sitemap index of files holding the notes, tags and pages
of one range of primary keys each, so no file grows with the site and none moves its URLs."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from notes import sitemaps
from notes.models import Note, Page, Tag
from scidraft.site.generation import bump_generation
from scidraft.site.models import SiteSettings
from tests.factories import note_rows

pytestmark = pytest.mark.django_db

BASE = "http://testserver"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def _locs(client, path: str, root_tag: str) -> list[str]:
    response = client.get(path)
    assert response.status_code == 200, path
    root = ET.fromstring(response.content)  # noqa: S314 - our own output
    assert root.tag == f"{NS}{root_tag}"
    return [element.text for element in root.iter(f"{NS}loc")]


@pytest.fixture
def site(db, monkeypatch):
    """60 published notes, all tagged "shared", every third also "third"; an about page; files
    of ten keys (sitemaps.CHUNK) so a few notes make several files."""
    monkeypatch.setattr(sitemaps, "CHUNK", 10)
    SiteSettings.objects.current()
    notes = note_rows(60, title="Note {}", body="Text.", text="Text.")
    shared, third = Tag.objects.create(name="shared"), Tag.objects.create(name="third")
    shared.notes.add(*notes)
    third.notes.add(*notes[::3])
    Page.objects.create(slug="about", title="About", body="About.")
    return notes


def test_the_index_names_bounded_files_that_together_list_the_site(client, site):
    """Every published note, tag and page is in exactly one file, each file holds at most
    CHUNK URLs, and a note's file is the one its key names."""
    files = _locs(client, "/sitemap.xml", "sitemapindex")
    assert files[0] == f"{BASE}/sitemap-site.xml"
    assert _locs(client, "/sitemap-site.xml", "urlset") == [
        f"{BASE}/", f"{BASE}/notes/", f"{BASE}/tags/"
    ]  # fmt: skip
    note_files = [file for file in files if "/sitemap-notes-" in file]
    assert len(note_files) >= 6
    listed = []
    for file in note_files:
        urls = _locs(client, file.removeprefix(BASE), "urlset")
        assert 0 < len(urls) <= 10
        number = int(file.rsplit("-", 1)[1].removesuffix(".xml"))
        slugs = [url.rstrip("/").rsplit("/", 1)[1] for url in urls]
        keys = Note.objects.filter(slug__in=slugs).values_list("pk", flat=True)
        assert all(number * 10 <= key < (number + 1) * 10 for key in keys)
        listed += slugs
    assert sorted(listed) == sorted(note.slug for note in site)
    tags = [
        url
        for file in files
        if "/sitemap-tags-" in file
        for url in _locs(client, file.removeprefix(BASE), "urlset")
    ]
    assert sorted(tags) == [f"{BASE}/tags/shared/", f"{BASE}/tags/third/"]
    pages = [file for file in files if "/sitemap-pages-" in file]
    assert _locs(client, pages[0].removeprefix(BASE), "urlset") == [f"{BASE}/about/"]


def test_a_notes_file_keeps_its_urls_as_others_come_and_go(client, site):
    """Deleting notes and publishing new ones leaves the other files' URLs where they were."""
    chunk = f"/sitemap-notes-{site[30].pk // 10}.xml"
    assert f"{BASE}{chunk}" in _locs(client, "/sitemap.xml", "sitemapindex")
    before = _locs(client, chunk, "urlset")
    Note.objects.filter(pk__in=[site[0].pk, site[1].pk]).delete()
    Note.objects.filter(pk=site[30].pk).update(robots_noindex=True)
    note_rows(1, title="New", body="New.", text="New.")  # extra-0 again, a new key
    bump_generation()
    after = _locs(client, chunk, "urlset")
    assert after == [url for url in before if url != f"{BASE}/notes/{site[30].slug}/"]
    assert len(after) == len(before) - 1


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-notes-999.xml",
        "/sitemap-notes-99999999999999999999999999999999.xml",
        "/sitemap-tags-999.xml",
        "/sitemap-pages-999.xml",
        "/sitemap-users-0.xml",
        "/sitemap-notes--1.xml",
    ],
)
def test_a_file_that_names_nothing_is_404(client, site, path):
    """A chunk without a public item, an absurd number or an unknown kind: 404, no error."""
    assert client.get(path).status_code == 404


def test_sitemap_queries_and_sizes_are_constant(client, site, django_assert_max_num_queries):
    """The index and a file run the same few queries at 60 and 560 notes; a file still holds
    at most CHUNK URLs."""
    tag_chunk = Tag.objects.get(name="shared").pk // 10
    paths = (
        "/sitemap.xml",
        f"/sitemap-notes-{site[15].pk // 10}.xml",
        f"/sitemap-tags-{tag_chunk}.xml",
    )
    for path in paths:
        with django_assert_max_num_queries(7):
            assert client.get(path).status_code == 200
    more = Note.objects.bulk_create(
        Note(slug=f"more-{n}", title=f"More {n}", body="T.", rendered_html="<p>T.</p>",
             rendered_text="T.", has_body=True, status="published", date=site[0].date)
        for n in range(500)
    )  # fmt: skip
    bump_generation()
    with django_assert_max_num_queries(7):
        files = _locs(client, "/sitemap.xml", "sitemapindex")
    assert len([file for file in files if "/sitemap-notes-" in file]) >= 56
    middle = Note.objects.get(slug="more-250").pk // 10
    with django_assert_max_num_queries(7):
        assert len(_locs(client, f"/sitemap-notes-{middle}.xml", "urlset")) == 10
    assert len(more) == 500


def test_robots_txt_names_the_sitemap_index(client, site):
    """robots.txt still points at /sitemap.xml, now the index."""
    assert f"Sitemap: {BASE}/sitemap.xml" in client.get("/robots.txt").text
