"""The site's pages other than the feed and a note's page, with the test client: an author's
page, the tag index and a tag's pages, standalone pages and their meta line, the entry-set pages
(A to Z, categories), and the header, menus and footer every page shares
(docs/theme.md#tag-and-list-pages, #standalone-pages, #entry-maps, #header-menus-and-palette)."""

from __future__ import annotations

import datetime as dt

import pytest

from notes.models import Note, Page
from scidraft.site.models import MenuItem, SiteSettings
from tests.factories import imported_page
from tests.notes.public_pages import SEP_22, dated, get, html, make_note, meta, site

pytestmark = pytest.mark.django_db


# --- Authors -----------------------------------------------------------------------------------


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


# --- Tags --------------------------------------------------------------------------------------


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


# --- Standalone pages --------------------------------------------------------------------------


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


# --- Entry-set pages ---------------------------------------------------------------------------


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


# --- Menus -------------------------------------------------------------------------------------


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
