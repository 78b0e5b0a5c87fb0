"""The public site with the test client (docs/theme.md#card-titles, #pages,
#class-names-and-stylesheet-order)."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from functools import partial
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from notes.models import Author, Note, NoteAuthor, Page, Status, Tag
from notes.rendering import RENDERED_FIELDS
from scidraft.site.models import MenuItem, SiteSettings
from tests.factories import imported_note, imported_page
from tests.markup.dom import Element, parse

pytestmark = pytest.mark.django_db

TOKYO = dt.timezone(dt.timedelta(hours=9))
SEP_22 = dt.datetime(2026, 9, 22, 7, 20, tzinfo=TOKYO)  # 2026-09-21 22:20 UTC
DEMO_BASE = "http://testserver"  # the request's host: the demo sets no address of its own
SHARE_ORDER = ["x", "linkedin", "reddit", "facebook", "whatsapp", "telegram", "ycombinator"]
PREVIEW = "{{< preview >}}\nThe part on the card.\n{{< /preview >}}\n\nThe rest of the note."
MERMAID = "A diagram:\n\n```mermaid\ngraph TD\n  A --> B\n```\n"
MATH = "Inline math \\(x^2 + y^2\\) here."


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


# --- Building content -------------------------------------------------------------------------


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


# --- Feed -----------------------------------------------------------------------------------


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


# --- The showTitle table (docs/theme.md#card-titles) ----------------------------------------------


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


# --- Dates ------------------------------------------------------------------------------------


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


# --- Identity -------------------------------------------------------------------------------


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


def test_author_page_lists_their_notes(client, db):
    """/authors/<handle>/ shows the author and only their published notes."""
    make_note("hers", authors=["Ada Novak"], date=SEP_22)
    make_note("joint", authors=["Ben Ito", "Ada Novak"], date=SEP_22 - dt.timedelta(days=1))
    make_note("his", authors=["Ben Ito"])
    make_note("hidden-draft", authors=["Ada Novak"], draft=True)
    tree = html(client, "/authors/ada-novak/")
    assert "Ada Novak" in tree.one("main h1").flat_text
    links = [a.get("href") for a in tree.select("article.note-entry.tag-entry a.entry-link")]
    assert links == ["/notes/hers/", "/notes/joint/"]
    get(client, "/authors/nobody/", 404)


# --- Drafts, empty and scheduled notes ------------------------------------------------------


def _sitemap(client) -> bytes:
    """Every file the sitemap index names, one after another."""
    index = get(client, "/sitemap.xml").content.decode()
    files = re.findall(r"<loc>http://testserver(/[^<]+)</loc>", index)
    return b"".join(get(client, file).content for file in files)


def _listed(client, slug: str) -> dict[str, bool]:
    href = f"/notes/{slug}/"
    return {
        "feed": href in [a.get("href") for a in html(client, "/").select("a")],
        "tag": href in [a.get("href") for a in html(client, "/tags/shared/").select("a")],
        "author": href in [a.get("href") for a in html(client, "/authors/ada/").select("a")],
        "rss": href.encode() in get(client, "/index.xml").content,
        "sitemap": href.encode() in _sitemap(client),
        "index.json": href.encode() in get(client, "/index.json").content,
    }


@pytest.mark.parametrize(
    "fields",
    [{"draft": True}, {"body": "   \n\n  "}, {"body": ""}],
    ids=["draft", "blank", "empty"],
)
def test_unpublished_notes_are_never_listed(client, db, fields):
    """Drafts and empty notes appear nowhere and their page is a 404."""
    make_note("visible", tags=["Shared"], authors=["ada"])
    fields = {"body": "Text.", **fields}
    make_note("invisible", fields.pop("body"), tags=["Shared"], authors=["ada"], **fields)
    assert set(_listed(client, "invisible").values()) == {False}
    assert set(_listed(client, "visible").values()) == {True}
    get(client, "/notes/invisible/", 404)
    get(client, "/notes/invisible/cite.bib", 404)


def test_scheduled_note_appears_once_its_date_passes(client, db, monkeypatch):
    """A note dated in the future is hidden until then, then shows without any re-render."""
    make_note("visible", tags=["Shared"], authors=["ada"])
    soon = timezone.now().astimezone(TOKYO) + dt.timedelta(hours=1)
    make_note("scheduled", tags=["Shared"], authors=["ada"], date=soon)
    assert set(_listed(client, "scheduled").values()) == {False}
    get(client, "/notes/scheduled/", 404)
    assert "Shared" in html(client, "/tags/").flat_text
    assert "<sup>1</sup>" in get(client, "/tags/").content.decode()

    # Time passes (no write happens): the note's date is now in the past.
    later = timezone.now() + dt.timedelta(hours=2)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert set(_listed(client, "scheduled").values()) == {True}
    get(client, "/notes/scheduled/")
    assert "<sup>2</sup>" in get(client, "/tags/").content.decode()


# --- Promotions -----------------------------------------------------------------------------


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


# --- Hidden flags ---------------------------------------------------------------------------


def _search_page():
    return Page.objects.create(slug="search", title="Search", layout=Page.Layout.SEARCH)


def test_search_hidden(client, db):
    """searchHidden leaves a note out of search and index.json, not out of the feed."""
    _search_page()
    make_note("shown", "Zeppelin findable words.")
    make_note("hidden", "Zeppelin findable words.", search_hidden=True)
    results = html(client, "/search/?q=zeppelin").select("li.search-result-item h2 a")
    assert [a.get("href") for a in results] == ["/notes/shown/"]
    permalinks = [entry["permalink"] for entry in json.loads(get(client, "/index.json").content)]
    assert any(p.endswith("/notes/shown/") for p in permalinks)
    assert not any(p.endswith("/notes/hidden/") for p in permalinks)
    assert "/notes/hidden/" in [a.get("href") for a in html(client, "/").select("a")]


def test_hidden_in_rss(client, db):
    """hiddenInRss leaves a note out of the site and tag feeds, not out of the feed page."""
    make_note("shown", tags=["T"])
    make_note("hidden", tags=["T"], hidden_in_rss=True)
    for url in ("/index.xml", "/tags/t/index.xml"):
        body = get(client, url).content
        assert b"/notes/shown/" in body and b"/notes/hidden/" not in body
    assert "/notes/hidden/" in [a.get("href") for a in html(client, "/").select("a")]


def test_robots_noindex(client, db):
    """robotsNoIndex: `noindex, nofollow` on the page and no sitemap entry; others index."""
    make_note("shown")
    make_note("hidden", robots_noindex=True)
    assert meta(html(client, "/notes/hidden/"), "robots") == ["noindex, nofollow"]
    assert meta(html(client, "/notes/shown/"), "robots") == ["index, follow"]
    sitemap = _sitemap(client)
    assert b"/notes/shown/" in sitemap and b"/notes/hidden/" not in sitemap


def test_disable_share(client, db):
    """disableShare removes the share row; the site switch does too."""
    make_note("quiet", disable_share=True)
    make_note("loud")
    assert not html(client, "/notes/quiet/").has("ul.share-buttons")
    assert html(client, "/notes/loud/").has("ul.share-buttons")
    site(show_share_buttons=False)
    assert not html(client, "/notes/loud/").has("ul.share-buttons")


def _share_names(tree: Element) -> list[str]:
    return [
        a.get("aria-label").removeprefix("share on ") for a in tree.select("ul.share-buttons li a")
    ]


def test_share_buttons_in_theme_order_and_restricted(client, db):
    """All seven buttons in theme order; a note's or the site's list restricts (order kept)."""
    make_note("all", tags=["Linear Algebra"])
    make_note("some", share_buttons=["telegram", "x", "reddit"])
    tree = html(client, "/notes/all/")
    assert _share_names(tree) == SHARE_ORDER
    x = tree.one("ul.share-buttons a[aria-label='share on x']")
    assert x.get("href").startswith("https://x.com/intent/tweet/")
    assert "hashtags=LinearAlgebra" in x.get("href")
    assert all(a.get("rel") == "noopener noreferrer" for a in tree.select("ul.share-buttons a"))
    assert _share_names(html(client, "/notes/some/")) == ["x", "reddit", "telegram"]
    site(share_buttons=["ycombinator", "linkedin"])
    assert _share_names(html(client, "/notes/all/")) == ["linkedin", "ycombinator"]
    assert _share_names(html(client, "/notes/some/")) == ["x", "reddit", "telegram"]


# --- The note page --------------------------------------------------------------------------


def test_note_page_elements(client, db):
    """The large card and its navigation, in the theme's classes (docs/theme.md#the-note-page)."""
    site(recommendation_count=2)
    dated(5, tags=["Demo"])
    tree = html(client, "/notes/note-02/")
    article = tree.one("main > article.note-card.note-single")
    assert article.has("header.note-head span.note-avatar")
    assert article.has("div.note-body.md-content")
    assert article.one("footer.note-tags a.note-tag").get("href") == "/tags/demo/"
    assert _share_names(tree) == SHARE_ORDER

    nav = tree.one("nav.paginav")
    prev, nxt = nav.one("a.prev"), nav.one("a.next")
    # « Prev is the newer note, as in the theme's pages built by Hugo (its $pages.Next).
    assert prev.get("href") == "/notes/note-01/"  # newer
    assert nxt.get("href") == "/notes/note-03/"  # older
    assert prev.one("span.title").flat_text == "« Prev" and "Note 01" in prev.flat_text
    assert nxt.one("span.title").flat_text == "Next »" and "Note 03" in nxt.flat_text

    recommendations = tree.one("nav.note-recommendations").select("li a")
    assert len(recommendations) == 2
    assert "/notes/note-02/" not in [a.get("href") for a in recommendations]

    back = tree.one("nav.notes-pagination a.button")
    assert (back.flat_text, back.get("href")) == ("« Back to feed", "/notes/")
    assert "data-copy-code" in tree.one("body").attrs
    assert not tree.has(".breadcrumbs") and not tree.has("details.toc")


def test_note_page_ends_of_the_chain(client, db):
    """The newest note has no Prev, the oldest no Next; no wrap-around."""
    dated(3)
    assert not html(client, "/notes/note-00/").has("nav.paginav a.prev")
    assert html(client, "/notes/note-00/").has("nav.paginav a.next")
    assert not html(client, "/notes/note-02/").has("nav.paginav a.next")
    assert html(client, "/notes/note-02/").has("nav.paginav a.prev")


def test_recommendations_are_stable(client, db):
    """Reloading a note page shows the same recommendations."""
    dated(12)
    first = [
        a.get("href") for a in html(client, "/notes/note-05/").select("nav.note-recommendations a")
    ]
    assert len(first) == 3
    again = [
        a.get("href") for a in html(client, "/notes/note-05/").select("nav.note-recommendations a")
    ]
    assert again == first


def test_copy_code_switch(client, db):
    """body[data-copy-code] follows ShowCodeCopyButtons."""
    make_note("code", "```python\nprint(1)\n```\n")
    assert "data-copy-code" in html(client, "/notes/code/").one("body").attrs
    site(show_code_copy_buttons=False)
    assert "data-copy-code" not in html(client, "/notes/code/").one("body").attrs


def test_cite_this_note(client, db):
    """The "Cite this note" block: formatted citation, BibTeX and working cite.* links."""
    make_note("citable", authors=["Ada Novak"])
    block = html(client, "/notes/citable/").one("article.note-single details.cite-note")
    assert block.one("summary").flat_text == "Cite this note"
    hrefs = [a.get("href") for a in block.select("a")]
    for suffix in ("cite.bib", "cite.ris", "cite.json"):
        assert f"/notes/citable/{suffix}" in hrefs
        assert get(client, f"/notes/citable/{suffix}").content
    assert "Novak" in block.one(".cite-text").flat_text
    assert "@" in block.one("pre.cite-bibtex").flat_text


def test_unknown_note_is_a_styled_404(client, db):
    """An unknown note answers 404 with the site's styled page."""
    tree = html(client, "/notes/no-such-note/", 404)
    assert tree.one("div.not-found").flat_text == "404"
    assert tree.has("header.header") and tree.has("footer.footer")
    assert any("scidraft.css" in link.get("href") for link in tree.select("link[rel=stylesheet]"))
    assert meta(tree, "robots") == ["noindex, nofollow"]
    html(client, "/no-such-page/", 404)


# --- Head meta ------------------------------------------------------------------------------


def test_note_head_meta(client, db):
    """Title `Title | Site`, description, keywords, canonical, OpenGraph, Twitter and JSON-LD."""
    site(title="Lab Notes", base_url="https://lab.example/")
    make_note(
        "meta-note",
        "Body text.",
        title="On Meta",
        description="What the note says.",
        keywords=["alpha", "beta"],
        tags=["Gamma"],
        authors=["Ada Novak"],
    )
    tree = html(client, "/notes/meta-note/")
    assert tree.one("head title").flat_text == "On Meta | Lab Notes"
    assert meta(tree, "description") == ["What the note says."]
    assert meta(tree, "keywords") == ["alpha, beta"]
    url = "https://lab.example/notes/meta-note/"
    assert tree.one("head link[rel=canonical]").get("href") == url
    assert meta(tree, "og:title") == ["On Meta"]
    assert meta(tree, "og:type") == ["article"]
    assert meta(tree, "og:url") == [url]
    assert meta(tree, "og:site_name") == ["Lab Notes"]
    assert meta(tree, "og:description") == ["What the note says."]
    assert meta(tree, "article:tag") == ["Gamma"]
    published = dt.datetime.fromisoformat(meta(tree, "article:published_time")[0])
    assert published == SEP_22
    assert meta(tree, "twitter:card") == ["summary"]
    assert meta(tree, "twitter:title") == ["On Meta"]
    scripts = tree.select("script[type='application/ld+json']")
    assert len(scripts) == 1
    data = json.loads(scripts[0].raw_text)
    assert data["@context"] == "https://schema.org"
    assert data["headline"] == "On Meta" and data["url"] == url
    assert [author["name"] for author in data["author"]] == ["Ada Novak"]
    assert dt.datetime.fromisoformat(data["datePublished"]) == SEP_22


def test_a_huge_description_is_cut_in_the_head(client, db):
    """A 2 MB description is quoted to about META_CHARS characters, whole words, in the meta
    description, OpenGraph and JSON-LD alike, instead of being copied into the head four
    times; what the page head reads of it is bounded too."""
    from notes.excerpts import META_CHARS

    make_note("long-description", description="word $x^2$ and text " * 100_000)
    tree = html(client, "/notes/long-description/")
    (described,) = meta(tree, "description")
    assert described.startswith("word \\(x^2\\) and text word")
    # About META_CHARS of text: a formula counts its TeX, shown with its delimiters.
    assert described.endswith("…") and len(described) <= 2 * META_CHARS
    assert meta(tree, "og:description") == [described]
    data = json.loads(tree.one("script[type='application/ld+json']").raw_text)
    assert data["description"] == described


def test_a_huge_summary_is_cut_in_cite_this_note(client, db):
    """A 2 MB summary: "cite this note" (the page's BibTeX block, cite.bib, cite.ris) gives
    an abstract of at most ABSTRACT_CHARS characters, cut at a word, and the page stays small."""
    from notes.citing import ABSTRACT_CHARS

    make_note("long-summary", summary="summary words " * 150_000)
    page = get(client, "/notes/long-summary/")
    assert len(page.content) < 100_000
    bibtex = get(client, "/notes/long-summary/cite.bib").content.decode()
    (abstract,) = re.findall(r"abstract = \{(.*)\}", bibtex)
    assert abstract.startswith("summary words summary") and abstract.endswith("words…")
    assert len(abstract) <= ABSTRACT_CHARS
    ris = get(client, "/notes/long-summary/cite.ris").content.decode()
    assert len(ris) < ABSTRACT_CHARS + 1_000


def test_keywords_fall_back_to_tags_and_canonical_override(client, db):
    """No keywords: the tags, in the order the note gives them; canonicalURL replaces the
    canonical link."""
    make_note(
        "fallback", tags=["Zeta", "Alpha"], canonical_url="https://elsewhere.example/original/"
    )
    tree = html(client, "/notes/fallback/")
    assert meta(tree, "keywords") == ["Zeta, Alpha"]
    assert tree.one("link[rel=canonical]").get("href") == "https://elsewhere.example/original/"


def test_json_ld_cannot_close_its_script(client, db):
    """A title with </script> stays inside the JSON-LD data block, which still parses."""
    make_note("evil", title="</script><script>alert(1)</script>")
    tree = html(client, "/notes/evil/")
    scripts = tree.select("script")
    assert all(s.get("src") or s.get("type") == "application/ld+json" for s in scripts)
    data = json.loads(tree.one("script[type='application/ld+json']").raw_text)
    assert data["headline"] == "</script><script>alert(1)</script>"


def test_homepage_title_is_the_site_title(client, demo_loaded):
    """The homepage <title> is the site's title alone, with the site description."""
    tree = html(client, "/")
    assert tree.one("head title").flat_text == "Halden Notes"
    assert meta(tree, "description") == [SiteSettings.objects.current().description]
    assert tree.one("link[rel=canonical]").get("href") == f"{DEMO_BASE}/"


def test_google_scholar_tags(client, demo_loaded):
    """Highwire tags on a demo note: one citation_reference per distinct cited entry."""
    slug = "method-citations-two-bibliographies"
    tree = html(client, f"/notes/{slug}/")
    assert meta(tree, "citation_title") == ["A Calibration Study Cited from Two Bibliographies"]
    assert meta(tree, "citation_author") == ["halden-lab"]
    assert meta(tree, "citation_publication_date") == ["2026/11/17"]
    assert meta(tree, "citation_online_date") == ["2026/11/17"]
    assert meta(tree, "citation_journal_title") == ["Halden Notes"]
    assert meta(tree, "citation_fulltext_html_url") == [f"{DEMO_BASE}/notes/{slug}/"]
    source = (Path(settings.SCIDRAFT_DEMO_DIR) / "content" / "notes" / f"{slug}.md").read_text()
    keys = {
        key.strip()
        for group in re.findall(r"\\cite[tp]?\{([^}]*)\}", source)
        for key in group.split(",")
    }
    references = meta(tree, "citation_reference")
    assert len(references) == len(keys) == 30
    assert len(set(references)) == len(references)
    assert any("Equation of State Calculations" in ref for ref in references)


def test_scholar_reference_of_a_huge_title_is_bounded_and_decoded_before_the_page(client, db):
    """A cited entry with a 1.9 MB title full of LaTeX accents: its citation_reference was
    decoded when the file was read, cut to SCHOLAR_VALUE_CHARS a value, so the reader's first
    page does no decoding (it took 13.7 s of CPU) and carries a short tag."""
    from bibliography.exports import SCHOLAR_VALUE_CHARS
    from bibliography.models import BibEntry
    from bibliography.services import bibfile_import

    title = 'Sch\\"onhage und Stra\\ss en multiplizieren ' * 45_500
    assert 1_900_000 < len(title) < 2_000_000
    bibfile_import(
        name="bib/long.bib",
        raw=f'@article{{long, title = {{{title}}}, author = {{Sch\\"onhage, A.}}, year = 1971}}',
    )
    stored = BibEntry.objects.get(key="long").scholar
    assert stored.startswith("citation_title=Schönhage und Straßen multiplizieren")
    make_note("huge-title", body='See \\cite{long}.\n\n{{< references bib="bib/long.bib" >}}\n')
    start = time.process_time()
    tree = html(client, "/notes/huge-title/")
    cpu = time.process_time() - start
    (reference,) = meta(tree, "citation_reference")
    assert reference == stored
    title_part = reference.split("; ")[0]
    assert len(title_part) <= len("citation_title=") + SCHOLAR_VALUE_CHARS
    assert title_part.endswith("…")
    assert "citation_author=Schönhage, A." in reference
    assert cpu < 2.0, f"{cpu:.2f} s of CPU for the page"


# --- Tags -------------------------------------------------------------------------------------


def test_tag_index_with_counts(client, db):
    """/tags/ lists tags with their published notes counted; unused tags are left out."""
    make_note("a", tags=["Alpha", "Beta"])
    make_note("b", tags=["Alpha"])
    make_note("c", tags=["Beta", "Ghost"], draft=True)
    tree = html(client, "/tags/")
    assert tree.one("head title").flat_text == "Tags | SciDraft"
    entries = {
        a.get("href"): (a.flat_text.rsplit(" ", 1)[0], a.select("sup")[-1].flat_text)
        for a in tree.select("ul.terms-tags li a")
    }
    assert entries == {"/tags/alpha/": ("Alpha", "2"), "/tags/beta/": ("Beta", "1")}


def test_tag_index_in_alphabetical_order_regardless_of_case(client, db):
    """/tags/ lists "Agentic Skills" before "AI and Jobs" and "Learning" before "LLM", as the
    theme's tag page built by Hugo (its terms in alphabetical order, case folded)."""
    make_note("a", tags=["LLM", "AI and Jobs", "Learning", "Agentic Skills", "beta"])
    names = [
        a.flat_text.rsplit(" ", 1)[0] for a in html(client, "/tags/").select("ul.terms-tags a")
    ]
    assert names == sorted(names, key=str.lower)
    assert names != sorted(names)


def test_tag_page_entries_and_pagination(client, db):
    """/tags/<slug>/: note-entry cards, newest first, paginated by pager_size (not the feed's)."""
    site(pager_size=2, notes_per_page=50)
    dated(5, tags=["Paged"], summary="A two-line summary.")
    make_note("other", tags=["Elsewhere"])
    tree = html(client, "/tags/paged/")
    assert "Paged" in tree.one("header.page-header h1").flat_text
    assert tree.has("header.page-header .breadcrumbs")
    entries = tree.select("article.note-entry.tag-entry")
    assert len(entries) == 2
    entry = entries[0]
    assert entry.one("header.entry-header h2").flat_text == "Note 00"
    assert entry.one("div.entry-content").flat_text == "A two-line summary."
    assert entry.has("footer.entry-footer")
    assert entry.one("a.entry-link").get("href") == "/notes/note-00/"
    bar = tree.one("nav.numbered-pagination")
    assert [a.flat_text for a in bar.select("a.page-num")] == ["1", "2", "3"]
    assert bar.one("a.page-step.next").get("href") == "/tags/paged/page/2/"
    last = html(client, "/tags/paged/page/3/")
    assert [a.get("href") for a in last.select("a.entry-link")] == ["/notes/note-04/"]
    get(client, "/tags/paged/page/4/", 404)
    get(client, "/tags/unknown/", 404)


def test_tag_entry_summary_is_cut_with_an_ellipsis(client, db):
    """Without a summary the entry shows the start of the text and `...` when cut."""
    make_note("long", " ".join(f"word{i}" for i in range(200)), tags=["Long"])
    content = html(client, "/tags/long/").one("article.tag-entry div.entry-content").flat_text
    assert content.startswith("word0 word1") and content.endswith("...")


def test_tag_entry_shows_typeset_math_and_labels(client, db):
    """A tag entry quotes the note's opening with its formulas typeset (the page links KaTeX's
    stylesheet) and its references as labels; no diagram, code or algorithm text."""
    from tests.notes.test_excerpts import LEFT_OUT, excerpt_note

    excerpt_note()
    page = get(client, "/tags/excerpts/").content.decode()
    entry = page.split('<div class="entry-content"><p>')[1].split("</p></div>")[0]
    assert entry.startswith('By Lemma 1 and [1], the sum <span class="katex">')
    assert "katex.min.css" in page
    assert not any(text in entry for text in LEFT_OUT)
    assert "<a " not in entry


def test_meta_descriptions_quote_the_rendered_opening(client, db):
    """Without a description or summary, the meta, OpenGraph, Twitter and JSON-LD descriptions
    are the note's first 30 words as plain text: labels kept, TeX between delimiters."""
    from tests.notes.test_excerpts import LEFT_OUT, excerpt_note

    excerpt_note()
    tree = html(client, "/notes/excerpt-note/")
    (description,) = meta(tree, "description")
    assert description.startswith("By Lemma 1 and [1], the sum \\(\\sum_i x_i\\) is unchanged.")
    assert meta(tree, "og:description") == [description]
    assert meta(tree, "twitter:description") == [description]
    data = json.loads(tree.one("script[type='application/ld+json']").raw_text)
    assert data["description"] == description
    assert not any(text in description for text in LEFT_OUT)


# --- Standalone pages -------------------------------------------------------------------------


PAGE_BODY = "Intro.\n\n## First section\n\nText.\n\n## Second section\n\nMore text.\n"


def test_a_pages_reading_time_is_hugos(client, db):
    """300 words read in 2 min: Hugo rounds reading time up, at 213 words a minute."""
    site(author="halden-lab")
    imported_page("long", "word " * 300, title="Long", date=SEP_22)
    assert "2 min" in html(client, "/long/").one("div.post-meta").flat_text


def test_standalone_page_with_defaults(client, db):
    """A page: breadcrumbs, h1.post-title, description, meta line (date · N min · author), TOC."""
    site(author="halden-lab")
    imported_page(
        "guide", PAGE_BODY, title="Guide", description="How to read.",
        date=SEP_22, date_offset_minutes=540,
    )  # fmt: skip
    tree = html(client, "/guide/")
    article = tree.one("main > article.post-single")
    header = article.one("header.post-header")
    assert header.one(".breadcrumbs a").get("href") == "/"
    assert header.one("h1.post-title").flat_text == "Guide"
    assert header.one("div.post-description").flat_text == "How to read."
    post_meta = header.one("div.post-meta").flat_text
    assert "1 min" in post_meta and "halden-lab" in post_meta
    toc = article.one("details.toc")
    assert "First section" in toc.flat_text and "Second section" in toc.flat_text
    content = article.one("div.post-content.md-content")
    assert content.select("h2[id]")
    assert tree.one("head title").flat_text == "Guide | SciDraft"


def test_standalone_page_date_in_its_offset(client, db):
    """The page's meta line starts with the :date_long date in the page's own offset."""
    imported_page("dated", PAGE_BODY, title="Dated", date=SEP_22, date_offset_minutes=540)
    assert html(client, "/dated/").one("div.post-meta").flat_text.startswith("September 22, 2026")


def test_standalone_page_toggles(client, db):
    """hideMeta, hideDescription, ShowToc=false, ShowBreadCrumbs=false switch their parts off."""
    imported_page(
        "quiet", PAGE_BODY, title="Quiet", description="Hidden description.", date=SEP_22,
        flags={"hide_meta": True, "hide_description": True, "show_toc": False,
               "show_breadcrumbs": False},
    )  # fmt: skip
    header = html(client, "/quiet/").one("header.post-header")
    assert not header.has("div.post-meta")
    assert not header.has("div.post-description")
    assert not header.has(".breadcrumbs")
    assert not html(client, "/quiet/").has("details.toc")
    assert meta(html(client, "/quiet/"), "description") == ["Hidden description."]


def test_standalone_page_word_count_and_reading_time(client, db):
    """ShowWordCount adds `N words`; ShowReadingTime=false removes the minutes; hideAuthor the
    author."""
    imported_page(
        "counted", PAGE_BODY, title="Counted", date=SEP_22,
        flags={"show_word_count": True, "show_reading_time": False, "hide_author": True},
    )  # fmt: skip
    post_meta = html(client, "/counted/").one("div.post-meta").flat_text
    words = Page.objects.get(slug="counted").word_count
    assert f"{words} words" in post_meta
    assert "min" not in post_meta
    assert SiteSettings.objects.current().author not in post_meta


def test_post_meta_has_no_dangling_separator(client, db):
    """The meta line joins its parts with ` · `, never starting or ending with one."""
    imported_page("undated", PAGE_BODY, title="Undated", flags={"show_reading_time": False})
    post_meta = html(client, "/undated/").one("div.post-meta").flat_text
    assert post_meta
    assert not post_meta.startswith("·") and not post_meta.endswith("·")


def test_demo_about_page(client, demo_loaded):
    """/about/ follows its front matter: no meta line, no TOC, breadcrumbs from the site."""
    tree = html(client, "/about/")
    header = tree.one("article.post-single header.post-header")
    assert header.one("h1.post-title").flat_text == "About"
    assert not header.has("div.post-meta")
    assert not tree.has("details.toc")
    assert header.has(".breadcrumbs")
    assert tree.one("head title").flat_text == "About | Halden Notes"


def test_draft_page_is_a_404(client, db):
    """A draft standalone page is not served."""
    imported_page("secret", "Text.", title="Secret", draft=True)
    get(client, "/secret/", 404)


# --- Entry-set pages --------------------------------------------------------------------------


def test_results_a_to_z(client, demo_loaded):
    """/results-a-to-z/: the count, a letter bar with active and inactive letters, aliases."""
    members = [note for note in Note.objects.published() if note.params.get("resultTitle")]
    tree = html(client, "/results-a-to-z/")
    content = tree.one("div.post-content")
    assert content.one("div.entry-count strong").flat_text == f"{len(members)} Results Covered"
    lines = content.select("div.entry-alphabet > div.entry-alphabet-line")
    assert len(lines) == 2
    active = [a.flat_text for a in content.select("a.entry-alphabet-letter.active")]
    inactive = [s.flat_text for s in content.select("span.entry-alphabet-letter.inactive")]
    assert sorted(active + inactive) == [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    initials = {note.params["resultTitle"][0].upper() for note in members}
    assert set(active) == initials
    for letter in active:
        assert content.one(f"a.entry-alphabet-letter.active[href='#{letter}']")
        assert content.one(f"h2.entry-letter#{letter}")
    items = content.select("div.entry-map div.entry-item")
    assert len(items) == len(members)
    assert all(item.one("a.entry-title").get("href").startswith("/notes/") for item in items)
    aliases = content.select("p.entry-alt")
    assert aliases and all(alt.flat_text.startswith("Also known as:") for alt in aliases)
    titles = [a.flat_text.lower() for a in content.select("a.entry-title")]
    assert titles == sorted(titles)


def test_methods_categories(client, demo_loaded):
    """/methods-categories/: "N Methods Covered in M Categories" and one heading per category."""
    members = [note for note in Note.objects.published() if note.params.get("methodTitle")]
    categories = {note.params.get("methodCategory", "").strip() for note in members} - {""}
    content = html(client, "/methods-categories/").one("div.post-content")
    assert content.one("div.entry-count strong").flat_text == (
        f"{len(members)} Methods Covered in {len(categories)} Categories"
    )
    headings = [h.flat_text for h in content.select("h2.entry-letter")]
    assert headings == sorted(categories, key=str.lower)


def test_uncategorised_entries(client, db):
    """Entries with a blank category come last, under "Uncategorised"."""
    make_note("a", params={"entryTitle": "Alpha", "entryCategory": "Tables"})
    make_note("b", params={"entryTitle": "Beta"})
    make_note("c", params={"entryTitle": "Gamma", "entryCategory": "  "})
    imported_page("methods-categories", "{{< entry-categories >}}", title="Methods")
    content = html(client, "/methods-categories/").one("div.post-content")
    assert content.one("div.entry-count strong").flat_text == "3 Entries Covered in 1 Categories"
    assert [h.flat_text for h in content.select("h2.entry-letter")] == ["Tables", "Uncategorised"]
    assert content.one("h2.entry-letter#uncategorised")


def test_entry_pages_follow_later_notes(client, demo_loaded):
    """A note published after the index page was saved (blank category) shows on the page."""
    before = html(client, "/methods-categories/").one("div.entry-count strong").flat_text
    count = int(before.split()[0])
    make_note("method-new", params={"methodTitle": "A New Method"})
    content = html(client, "/methods-categories/").one("div.post-content")
    assert content.one("div.entry-count strong").flat_text.startswith(f"{count + 1} Methods")
    assert "Uncategorised" in [h.flat_text for h in content.select("h2.entry-letter")]
    assert "/notes/method-new/" in [a.get("href") for a in content.select("a.entry-title")]


# --- Menus ----------------------------------------------------------------------------------


def _menu():
    MenuItem.objects.create(identifier="notes", name="Notes", url="/notes/", weight=10)
    reference = MenuItem.objects.create(identifier="reference", name="Reference", weight=20)
    MenuItem.objects.create(
        identifier="az", name="A–Z", url="/az/", weight=21, parent=reference, note="By name"
    )
    MenuItem.objects.create(identifier="cats", name="Kinds", url="/cats/", weight=22,
                            parent=reference)  # fmt: skip
    MenuItem.objects.create(identifier="search", name="Search", url="/search/", weight=40)
    MenuItem.objects.create(identifier="ext", name="Code", url="https://example.org/", weight=50)


def test_menu_structure(client, db):
    """Items in weight order; a parent without URL is span.menu-label with a dropdown."""
    _menu()
    make_note("n")
    menu = html(client, "/").one("header.header nav.header-nav ul#menu.menu")
    top = menu.select("ul#menu > li")
    assert len(top) == 4
    parent = top[1]
    assert "has-submenu" in parent.classes
    label = parent.one("span.menu-label")
    assert label.get("tabindex") == "0" and label.get("role") == "button"
    assert label.get("aria-haspopup") == "true"
    assert label.has("svg.menu-caret")
    children = parent.select("ul.submenu > li > a")
    assert [a.get("href") for a in children] == ["/az/", "/cats/"]
    assert children[0].one("span.submenu-label span.submenu-note").flat_text == "By name"
    assert top[2].one("a").get("accesskey") == "/"
    assert top[3].has("a svg.external-link")


def test_menu_active_items(client, db):
    """The current page's item is active; the homepage and the feed's pages count as /notes/, a
    note's page does not (as in the theme's pages built by Hugo); a child marks its parent."""
    _menu()
    make_note("n")
    imported_page("az", "A to Z.", title="A–Z")
    home = html(client, "/")
    assert home.one("ul#menu a[href='/notes/'] span").get("class") == "active"
    note = html(client, "/notes/n/")
    assert note.one("ul#menu a[href='/notes/'] span").get("class") is None
    page = html(client, "/az/")
    assert page.one("ul#menu a[href='/notes/'] span").get("class") is None
    assert "active" in page.one("span.menu-label").classes
    assert "submenu-active" in page.one("ul.submenu a[href='/az/']").classes
    assert "submenu-active" not in page.one("ul.submenu a[href='/cats/']").classes


def test_header_and_footer(client, db):
    """The header has the site title link and the theme toggle; the footer its parts."""
    site(title="Lab", footer_text="Cite with care")
    tree = html(client, "/")
    logo = tree.one("header.header div.logo")
    assert logo.one("a").flat_text == "Lab" and logo.one("a").get("accesskey") == "h"
    toggle = logo.one("div.logo-switches button#theme-toggle.theme-toggle")
    assert toggle.get("aria-label") == "Toggle theme"
    assert toggle.has("svg.moon") and toggle.has("svg.sun")
    footer = tree.one("footer.footer")
    assert "Lab" in footer.flat_text and "Cite with care" in footer.flat_text
    assert tree.one("a#top-link.top-link").get("accesskey") == "g"
    assert tree.one("html").get("data-theme") == "auto"


# --- JavaScript budget and security headers -------------------------------------------------


def _scripts(tree: Element) -> list[str]:
    return [s.get("src", "") for s in tree.select("script") if s.get("src")]


def _has_mermaid(tree: Element) -> bool:
    return any("mermaid" in src for src in _scripts(tree))


def _stylesheets(tree: Element) -> list[str]:
    return [link.get("href") for link in tree.select("link[rel=stylesheet]")]


def test_mermaid_script_only_with_a_diagram(client, db):
    """Mermaid's script loads on a feed page or note page only when a diagram is on it."""
    site(notes_per_page=1)
    make_note("diagram", MERMAID, date=SEP_22)
    make_note("plain", "No diagram.", date=SEP_22 - dt.timedelta(days=1))
    assert _has_mermaid(html(client, "/"))
    assert not _has_mermaid(html(client, "/page/2/"))
    assert _has_mermaid(html(client, "/notes/diagram/"))
    assert not _has_mermaid(html(client, "/notes/plain/"))
    assert html(client, "/notes/diagram/").has("pre.mermaid")


def test_a_feed_loads_only_what_its_cards_show(client, db):
    """A card shows its preview region only: a diagram (or code) past the region loads no
    Mermaid (nor Pygments' CSS) on the feed, and does on the note's page; a diagram inside
    the region does load it on the feed."""
    site(notes_per_page=1)
    make_note("behind", PREVIEW + "\n\n" + MERMAID + "\n```python\nx = 1\n```\n", date=SEP_22)
    feed = html(client, "/")
    assert not _has_mermaid(feed)
    assert not any("pygments" in href for href in _stylesheets(feed))
    page = html(client, "/notes/behind/")
    assert _has_mermaid(page)
    assert any("pygments" in href for href in _stylesheets(page))
    on_card = "{{< preview >}}\n" + MERMAID + "{{< /preview >}}\n\nThe rest."
    make_note("shown", on_card, date=SEP_22 + dt.timedelta(days=1))
    assert _has_mermaid(html(client, "/"))


def test_katex_css_only_with_math_and_never_katex_js(client, db):
    """Math arrives typeset: KaTeX's CSS only where math is, its JavaScript nowhere."""
    site(notes_per_page=1)
    make_note("maths", MATH, date=SEP_22)
    make_note("plain", "No math.", date=SEP_22 - dt.timedelta(days=1))
    _search_page()
    with_math = html(client, "/notes/maths/")
    assert any("katex" in href for href in _stylesheets(with_math))
    assert with_math.has("span.katex")
    assert any("katex" in href for href in _stylesheets(html(client, "/")))
    assert not any("katex" in href for href in _stylesheets(html(client, "/page/2/")))
    assert not any("katex" in href for href in _stylesheets(html(client, "/notes/plain/")))
    for url in ("/", "/page/2/", "/notes/maths/", "/notes/plain/", "/search/?q=math", "/tags/"):
        body = get(client, url).content
        assert b"katex.min.js" not in body and b"katex.js" not in body, url


def test_no_katex_js_on_the_demo(client, demo_loaded):
    """No demo page references katex.min.js."""
    for url in ("/", "/page/2/", "/notes/result-proof-gershgorin-discs/", "/results-a-to-z/",
                "/about/", "/search/?q=matrix", "/archives/"):  # fmt: skip
        assert b"katex.min.js" not in get(client, url).content, url


def test_no_inline_scripts(client, demo_loaded):
    """Every <script> has a src, except the JSON-LD data block."""
    urls = ["/", "/page/3/", "/notes/method-citations-two-bibliographies/",
            "/notes/method-mermaid-job-lifecycle-state/", "/tags/", "/tags/citations/",
            "/about/", "/results-a-to-z/", "/search/?q=matrix", "/archives/",
            "/authors/ada-novak/", "/notes/nope/"]  # fmt: skip
    for url in urls:
        response = client.get(url)
        for script in parse(response.content.decode()).select("script"):
            if script.get("src"):
                assert not script.raw_text.strip(), url
            else:
                assert script.get("type") == "application/ld+json", url


@pytest.mark.parametrize("url", ["/", "/notes/n/", "/tags/", "/index.xml", "/no-such-page/"])
def test_security_headers(client, db, url):
    """CSP without unsafe-inline scripts, nosniff, a referrer policy and frame denial."""
    make_note("n")
    response = client.get(url)
    policy = response["Content-Security-Policy"]
    directives = {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}
    script_src = directives.get("script-src", directives.get("default-src"))
    assert script_src and "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"]
    assert response["X-Frame-Options"] in ("DENY", "SAMEORIGIN")


# --- Constant queries -------------------------------------------------------------------------

AUTHOR_HANDLES = ["ada", "ben"]
# Measured, uncached; the same at 10 and at 500 notes. Each includes the two queries that
# read the content generation on a cold cache (its value and the next scheduled note's date).
QUERY_BUDGET = {
    "feed first page": 13,
    "feed last page": 13,
    "note page": 15,
    "tag page": 9,
    "author page": 9,
    "tag index": 6,
    # Which pages are search pages: once per generation (notes.views.page_query); on PostgreSQL
    # four more bound the highlights' time (a savepoint, the timeout set and restored).
    "search": 15,
    "rss": 5,
    "sitemap": 7,  # the sitemap index: a chunk aggregate each for notes, tags and pages
    "index.json": 7,  # notes and pages counted and their text summed in SQL first
}


def _urls(total: int) -> dict[str, str]:
    per_page = SiteSettings.objects.current().notes_per_page
    return {
        "feed first page": "/",
        "feed last page": f"/page/{-(-total // per_page)}/",
        "note page": "/notes/bulk-0003/",
        "tag page": "/tags/common/",
        "author page": "/authors/ada/",
        "tag index": "/tags/",
        "search": "/search/?q=bulk",
        "rss": "/index.xml",
        "sitemap": "/sitemap.xml",
        "index.json": "/index.json",
    }


def _corpus_start():
    """A real rendered note to copy, two promotions, authors, tags and the search page."""
    site(promotions_per_page=1)
    template = make_note(
        "template",
        "Bulk note body with math \\(x^2\\).\n\n```python\nprint(1)\n```\n",
        title="Bulk template",
        tags=["Common", "Extra"],
        authors=AUTHOR_HANDLES,
        summary="A bulk note.",
        show_title=True,
    )
    for index in range(2):
        make_note(f"promo-{index}", "Promoted.", title="", promotion=True)
    _search_page()
    return template


def _bulk(template: Note, start: int, count: int) -> None:
    """`count` published copies of the template (rendered fields included), with tags and
    authors written through the through tables in bulk."""
    rendered = {name: getattr(template, name) for name in RENDERED_FIELDS}
    Note.objects.bulk_create(
        Note(
            slug=f"bulk-{index:04d}",
            title=f"Bulk note {index}",
            body=template.body,
            has_body=True,  # bulk_create skips save(), which keeps it
            status=Status.PUBLISHED,
            date=SEP_22 - dt.timedelta(hours=index + 1),
            date_offset_minutes=540,
            show_title=True,
            summary=template.summary,
            **rendered,
        )
        for index in range(start, start + count)
    )
    ids = list(
        Note.objects.filter(
            slug__in=[f"bulk-{index:04d}" for index in range(start, start + count)]
        ).values_list("pk", flat=True)
    )
    authors = list(Author.objects.filter(handle__in=AUTHOR_HANDLES).order_by("handle"))
    NoteAuthor.objects.bulk_create(
        NoteAuthor(note_id=pk, author=author, position=position)
        for pk in ids
        for position, author in enumerate(authors)
    )
    tags = list(Tag.objects.filter(name__in=["Common", "Extra"]))
    Note.tags.through.objects.bulk_create(
        Note.tags.through(note_id=pk, tag_id=tag.pk) for pk in ids for tag in tags
    )


@pytest.mark.parametrize("name", list(QUERY_BUDGET))
def test_constant_queries(client, db, django_assert_max_num_queries, settings, name):
    """The page costs the same number of queries with 10 notes as with 500."""
    settings.SCIDRAFT_INDEX_JSON_MAX_NOTES = 1000  # index.json served at 500 notes too
    settings.SCIDRAFT_INDEX_JSON_MAX_BYTES = 100_000_000
    template = _corpus_start()
    _bulk(template, 0, 10)
    budget = QUERY_BUDGET[name]
    url = _urls(Note.objects.published().regular().count())[name]
    cache.clear()  # measure the render, not the page cache
    with django_assert_max_num_queries(budget):
        response = client.get(url)
    assert response.status_code == 200, url

    _bulk(template, 10, 490)
    cache.clear()  # bulk_create sends no signals; the rows are new all the same
    total = Note.objects.published().regular().count()
    assert total >= 500
    url = _urls(total)[name]
    with django_assert_max_num_queries(budget):
        response = client.get(url)
    assert response.status_code == 200, url
    if name == "feed first page":
        assert len(parse(response.content.decode()).select("article.note-card")) == 8 + 1


@pytest.mark.parametrize(
    ("url", "notes"),
    [
        ("/tags/common/page/{}/", lambda: Note.objects.published().filter(tags__slug="common")),
        ("/authors/ada/page/{}/", lambda: Note.objects.published().filter(authors__handle="ada")),
    ],
)
def test_list_pages_read_one_page_of_rows(client, db, url, notes):
    """A tag's or an author's page reads its entries' rows for that page only: the ordered
    read of the notes has a LIMIT, and the entries' columns (their card HTML) are read by id;
    the entries are those of the feed's order, pinned notes first."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    template = _corpus_start()
    _bulk(template, 0, 60)
    Note.objects.filter(slug__in=["bulk-0040", "bulk-0007"]).update(weight=2)
    size = SiteSettings.objects.current().pager_size
    expected = list(notes().in_feed_order().values_list("slug", flat=True))
    for page in (1, 2, -(-len(expected) // size)):
        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            tree = html(client, url.format(page))
        statements = [query["sql"] for query in captured.captured_queries]
        ordered = [sql for sql in statements if re.search(r'ORDER BY .*"date" DESC', sql)]
        assert ordered and all(re.search(r"\bLIMIT \d+", sql) for sql in ordered), ordered
        entries = [sql for sql in statements if "rendered_card_html" in sql]
        assert len(entries) == 1 and re.search(r'"id" IN \(', entries[0]), entries
        shown = [a.get("href") for a in tree.select(".tag-entry a.entry-link")]
        first = (page - 1) * size
        assert shown == [f"/notes/{slug}/" for slug in expected[first : first + size]]


# --- Tags in the note's order -----------------------------------------------------------------


def test_tags_show_in_the_order_the_front_matter_gives_them(client, db):
    """The theme ranges over .Params.tags: "#Demo #Citations #Alpha", not by name, on the
    card and on the page."""
    make_note("ordered", "Text about ordering.", tags=["Demo", "Citations", "Alpha"])
    expected = ["#Demo", "#Citations", "#Alpha"]
    card = html(client, "/").one("article.note-card")
    assert [a.flat_text for a in card.one("footer.note-tags").select("a.note-tag")] == expected
    page = html(client, "/notes/ordered/").one("main > article.note-card.note-single")
    assert [a.flat_text for a in page.one("footer.note-tags").select("a.note-tag")] == expected
