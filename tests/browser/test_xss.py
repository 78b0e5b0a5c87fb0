"""Hostile content in a real browser: the rendering engine's XSS corpus, published
through the services wherever a user's string reaches a page, never runs in Chromium.

Every payload of tests/markup/xss.py is used as written (calling alert()) and
"armed" (its alert() replaced by a request to a loopback beacon), in:
- notes: body, title, summary, description, institute, keywords, tag names and author display
  names (with the author's institute and bio; handles stay valid slugs). Payloads are packed a
  few to a note, so every one reaches a note page, the feed, the archives and the tag list;
- a bibliography file whose entries carry them in title, author, journal, url and doi, cited
  by a note (reference lists, Scholar meta tags, exports);
- shortcode arguments: references titles, promotion and gallery arguments, glossary terms;
- a standalone page; menu labels, hints and URLs; the site's title, description, copyright,
  footer, institute and default author; search queries (reflected on the results page);
- the editor: dashboard, editor page, live preview and revision diff of a logged-in author;
- the RSS feeds (full text), sitemap, index.json and the exports, opened as documents.

Pages load in headless Chromium with the site's Content-Security-Policy bypassed, so what is
proved is that the markup itself is inert (the CSP is a second wall, tested in test_site.py).
A page fails when:
- a script ran: alert/confirm/prompt/print or a console method was called (an init script
  records it in every frame), a dialog or a popup opened, a page error was thrown, or anything
  asked for the beacon (its server counts hits; the browser's requests are watched too);
- its DOM holds what could run later, on a click, hover or focus: an event-handler attribute,
  a script other than the site's static files (the JSON-LD data block aside, which must parse),
  a javascript:/vbscript:/data: URL, an iframe/object/embed/base, a meta refresh, an SVG
  animation, or script-capable CSS outside KaTeX's output.

The site is built once for the module (publishing ~270 hostile strings renders for a while), on
a live server of its own, and the database is flushed afterwards. The strings, the sites and the
watch are made by xss_corpus.py, xss_site.py and xss_watch.py beside this file.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import zip_longest
from urllib.parse import quote

import pytest
from django.core.cache import cache
from django.core.management import call_command

from hugosite.loading import REPLACE_ALL, site_configure
from hugosite.site_config import SiteConfig
from tests.browser.xss_corpus import (
    armed,
    bibtex_value,
    corpus,
    hostile_strings,
    hostile_urls,
    originals,
    packed,
)
from tests.browser.xss_site import (
    BIB_NAME,
    _build,
    _build_plain,
    free_port,
    hostile_menu,
    hostile_settings,
)
from tests.browser.xss_watch import Beacon, Watch, _documents_and_scripts_only

pytestmark = pytest.mark.browser
SAMPLE_STRIDE = 16  # every 16th tag and author also gets its own page loaded

# --- The fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def beacon():
    server = Beacon(free_port())
    yield server
    server.close()


@pytest.fixture(scope="module")
def hostile_site(browser, beacon, django_db_setup, django_db_blocker):
    """The hostile site, built once for the module's tests (marked django_db: each runs in a
    transaction that rolls back, and reads only) on a live server of its own.

    pytest-django's `live_server` would make every test transactional, flushing the site after
    the first one. Afterwards the database is put back as it was: flushed, then reloaded.
    """
    from django.db import connection
    from pytest_django.live_server_helper import LiveServer

    with django_db_blocker.unblock():
        before = connection.creation.serialize_db_to_string()
        server = LiveServer(f"localhost:{free_port({beacon.server.server_port})}")
        server._live_server_modified_settings.enable()
        try:
            with ThreadPoolExecutor(max_workers=1) as worker:
                site = worker.submit(_build, beacon).result()
            site.url = server.url
            yield site
        finally:
            server._live_server_modified_settings.disable()
            server.stop()
            call_command("flush", interactive=False, verbosity=0, inhibit_post_migrate=True)
            connection.creation.deserialize_db_from_string(before)
            cache.clear()


@pytest.fixture
def open_watched(browser, beacon):
    """`open_watched(base_url, cookie=None)` → (page, watch), in a fresh browser context."""
    contexts = []
    beacon.hits.clear()

    def open_page(base_url: str, *, cookie: dict | None = None):
        context = browser.new_context(base_url=base_url, bypass_csp=True)
        context.set_default_timeout(20_000)
        contexts.append(context)
        watch = Watch(context, beacon)
        context.route("**/*", _documents_and_scripts_only)
        if cookie:
            context.add_cookies([{**cookie, "url": base_url}])
        return context.new_page(), watch

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def watched(open_watched, hostile_site):
    """`watched(logged_in=False)` → (page, watch) on the hostile site, as a reader or as the
    Author who wrote its special notes."""

    def open_page(*, logged_in: bool = False):
        cookie = hostile_site.writer_session if logged_in else None
        return open_watched(hostile_site.url, cookie=cookie)

    return open_page


@pytest.fixture
def plain_site(browser, transactional_db, live_server) -> str:
    """A small harmless site whose settings a test may change (committed at once: the live
    server sees them); its base URL."""
    with ThreadPoolExecutor(max_workers=1) as worker:
        worker.submit(_build_plain).result()
    return live_server.url


def text_of(page, selector: str) -> str:
    return " ".join(page.locator(selector).first.inner_text().split())


def squashed(text: str) -> str:
    return " ".join(text.split())


# --- Unit checks of the helpers -------------------------------------------------------------


def test_corpus_is_the_engines_145_payloads():
    """The browser test takes every payload of the engine's corpus, none twice."""
    payloads = [payload for _, payload in corpus()]
    assert len(payloads) == len(set(payloads)) == 145


def test_armed_payloads_call_the_beacon():
    """Arming turns alert(1) into a request to the beacon, in most of the corpus."""
    url = "http://127.0.0.1:8340/beacon"
    changed = [ident for ident, payload in corpus() if armed(ident, payload, url) != payload]
    assert len(changed) > 100
    assert armed("s", "<script>alert(1)</script>", url) == f"<script>fetch('{url}?p=s')</script>"


def test_bibtex_values_keep_braces_balanced():
    """A payload with stray braces becomes a braced BibTeX value whose braces all match."""
    value = bibtex_value("}a{b}c{ <img src=x onerror=alert(1)>")
    depth = 0
    for char in value:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0 and "<img src=x onerror=alert(1)>" in value


def test_hostile_urls_include_decoded_and_armed_forms():
    """The URL channel gets the corpus's javascript:/data: URLs, decoded and armed."""
    urls = hostile_urls("http://127.0.0.1:8340/beacon")
    assert "javascript:alert(1)" in urls
    assert "jav\tascript:alert(1)" in urls  # from jav&#x09;ascript:
    assert "data:text/html,<script>alert(1)</script>" in urls
    assert "javascript:fetch('http://127.0.0.1:8340/beacon?p=a-js')" in urls


def test_packed_groups_fit_and_keep_order():
    """Packing keeps every text, in order, each group within the limit once joined."""
    texts = ["a" * 40, "b" * 70, "c" * 20, "d" * 150]
    groups = packed(texts, 100)
    assert groups == [["a" * 40], ["b" * 70, "c" * 20], ["d" * 100]]


def test_the_watch_sees_a_payload_run(open_watched, beacon):
    """The watch is not blind: a handler that calls alert, one that calls the beacon and a
    javascript: link are each reported."""
    page, watch = open_watched("http://localhost")
    watch.where = "set_content"
    page.set_content(
        "<img src=x onerror=alert(1)>"
        f"<img src=y onerror=\"fetch('{beacon.url}?p=self-test')\">"
        "<a href='jav&#x09;ascript:void(0)'>x</a>"
    )
    page.wait_for_timeout(500)
    watch.inspect(page)
    assert any("alert(1)" in line for line in watch.ran), watch.ran
    assert any("p=self-test" in line for line in watch.ran), watch.ran
    assert any(line.endswith("onerror=alert(1)") for line in watch.latent), watch.latent
    assert any("ascript:void(0)" in line for line in watch.latent), watch.latent
    with pytest.raises(AssertionError, match="beacon hits"):
        watch.assert_inert(page)
    beacon.hits.clear()


# --- The pages ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_notes_and_lists_run_no_payload(hostile_site, watched):
    """Every packed note's page (body, title, summary, tags, authors, meta, JSON-LD), the feed,
    the archives, the tag list, the standalone page and a sample of tag and author pages."""
    page, watch = watched()
    site = hostile_site
    watch.visit(page, "/")
    assert page.locator("article").count() >= len(site.note_slugs)
    for path in ("/archives/", "/tags/", "/about/"):
        watch.visit(page, path)
    for slug, group in zip(site.note_slugs, site.groups, strict=True):
        watch.visit(page, f"/notes/{slug}/")
        assert text_of(page, "h1") == squashed(" ".join(group)), slug  # shown as text
    for slug in site.tag_slugs[::SAMPLE_STRIDE]:
        watch.visit(page, f"/tags/{slug}/")
    for handle in site.author_handles[::SAMPLE_STRIDE]:
        watch.visit(page, f"/authors/{handle}/")
    watch.assert_inert(page)


@pytest.mark.django_db
def test_feeds_and_indexes_run_no_payload(hostile_site, watched):
    """RSS (site and tag, full text), the sitemap, index.json and robots.txt, opened in the
    browser: nothing runs, nothing could."""
    page, watch = watched()
    paths = ["/index.xml", "/sitemap.xml", "/index.json", "/robots.txt"]
    paths += [f"/tags/{slug}/index.xml" for slug in hostile_site.tag_slugs[::SAMPLE_STRIDE]]
    for path in paths:
        watch.visit_document(page, path)
    assert "onerror=" in page.request.get("/index.xml").text()  # the payloads are in the feed
    watch.assert_inert(page)


@pytest.mark.django_db
def test_bibliography_fields_run_no_payload(hostile_site, watched):
    """Entries with payloads in title, author, journal, url and doi, in reference lists titled
    with payloads and in the Scholar meta tags: nothing runs, no URL is javascript:."""
    page, watch = watched()
    watch.visit(page, "/notes/xss-citations/", settle_ms=300)
    lists, entries = len(hostile_site.strings), len(hostile_site.strings) + len(hostile_site.urls)
    assert page.locator("ol.ref-list > li").count() >= lists + entries  # one list each, then all
    assert page.locator("ol.ref-list").last.locator("> li").count() == entries
    assert page.locator('meta[name="citation_reference"]').count() == entries
    watch.assert_inert(page)


@pytest.mark.django_db
def test_exports_are_never_html(hostile_site, watched):
    """The exports carry the payloads as data: not HTML, never sniffed, nothing runs."""
    page, watch = watched()
    exports = [
        "/notes/xss-citations/references.bib",
        f"/bib/{BIB_NAME.removeprefix('bib/')}",
        *[f"/notes/{hostile_site.note_slugs[0]}/cite.{kind}" for kind in ("bib", "ris", "json")],
    ]
    for path in exports:
        response = page.request.get(path)
        assert response.status == 200, path
        kind = response.headers["content-type"]
        assert not any(word in kind for word in ("html", "xml", "svg")), (path, kind)
        assert response.headers.get("x-content-type-options") == "nosniff", path
        assert "onerror=" in response.text(), path  # the payloads are there, as data
    watch.where = "cite.json"
    page.goto(f"/notes/{hostile_site.note_slugs[0]}/cite.json", wait_until="load")
    watch.inspect(page)
    watch.assert_inert(page)


@pytest.mark.django_db
def test_shortcode_arguments_run_no_payload(hostile_site, watched):
    """Promotion, gallery and glossary shortcodes with payloads in every argument."""
    page, watch = watched()
    watch.visit(page, "/notes/xss-shortcodes/", settle_ms=300)
    assert page.locator(".promotion, .promotion-textual, [class*=promotion]").count() > 0
    # The glossary panel is filled by the site's script from the terms' data-def attributes.
    for term in page.locator("[data-gid]").all()[:40]:
        if term.is_visible():
            term.hover()
    watch.inspect(page)
    watch.assert_inert(page)


@pytest.mark.django_db
def test_search_reflects_no_payload(hostile_site, watched):
    """/search/?q=… with words that match every note (highlighted titles and excerpts), and
    with the payloads as written (packed two hundred characters to a query, as the form
    allows): reflected in the input and the page."""
    page, watch = watched()
    for query in ["alert", "onerror", "javascript", "script", "img"]:
        watch.visit(page, f"/search/?q={quote(query, safe='')}")
        assert page.locator(".search-result-item").count() > 0, query
    for group in packed(originals(), 200):
        query = " ".join(group)
        watch.visit(page, f"/search/?q={quote(query, safe='')}")
        # An <input>'s value drops line breaks.
        shown = query.strip().replace("\r", "").replace("\n", "")
        assert page.locator("#search-input").input_value() == shown
    watch.assert_inert(page)


def test_site_settings_and_menus_run_no_payload(plain_site, open_watched, beacon):
    """Site title, description, copyright, footer, identity defaults and a menu made of the
    payloads (labels, hints, URLs; parents and children), on every kind of page; then the
    site's title holding each payload in turn."""
    texts, urls = hostile_strings(beacon.url), hostile_urls(beacon.url)
    menu = hostile_menu(texts, urls)
    site_configure(
        config=SiteConfig(settings=hostile_settings(texts), menus=menu), policy=REPLACE_ALL
    )
    page, watch = open_watched(plain_site)
    for path in ["/", "/notes/plain/", "/about/", "/tags/", "/tags/plain/", "/archives/",
                 "/search/?q=text", "/authors/plain-author/"]:  # fmt: skip
        watch.visit(page, path)
        assert page.locator("#menu > li").count() == len(menu[::10])
    for path in ["/index.xml", "/tags/plain/index.xml", "/index.json"]:
        watch.visit_document(page, path)
    # The short columns in turn: the title holds half the payloads, the copyright the others.
    titles, copyrights = packed(originals()[::2], 200), packed(originals()[1::2], 300)
    for title, copyright_ in zip_longest(titles, copyrights, fillvalue=["-"]):
        site_configure(
            config=SiteConfig(
                settings={"title": " ".join(title), "copyright": " ".join(copyright_)}
            ),
            policy=REPLACE_ALL,
        )
        watch.visit(page, "/about/")
        assert page.title().endswith(squashed(" ".join(title)))
    watch.assert_inert(page)


@pytest.mark.django_db
def test_editor_runs_no_payload(hostile_site, watched):
    """A logged-in author's dashboard, editor pages, live preview and revision diff, and the
    public pages as they see them (uncached)."""
    page, watch = watched(logged_in=True)
    watch.visit(page, "/write/")
    for note_id in hostile_site.writer_note_ids:
        watch.visit(page, f"/write/{note_id}/")
        assert page.locator("textarea[name=body]").count() == 1, "not logged in?"
    first = hostile_site.writer_note_ids[-1]
    watch.visit(page, f"/write/{first}/revisions/?a=1&b=2")
    assert page.locator("table.diff").count() == 1

    # The live preview: the editor's script posts the text and patches the preview pane.
    watch.visit(page, f"/write/{first}/")
    body = page.locator(".editor-source .cm-content")
    with page.expect_response(lambda response: "/preview/" in response.url) as preview:
        body.focus()
        page.keyboard.type(" ")
    assert preview.value.status == 200
    page.wait_for_timeout(500)
    watch.inspect(page)
    assert page.locator(".editor-preview").inner_html().strip(), "the preview stayed empty"

    for path in ("/", f"/notes/{hostile_site.note_slugs[0]}/", "/notes/xss-citations/"):
        watch.visit(page, path)
    watch.assert_inert(page)
