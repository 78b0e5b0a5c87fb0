"""What the tests of the public pages share: the test client's requests and parsed pages, a
page's meta tags, the site's settings, and notes dated in Tokyo's offset."""

from __future__ import annotations

import datetime as dt
from functools import partial

from notes.models import Note, Page
from scidraft.site.models import SiteSettings
from tests.factories import imported_note
from tests.markup.dom import Element, parse

TOKYO = dt.timezone(dt.timedelta(hours=9))


SEP_22 = dt.datetime(2026, 9, 22, 7, 20, tzinfo=TOKYO)  # 2026-09-21 22:20 UTC


DEMO_BASE = "http://testserver"  # the request's host: the demo sets no address of its own


PREVIEW = "{{< preview >}}\nThe part on the card.\n{{< /preview >}}\n\nThe rest of the note."


def get(client, url: str, status: int = 200):
    response = client.get(url)
    assert response.status_code == status, f"{url}: {response.status_code}"
    return response


def html(client, url: str, status: int = 200) -> Element:
    return parse(get(client, url, status).content.decode())


def meta(tree: Element, name: str) -> list[str]:
    """Contents of <meta name=…> (or property=…) tags, in order."""
    return [
        node.get("content")
        for node in tree.select("head meta")
        if node.get("name") == name or node.get("property") == name
    ]


def site(**values) -> SiteSettings:
    settings_row = SiteSettings.objects.current()
    for name, value in values.items():
        setattr(settings_row, name, value)
    settings_row.save()
    return settings_row


# The notes of these pages are dated SEP_22 (in Tokyo) unless a test says otherwise.
make_note = partial(imported_note, date=SEP_22)


def dated(count: int, prefix: str = "note", **fields) -> list[Note]:
    """`count` notes, the first the newest, an hour apart."""
    return [
        make_note(f"{prefix}-{index:02d}", date=SEP_22 - dt.timedelta(hours=index), **fields)
        for index in range(count)
    ]


def _search_page():
    return Page.objects.create(slug="search", title="Search", layout=Page.Layout.SEARCH)
