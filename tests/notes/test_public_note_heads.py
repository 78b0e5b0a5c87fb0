"""What a note shows of itself on its feed card and on its own page, with the test client: its
title by the showTitle rule, its date in the note's own offset, the institute and authors it
names (or the site's), and its tags in the order the note gives them (docs/theme.md#card-titles,
#the-note-page)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.notes.public_pages import PREVIEW, html, make_note, meta, site

pytestmark = pytest.mark.django_db


# --- The showTitle table (docs/theme.md#card-titles) -------------------------------------------


@pytest.mark.parametrize(
    ("show_title", "body", "shown"),
    [
        (None, PREVIEW, True),
        (None, "No markers here.", False),
        (True, "No markers here.", True),
        (True, PREVIEW, True),
        (False, PREVIEW, False),
        (False, "No markers here.", False),
    ],
)
def test_card_title_rule(client, db, show_title, body, shown):
    """The card title follows showTitle when set, else the presence of preview markers."""
    make_note("n", body, title="The Title", show_title=show_title)
    card = html(client, "/").one("article.note-card")
    assert card.has("h2.note-title") is shown
    if shown:
        assert card.one("h2.note-title").flat_text == "The Title"


@pytest.mark.parametrize("show_title", [None, True, False])
def test_note_page_title_whenever_set(client, db, show_title):
    """The note page shows h1.note-title whenever a title is set, ignoring showTitle."""
    make_note("n", "No markers.", title="The Title", show_title=show_title)
    assert (
        html(client, "/notes/n/").one("article.note-single h1.note-title").flat_text == "The Title"
    )


@pytest.mark.parametrize("show_title", [None, True, False])
def test_a_note_without_title_gets_no_heading(client, db, show_title):
    """Without a title neither the card nor the page renders a (possibly empty) heading."""
    make_note("untitled", PREVIEW, title="", show_title=show_title)
    card = html(client, "/").one("article.note-card")
    assert not card.has(".note-title") and not card.has("h2")
    page = html(client, "/notes/untitled/").one("article.note-single")
    assert not page.has(".note-title") and not page.has("h1")
    for heading in html(client, "/").select("h1, h2"):
        assert heading.flat_text


# --- Dates -------------------------------------------------------------------------------------


def test_card_date_in_the_notes_offset(client, db):
    """Card: `Sep 22, 2026`, tooltip `Sep 22, 2026 07:20`, in the +09:00 of the front matter."""
    make_note("tokyo")
    time = html(client, "/").one("a.note-time")
    assert time.flat_text == "Sep 22, 2026"
    assert time.get("title") == "Sep 22, 2026 07:20"


def test_note_page_date_in_the_notes_offset(client, db):
    """Note page: `Sep 22, 2026 · 07:20` in a span (not a link)."""
    make_note("tokyo")
    article = html(client, "/notes/tokyo/").one("article.note-single")
    assert article.one("header.note-head span.note-time").flat_text == "Sep 22, 2026 · 07:20"
    assert not article.has("a.note-time")


def test_single_digit_days_and_other_offsets(client, db):
    """`Mar 5, 2026` (no zero padding) and a negative offset kept as written."""
    make_note("ny", date=dt.datetime(2026, 3, 5, 23, 5, tzinfo=dt.timezone(-dt.timedelta(hours=5))))
    time = html(client, "/").one("a.note-time")
    assert (time.flat_text, time.get("title")) == ("Mar 5, 2026", "Mar 5, 2026 23:05")
    assert html(client, "/notes/ny/").one("span.note-time").flat_text == "Mar 5, 2026 · 23:05"


# --- Identity ----------------------------------------------------------------------------------


def test_identity_from_the_note(client, db):
    """The note's institute and first author: avatar letter, institute, @handle link."""
    make_note("own", institute="guest lab", authors=["Ada Novak", "Ben Ito"])
    card = html(client, "/").one("article.note-card")
    assert card.one("span.note-avatar").flat_text == "G"
    assert card.one("span.note-author").flat_text == "guest lab"
    handles = card.select(".note-handle")
    assert [(h.tag, h.flat_text, h.get("href")) for h in handles] == [
        ("a", "@ada-novak", "/authors/ada-novak/")
    ]


def test_identity_falls_back_to_the_site(client, db):
    """No institute or author on the note: the site's, the handle not linked."""
    site(institute="Halden Institute", author="halden-lab")
    make_note("plain")
    for tree in (html(client, "/"), html(client, "/notes/plain/")):
        head = tree.one("header.note-head")
        assert head.one("span.note-avatar").flat_text == "H"
        assert head.one("span.note-author").flat_text == "Halden Institute"
        handle = head.one(".note-handle")
        assert (handle.tag, handle.flat_text) == ("span", "@halden-lab")


def test_identity_falls_back_to_the_theme_defaults(client, db):
    """Site settings blank too: "Your Institute", avatar Y and @yourname."""
    site(institute="", author="")
    make_note("plain")
    head = html(client, "/").one("header.note-head")
    assert head.one("span.note-avatar").flat_text == "Y"
    assert head.one("span.note-author").flat_text == "Your Institute"
    assert head.one(".note-handle").flat_text == "@yourname"
    assert meta(html(client, "/notes/plain/"), "author") == ["yourname"]


def test_several_authors(client, db):
    """Every author on the note page (linked handles) and in the meta; the card shows the first."""
    make_note("two", authors=["Ada Novak", "Ben Ito"])
    tree = html(client, "/notes/two/")
    handles = tree.one("article.note-single header.note-head").select("a.note-handle")
    assert [(a.flat_text, a.get("href")) for a in handles] == [
        ("@ada-novak", "/authors/ada-novak/"),
        ("@ben-ito", "/authors/ben-ito/"),
    ]
    assert meta(tree, "author") == ["Ada Novak, Ben Ito"]
    assert meta(tree, "citation_author") == ["Ada Novak", "Ben Ito"]
    card = html(client, "/").one("article.note-card")
    assert [h.flat_text for h in card.select(".note-handle")] == ["@ada-novak"]


# --- Tags in the note's order ------------------------------------------------------------------


def test_tags_show_in_the_order_the_front_matter_gives_them(client, db):
    """The theme ranges over .Params.tags: "#Demo #Citations #Alpha", not by name, on the
    card and on the page."""
    make_note("ordered", "Text about ordering.", tags=["Demo", "Citations", "Alpha"])
    expected = ["#Demo", "#Citations", "#Alpha"]
    card = html(client, "/").one("article.note-card")
    assert [a.flat_text for a in card.one("footer.note-tags").select("a.note-tag")] == expected
    page = html(client, "/notes/ordered/").one("main > article.note-card.note-single")
    assert [a.flat_text for a in page.one("footer.note-tags").select("a.note-tag")] == expected
