"""notes.archives: the archive lists the years with their counts and shows one year a page, a
bounded number of notes each, whatever the number of notes."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from notes.models import Note, Page
from scidraft.site.generation import bump_generation
from scidraft.site.models import SiteSettings
from tests.factories import note_row, note_rows

pytestmark = pytest.mark.django_db

NOW_YEAR = dt.datetime.now(dt.UTC).year


def _years(text: str) -> list[tuple[int, int]]:
    found = re.findall(
        r'<h2 class="archive-year-header" id="(\d+)">.*?&nbsp;(\d+)</sup></h2>', text
    )
    return [(int(year), int(count)) for year, count in found]


def _entries(text: str) -> list[str]:
    return re.findall(r'class="entry-link" [^>]*href="/notes/([-\w]+)/"', text)


def _move(slugs, year: int) -> None:
    for number, slug in enumerate(slugs):
        moment = dt.datetime(year, 6, 1, 12, tzinfo=dt.UTC) - dt.timedelta(hours=number)
        Note.objects.filter(slug=slug).update(date=moment)


@pytest.fixture
def archive(db, settings):
    """60 notes: 25 this year, 20 in 2024 (June and May), 15 in 2023; ten notes a page."""
    settings.SCIDRAFT_ARCHIVE_PAGE_NOTES = 10
    SiteSettings.objects.current()  # the row, before any page is counted
    Page.objects.create(slug="archives", title="Archive", layout=Page.Layout.ARCHIVES)
    note_rows(60, title="Note {}", body="Text.", text="Text.")
    _move([f"extra-{n}" for n in range(25, 45)], 2024)
    _move([f"extra-{n}" for n in range(45, 60)], 2023)


def test_the_archive_lists_years_with_counts_and_shows_the_newest(client, archive):
    """/archives/: every year with its count, newest first; the newest year's first page."""
    text = client.get("/archives/").text
    assert _years(text) == [(NOW_YEAR, 25), (2024, 20), (2023, 15)]
    assert _entries(text) == [f"extra-{n}" for n in range(10)]
    assert (
        f'href="/archives/{NOW_YEAR}/page/2/"' in text
        and f'href="/archives/{NOW_YEAR}/page/3/"' in text
    )
    # Older years link to their pages; their headers keep the ids old #year links point at.
    assert '<a class="archive-header-link" href="/archives/2024/">2024</a>' in text


def test_a_year_page_and_its_pages(client, archive):
    """/archives/<year>/ shows that year only, ten a page, months counted over the whole year."""
    text = client.get("/archives/2024/").text
    assert _entries(text) == [f"extra-{n}" for n in range(25, 35)]
    assert _years(text) == [(NOW_YEAR, 25), (2024, 20), (2023, 15)]
    # The 20 notes an hour apart back from 1 June 12:00: 13 in June, 7 in May, on two pages.
    assert re.search(r'id="2024-June">.*?&nbsp;13</sup>', text)
    second = client.get("/archives/2024/page/2/").text
    assert _entries(second) == [f"extra-{n}" for n in range(35, 45)]
    assert re.search(r'id="2024-May">.*?&nbsp;7</sup>', second)
    assert client.get("/archives/2024/page/3/").status_code == 404
    response = client.get("/archives/2024/page/1/")
    assert response.status_code == 301 and response["Location"] == "/archives/2024/"


def test_a_year_is_the_notes_own_offset(client, archive):
    """A note written at 00:30 on 1 January at +09:00 (still 2022 in UTC) is a 2023 note."""
    note_row(
        "new-year",
        title="New year",
        has_body=True,
        date=dt.datetime(2022, 12, 31, 15, 30, tzinfo=dt.UTC),
        date_offset_minutes=540,
    )
    assert (2023, 16) in _years(client.get("/archives/").text)
    assert client.get("/archives/2022/").status_code == 404
    text = client.get("/archives/2023/page/2/").text
    assert "new-year" in _entries(text)
    assert re.search(r'id="2023-January">.*?&nbsp;1</sup>', text)


@pytest.mark.parametrize(
    "path",
    [
        "/archives/1999/",
        "/archives/0/",
        "/archives/99999999999999999999999999/",
        "/archives/2024/page/0/",
        "/archives/2024/page/99999999999999999999999999/",
        "/no-such-page/2024/",
    ],
)
def test_years_and_pages_that_name_nothing_are_404(client, archive, path):
    """A year without notes, out of range or absurdly long, a page past the last, or a year
    under a page that is not the archive: 404, never an error."""
    Page.objects.create(slug="about", title="About", body="About.")
    assert client.get(path).status_code == 404
    assert client.get("/about/2024/").status_code == 404


def _more(count: int) -> None:
    """`count` more published notes, `more-0`…, in one query (this year, three days old)."""
    moment = dt.datetime.now(dt.UTC) - dt.timedelta(days=3)
    Note.objects.bulk_create(
        Note(slug=f"more-{n}", title=f"More {n}", body="Text.", rendered_html="<p>Text.</p>",
             rendered_text="Text.", has_body=True, status="published",
             date=moment - dt.timedelta(minutes=n))
        for n in range(count)
    )  # fmt: skip
    bump_generation()  # as every write does: no page cached before is served


def test_archive_pages_stay_bounded_as_notes_grow(client, archive, django_assert_max_num_queries):
    """At 60 and at 1,060 notes each archive page lists ten notes in the same few queries."""
    paths = ("/archives/", "/archives/2024/", "/archives/2024/page/2/")
    for path in paths:
        with django_assert_max_num_queries(9):
            response = client.get(path)
        assert len(_entries(response.text)) == 10
    _more(1000)
    for path in (*paths, f"/archives/{NOW_YEAR}/page/100/"):
        with django_assert_max_num_queries(9):
            response = client.get(path)
        assert response.status_code == 200
        assert len(_entries(response.text)) == 10
    assert _years(client.get("/archives/").text)[0] == (NOW_YEAR, 1025)
