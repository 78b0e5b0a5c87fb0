"""The feed at / and /notes/ with the test client: its pages and their numbered pagination, the
cards' markup, the homepage's head, and where promotion cards are placed among the notes
(docs/theme.md#the-feed, #promotions-and-galleries, #class-names-and-stylesheet-order)."""

from __future__ import annotations

import datetime as dt

import pytest

from scidraft.site.models import SiteSettings
from tests.markup.dom import Element, parse
from tests.notes.public_pages import (
    DEMO_BASE,
    PREVIEW,
    SEP_22,
    dated,
    get,
    html,
    make_note,
    meta,
    site,
)

pytestmark = pytest.mark.django_db


# --- Feed --------------------------------------------------------------------------------------


def test_feed_at_root_and_notes(client, demo_loaded):
    """/ and /notes/ serve the same feed: 8 notes + 1 promotion per page (demo settings)."""
    for url in ("/", "/notes/"):
        tree = html(client, url)
        cards = tree.select("div.notes-feed > article.note-card")
        assert len(cards) == 8 + 1
        assert len(tree.select("article.note-card.note-promotion")) == 1
    assert get(client, "/").content.count(b"note-card") == get(client, "/notes/").content.count(
        b"note-card"
    )


def test_feed_second_pages(client, demo_loaded):
    """/page/2/ and /notes/page/2/ show the second page, the same cards at both addresses."""
    first = html(client, "/")
    second = html(client, "/page/2/")
    assert len(second.select("article.note-card")) == 9
    assert [a.get("href") for a in second.select("a.note-time")] == [
        a.get("href") for a in html(client, "/notes/page/2/").select("a.note-time")
    ]
    regular_first = {a.get("href") for a in first.select("a.note-time")}
    assert not regular_first & {a.get("href") for a in second.select("a.note-time")}


def test_feed_last_page_counts(client, demo_loaded):
    """25 regular demo notes at 8 a page: page 4 holds 1 note + 1 promotion; page 5 is a 404."""
    last = html(client, "/page/4/")
    assert len(last.select("article.note-card")) == 2
    assert len(last.select("article.note-card.note-promotion")) == 1
    get(client, "/page/5/", 404)
    get(client, "/notes/page/5/", 404)
    get(client, "/page/99/", 404)
    get(client, "/page/0/", 404)


def test_feed_page_one_redirects(client, db):
    """/page/1/ redirects to / and /notes/page/1/ to /notes/."""
    dated(3)
    response = client.get("/page/1/")
    assert response.status_code in (301, 302) and response["Location"] == "/"
    response = client.get("/notes/page/1/")
    assert response.status_code in (301, 302) and response["Location"] == "/notes/"


def test_feed_card_markup(client, db):
    """A card carries the class names of docs/theme.md#class-names-and-stylesheet-order and links
    its time to the note."""
    make_note("with-tags", PREVIEW, tags=["Demo", "Linear Algebra"], show_title=True)
    tree = html(client, "/")
    feed = tree.one("main div.notes-feed")
    card = feed.one("article.note-card")
    head = card.one("header.note-head")
    assert head.one("span.note-avatar").get("aria-hidden") == "true"
    names = head.one("span.note-names")
    assert names.has("span.note-author") and names.has(".note-handle")
    time = head.one("a.note-time")
    assert time.get("href") == "/notes/with-tags/"
    assert card.one("h2.note-title a").get("href") == "/notes/with-tags/"
    body = card.one("div.note-body.md-content")
    assert (
        "The part on the card." in body.flat_text and "The rest of the note." not in body.flat_text
    )
    readmore = body.one("a.note-readmore")
    assert readmore.flat_text == "Read more »" and readmore.get("href") == "/notes/with-tags/"
    tags = card.one("footer.note-tags").select("a.note-tag")
    assert [(a.flat_text, a.get("href")) for a in tags] == [
        ("#Demo", "/tags/demo/"),
        ("#Linear Algebra", "/tags/linear-algebra/"),
    ]
    assert tree.one("body").get("class") == "list"
    assert not card.has(".share-buttons") and not card.has("button.copy-code")


def test_feed_without_preview_shows_the_full_note(client, db):
    """Without preview markers the card shows the whole note and no "Read more »"."""
    make_note("full", "First paragraph.\n\nSecond paragraph.", show_title=True)
    card = html(client, "/").one("article.note-card")
    assert "Second paragraph." in card.flat_text
    assert not card.has("a.note-readmore")


def test_numbered_pagination(client, db):
    """The bar: ‹ Previous, numbers with the current one active, Next ›, on both feeds."""
    site(notes_per_page=2)
    dated(7)  # 4 pages
    first = html(client, "/")
    bar = first.one("nav.numbered-pagination")
    active = bar.one("a.page-num.active")
    assert active.get("aria-current") == "page" and active.flat_text == "1"
    assert not bar.has("a.page-step.prev")
    assert bar.one("a.page-step.next").flat_text == "Next ›"
    assert bar.one("a.page-step.next").get("href") == "/page/2/"
    assert [a.flat_text for a in bar.select(".page-numbers a.page-num")] == ["1", "2", "3", "4"]

    second = html(client, "/notes/page/2/").one("nav.numbered-pagination")
    assert second.one("a.page-num.active[aria-current=page]").flat_text == "2"
    assert second.one("a.page-step.prev").flat_text == "‹ Previous"
    assert second.one("a.page-step.prev").get("href") == "/notes/"
    assert second.one("a.page-step.next").get("href") == "/notes/page/3/"
    assert {a.flat_text: a.get("href") for a in second.select("a.page-num")}[
        "4"
    ] == "/notes/page/4/"

    last = html(client, "/page/4/").one("nav.numbered-pagination")
    assert not last.has("a.page-step.next")
    assert last.one("a.page-step.prev").get("href") == "/page/3/"


def test_pagination_gaps(client, db):
    """Far from both ends the bar shows 1 … n-2 … n+2 … last, one gap per hole."""
    site(notes_per_page=1)
    dated(13)
    bar = html(client, "/page/7/").one("nav.numbered-pagination")
    items = [
        "…" if "page-gap" in node.classes else node.flat_text
        for node in bar.one(".page-numbers").iter()
        if {"page-gap", "page-num"} & set(node.classes)
    ]
    assert items == ["1", "…", "5", "6", "7", "8", "9", "…", "13"]
    assert len(bar.select("span.page-gap")) == 2


def test_one_page_has_no_pagination(client, db):
    """A feed that fits on one page shows no numbered bar."""
    dated(3)
    assert not html(client, "/").has("nav.numbered-pagination")


def test_empty_feed(client, db):
    """Without notes the feed still answers, with its empty message."""
    tree = html(client, "/")
    assert not tree.has("article.note-card")
    assert tree.has("div.notes-feed")


# --- The homepage's head -----------------------------------------------------------------------


def test_homepage_title_is_the_site_title(client, demo_loaded):
    """The homepage <title> is the site's title alone, with the site description."""
    tree = html(client, "/")
    assert tree.one("head title").flat_text == "Halden Notes"
    assert meta(tree, "description") == [SiteSettings.objects.current().description]
    assert tree.one("link[rel=canonical]").get("href") == f"{DEMO_BASE}/"


# --- Promotions --------------------------------------------------------------------------------


def _promotion_setup(per_page: int, positions: str, promos: int = 2, notes: int = 12):
    site(notes_per_page=4, promotions_per_page=per_page, promotion_positions=positions)
    dated(notes)
    for index in range(promos):
        make_note(
            f"promo-{index}",
            f"Promotion {index} text.",
            title="",
            promotion=True,
            date=SEP_22 - dt.timedelta(minutes=30 + index * 60),
        )


def _promotion_slots(tree: Element) -> list[int]:
    return [
        index
        for index, article in enumerate(tree.select("article.note-card"), start=1)
        if "note-promotion" in article.classes
    ]


def test_promotions_placed_per_settings(client, db):
    """One promotion per page in slots 3-5, never in the chronological flow, alternating."""
    _promotion_setup(1, "3-5")
    shown = []
    for url in ("/", "/page/2/", "/page/3/"):
        tree = html(client, url)
        cards = tree.select("article.note-card")
        assert len(cards) == 4 + 1
        (slot,) = _promotion_slots(tree)
        assert 3 <= slot <= 5
        promotion = cards[slot - 1]
        assert not promotion.has("a.note-time"), "promotion cards carry no timestamp link"
        assert "Promotion" in promotion.flat_text
        shown.append(promotion.one("div.note-body").flat_text)
        assert len(tree.select("a.note-time")) == 4
    assert shown[0] != shown[1] and shown[1] != shown[2]
    get(client, "/page/4/", 404)  # 12 regular notes: promotions do not count


def test_promotions_are_stable_between_reloads(client, db):
    """The same page shows the same promotion in the same slot on / and /notes/."""
    _promotion_setup(1, "3-5")
    first = get(client, "/page/2/").content
    assert get(client, "/page/2/").content == first
    assert get(client, "/notes/page/2/").content.count(b"note-promotion") == 1
    assert _promotion_slots(html(client, "/notes/page/2/")) == _promotion_slots(
        parse(first.decode())
    )


def test_two_promotions_at_a_single_position(client, db):
    """k = 2 with position "4": the slots right after it are used (4 and 5), both distinct."""
    _promotion_setup(2, "4", promos=3)
    for url in ("/", "/page/2/", "/page/3/"):
        tree = html(client, url)
        assert _promotion_slots(tree) == [4, 5]
        promos = [a.flat_text for a in tree.select("article.note-promotion div.note-body")]
        assert len(set(promos)) == 2


def test_no_promotions_when_disabled(client, db):
    """promotionsPerPage = 0 (the theme default): promotion notes never reach the feed."""
    _promotion_setup(0, "3-5")
    for url in ("/", "/page/2/", "/page/3/"):
        tree = html(client, url)
        assert not tree.has("article.note-promotion")
        assert "Promotion" not in tree.one("div.notes-feed").flat_text


def test_promotions_on_a_short_last_page(client, db):
    """A short last page still shows its promotion, within the page."""
    _promotion_setup(1, "3-5", notes=9)  # pages of 4, 4, 1
    tree = html(client, "/page/3/")
    assert len(tree.select("article.note-card")) == 2
    assert _promotion_slots(tree) in ([1], [2])


def test_short_last_page_keeps_all_its_promotions(client, db):
    """k = 2 on a last page with one note: both promotions still show (1 note + 2 cards)."""
    _promotion_setup(2, "3-5", promos=3, notes=9)  # pages of 4, 4, 1
    tree = html(client, "/page/3/")
    assert len(tree.select("article.note-card")) == 1 + 2
    assert len(tree.select("article.note-card.note-promotion")) == 2


def test_promotions_left_out_of_recommendations(client, db):
    """Recommendations never list a promotion (nor the note itself)."""
    site(recommendation_count=50)
    _promotion_setup(1, "3-5", notes=6)
    links = [
        a.get("href") for a in html(client, "/notes/note-02/").select("nav.note-recommendations a")
    ]
    assert sorted(links) == sorted(f"/notes/note-{i:02d}/" for i in range(6) if i != 2)


def test_promotions_included_in_prev_next(client, db):
    """Prev/next walk all notes by date, promotions included (theme behaviour). « Prev is the
    newer note and Next » the older, as in the theme's pages built by Hugo (the reference
    screenshots: Hugo's `$pages.Next` points to newer content)."""
    _promotion_setup(1, "3-5", promos=1, notes=3)
    # note-00 (07:20) > promo-0 (06:50) > note-01 (06:20)
    nav = html(client, "/notes/note-00/").one("nav.paginav")
    assert nav.one("a.next").get("href") == "/notes/promo-0/"
    assert not nav.has("a.prev")
    nav = html(client, "/notes/note-01/").one("nav.paginav")
    assert nav.one("a.prev").get("href") == "/notes/promo-0/"
