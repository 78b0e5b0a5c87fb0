"""Hostile content in a real browser: the rendering engine's XSS corpus, published
through the services wherever a user's string reaches a page, never runs in Chromium.

Every payload of tests/markup/test_sanitise.py is used as written (calling alert()) and
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
a live server of its own, and the database is flushed afterwards.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import zip_longest
from urllib.parse import quote, urlsplit

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.core.management import call_command
from django.db import connections
from django.test import Client
from django.utils import timezone

from bibliography.services import bibfile_import
from hugosite.content import NoteSource, PageSource
from hugosite.loading import REPLACE_ALL, note_import, page_import, site_configure
from hugosite.site_config import MenuEntry, SiteConfig
from notes.models import Author, Note
from notes.services import note_save
from tests.markup import test_sanitise as engine_corpus

try:
    from playwright.sync_api import Error as PlaywrightError
except ImportError:  # the browser fixture skips these tests then
    PlaywrightError = Exception

pytestmark = pytest.mark.browser

# This test's beacon and live server; each pytest-xdist worker its own ten, should the module's
# tests be spread over workers (`--dist load`).
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:])
PORTS = range(8340 + 10 * _WORKER, 8350 + 10 * _WORKER)
BIB_NAME = "bib/xss.bib"
SAMPLE_STRIDE = 16  # every 16th tag and author also gets its own page loaded

# --- The corpus and its variants ------------------------------------------------------------


def corpus() -> list[tuple[str, str]]:
    """Every (id, payload) of the rendering engine's XSS corpus."""
    lists = (
        engine_corpus.BODY_PAYLOADS,
        engine_corpus.MATH_PAYLOADS,
        engine_corpus.SHORTCODE_CASES,
        engine_corpus.ENGINE_CASES,
        engine_corpus.PLACEHOLDER_CASES,
        engine_corpus.BLANK_TARGET_CASES,
    )
    return [item for payloads in lists for item in payloads]


def armed(ident: str, payload: str, beacon: str) -> str:
    """The payload with its alert() calls turned into a request to the beacon."""
    call = f"fetch('{beacon}?p={ident}')"
    return payload.replace("alert(1)", call).replace("alert('XSS')", call)


def originals() -> list[str]:
    return [payload for _, payload in corpus()]


def hostile_strings(beacon: str) -> list[str]:
    """Each payload as written, and armed when arming changes it."""
    strings = []
    for ident, payload in corpus():
        strings.append(payload)
        loaded = armed(ident, payload, beacon)
        if loaded != payload:
            strings.append(loaded)
    return strings


# A URL inside a payload: an attribute value, a Markdown link or reference, a TeX link, an
# autolink. The Markdown pattern stops at the first ")", which the caller puts back.
_URL_IN_PAYLOAD = re.compile(
    r"""\b(?:href|src|action|formaction|data|to|buttonLink|link|image)\s*=\s*"""
    r"""(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s>"']+))"""
    r"""|\]\(\s*<?([^)>]*)>?\s*\)|\\(?:href|url|includegraphics)\{([^}]*)\}"""
    r"""|^\[\w+\]:\s*(\S+)|<([a-z]+:[^>\s]*)>""",
    re.I | re.M,
)


def hostile_urls(beacon: str) -> list[str]:
    """The URLs the corpus tries to slip into links and images, for the fields that hold a URL
    (menu entries, bibliography url and doi, shortcode links): as written, with their HTML
    entities decoded (`jav&#x09;ascript:` stored as a real tab), and armed."""
    found = []
    for ident, payload in corpus():
        for match in _URL_IN_PAYLOAD.finditer(payload):
            url = next(group for group in match.groups() if group is not None)
            url += ")" * (url.count("(") - url.count(")"))
            found += [url, html.unescape(url), armed(ident, url, beacon)]
    return list(dict.fromkeys(url for url in found if url.strip()))


def fit(text: str, limit: int) -> str:
    """A payload cut to a column's length (the few longer than a short column lose their end)."""
    return text[:limit]


def packed(texts: list[str], limit: int, separator: str = " ") -> list[list[str]]:
    """The texts in order, grouped so that each group joined by `separator` fits `limit`."""
    groups: list[list[str]] = []
    for text in texts:
        text = fit(text, limit)
        if groups and len(separator.join([*groups[-1], text])) <= limit:
            groups[-1].append(text)
        else:
            groups.append([text])
    return groups


def shortcode_argument(text: str, *, one_line: bool = False) -> str:
    """A quoted shortcode argument holding `text`, quotes and backslashes escaped. Tabs and
    line breaks are kept (a browser drops them from a URL) unless `one_line`: a fence in a
    title would open a code block that swallows the shortcodes after it."""
    if one_line:
        text = text.replace("\r", " ").replace("\n", " ")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bibtex_value(text: str) -> str:
    """`text` as a braced BibTeX value on one line, its unmatched braces dropped."""
    chars = list(" ".join(text.split()))
    opened: list[int] = []
    for index, char in enumerate(chars):
        if char == "{":
            opened.append(index)
        elif char == "}":
            if opened:
                opened.pop()
            else:
                chars[index] = ""
    for index in opened:
        chars[index] = ""
    return "{" + "".join(chars) + "}"


def free_port(exclude: set[int] = frozenset()) -> int:
    for port in PORTS:
        if port in exclude:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


# --- The beacon -----------------------------------------------------------------------------


class Beacon:
    """A loopback HTTP server that records every request it gets: only a payload calls it."""

    def __init__(self, port: int):
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def _record(self):
                hits.append(f"{self.command} {self.path}")
                self.send_response(204)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()

            do_GET = do_POST = do_HEAD = do_OPTIONS = _record

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{port}/beacon"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


# --- The hostile site -----------------------------------------------------------------------


@dataclass
class HostileSite:
    url: str
    beacon: Beacon
    strings: list[str]
    urls: list[str]
    groups: list[list[str]]  # the strings of each packed note, in note order
    note_slugs: list[str]
    tag_slugs: list[str]
    author_handles: list[str]
    writer_session: dict  # the cookie of a logged-in Author who wrote the special notes
    writer_note_ids: list[int]


def _bib_text(strings: list[str], urls: list[str]) -> str:
    """Entry xssN carries string N in every field; the entries after them carry the URLs."""
    entries = []
    for number, text in enumerate(strings):
        value = bibtex_value(text)
        entries.append(
            f"@article{{xss{number},\n  title = {value},\n  author = {value} and Doe, Jane,\n"
            f"  journal = {value},\n  year = {{2024}},\n  volume = {{1}},\n"
            f"  url = {value},\n  doi = {value}\n}}\n"
        )
    for number, url in enumerate(urls, start=len(strings)):
        value = bibtex_value(url)
        entries.append(
            f"@misc{{xss{number},\n  title = {{Link {number}}},\n  author = {{Doe, Jane}},\n"
            f"  year = {{2024}},\n  url = {value},\n  doi = {value}\n}}\n"
        )
    return "\n".join(entries)


def _citing_body(strings: list[str], entries: int) -> str:
    """One reference list per payload (titled with it), then every entry in one list."""
    parts = [
        f"Cited \\cite{{xss{number}}}.\n\n"
        f'{{{{< references bib="{BIB_NAME}" title={shortcode_argument(text, one_line=True)} >}}}}'
        for number, text in enumerate(strings)
    ]
    keys = ",".join(f"xss{number}" for number in range(entries))
    parts.append(f'All \\cite{{{keys}}}.\n\n{{{{< references bib="{BIB_NAME}" >}}}}')
    return "\n\n".join(parts)


def _shortcode_body(strings: list[str], urls: list[str]) -> str:
    parts = []
    for text in strings:
        arg = shortcode_argument(text)
        parts.append(
            f"{{{{< promotion-textual title={arg} subtitle={arg} buttonLink={arg} "
            f"buttonText={arg} rel={arg} target={arg} align={arg} >}}}}\n\n"
            f"{{{{< gallery-item image={arg} link={arg} caption={arg} >}}}}\n\n"
            f"{{{{< term id={arg} def={arg} >}}}}term{{{{< /term >}}}}"
        )
    for url in urls:
        arg = shortcode_argument(url)
        parts.append(
            f'{{{{< promotion-textual title="t" buttonLink={arg} buttonText="go" >}}}}\n\n'
            f"{{{{< gallery-item image={arg} link={arg} >}}}}"
        )
    parts.append("{{< glossary >}}")
    return "\n\n".join(parts)


def hostile_settings(texts: list[str]) -> dict:
    """Every site string a page shows, made of payloads."""
    return {
        "title": " ".join(packed(texts, 200)[0]),
        "description": "\n".join(texts),
        "copyright": " ".join(packed(texts[::-1], 300)[0]),
        "footer_text": "\n".join(texts),
        "institute": " ".join(packed(texts[1:], 200)[0]),
        "author": " ".join(packed(texts[2:], 100)[0]),
    }


def hostile_menu(texts: list[str], urls: list[str]) -> list[MenuEntry]:
    """Menu entries labelled, hinted and linked with the payloads, then linked to the hostile
    URLs: every tenth is a parent of the nine after it; the first has no URL (a label)."""
    links = [(text, text) for text in texts] + [(f"Link {n}", url) for n, url in enumerate(urls)]
    return [
        MenuEntry(
            identifier=f"xss-menu-{number}",
            name=fit(name, 200),
            url="" if number == 0 else fit(url, 500),
            weight=number,
            parent="" if number % 10 == 0 else f"xss-menu-{number - number % 10}",
            note=fit(name, 200),
        )
        for number, (name, url) in enumerate(links)
    ]


PLAIN_SETTINGS = {
    "title": "Plain site",
    "description": "",
    "copyright": "",
    "footer_text": "",
    "institute": "Plain Institute",
    "author": "plain",
    "notes_per_page": 1000,
    "pager_size": 1000,
    "promotions_per_page": 2,
    "promotion_positions": "1-2",
    "show_full_text_in_rss": True,
}


def _author(number: int, text: str) -> str:
    handle = f"xss-author-{number:03d}"
    author = Author(name=fit(text, 200), handle=handle, institute=fit(text, 200), bio=text)
    author.full_clean()
    author.save()
    return handle


def _build(beacon: Beacon) -> HostileSite:
    """Publish the corpus through the services (in a worker thread: the main one holds
    Playwright's event loop, in which the math engine refuses to run)."""
    try:
        strings = hostile_strings(beacon.url)
        urls = hostile_urls(beacon.url)
        past = timezone.now() - dt.timedelta(days=1)
        site_configure(config=SiteConfig(settings=PLAIN_SETTINGS), policy=REPLACE_ALL)
        for slug, layout in (("search", "search"), ("archives", "archives")):
            page_import(source=PageSource(path=f"{slug}.md", slug=slug, body="", layout=layout))
        page_import(
            source=PageSource(
                path="about.md",
                slug="about",
                title=" ".join(packed(strings, 300)[0]),
                body="\n\n".join(strings),
                summary="\n".join(strings),
                description="\n".join(strings),
                keywords=strings,
            )
        )
        result = bibfile_import(name=BIB_NAME, raw=_bib_text(strings, urls))
        assert result.entries_kept == len(strings) + len(urls), result.problems

        handles = [_author(number, text) for number, text in enumerate(strings)]
        groups = packed(strings, 300)
        slugs = []
        first = 0
        for number, group in enumerate(groups):
            slug = f"xss-{number:03d}"
            members = strings[first : first + len(group)]  # uncut, for the long fields
            note_import(
                source=NoteSource(
                    path=f"{slug}.md",
                    slug=slug,
                    body="\n\n".join(members),
                    title=" ".join(group),
                    date=past - dt.timedelta(minutes=number),
                    authors=handles[first : first + len(group)],
                    institute=" ".join(packed(members, 200)[0]),
                    tags=[fit(text, 100) for text in members],
                    show_title=True,
                    promotion=number % 30 == 1,
                    summary="\n".join(members),
                    description="\n".join(members),
                    keywords=members,
                )
            )
            slugs.append(slug)
            first += len(group)
        assert first == len(strings)

        writer = User.objects.create_user("xss-writer", "w@example.org", "a long passphrase 12")
        writer.groups.add(Group.objects.get(name="Author"))
        Author.objects.filter(handle=handles[0]).update(user=writer)
        written = []
        for slug, body in (
            ("xss-citations", _citing_body(strings, len(strings) + len(urls))),
            ("xss-shortcodes", _shortcode_body(strings, urls)),
        ):
            note, _ = note_import(
                source=NoteSource(
                    path=f"{slug}.md", slug=slug, body=body, title=slug,
                    date=past + dt.timedelta(minutes=1), authors=[handles[0]],
                )
            )  # fmt: skip
            written.append(note.pk)
        # A second revision of the first note, so the editor has a diff to show.
        first_note = Note.objects.get(slug=slugs[0])
        note_save(
            note_id=first_note.pk, user=writer, base_version=first_note.version,
            fields={"body": "\n\n".join(reversed(strings[: len(groups[0])]))},
        )  # fmt: skip
        written.append(first_note.pk)

        client = Client()
        client.force_login(writer)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        tag_slugs = list(
            Note.objects.filter(slug__in=slugs)
            .values_list("tags__slug", flat=True)
            .order_by("tags__pk")
            .distinct()
        )
        return HostileSite(
            url="",
            beacon=beacon,
            strings=strings,
            urls=urls,
            groups=groups,
            note_slugs=slugs,
            tag_slugs=tag_slugs,
            author_handles=handles,
            writer_session={"name": settings.SESSION_COOKIE_NAME, "value": cookie.value},
            writer_note_ids=written,
        )
    finally:
        connections.close_all()


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


# --- The watch ------------------------------------------------------------------------------

# Runs first in every frame: records any call a payload could make to show it ran.
WATCH_SCRIPT = """
(() => {
  const report = (kind, args) => {
    try {
      window.__xssReport(kind, Array.from(args).map(String).join(" ").slice(0, 200));
    } catch (error) {}
  };
  for (const name of ["alert", "confirm", "prompt", "print"]) {
    window[name] = function () { report(name, arguments); };
  }
  for (const name of ["log", "info", "warn", "error", "debug", "trace", "dir", "table"]) {
    console[name] = function () { report("console." + name, arguments); };
  }
})();
"""

# What in the DOM could run later (on a click, a hover, a focus): see the module docstring.
INSPECT_SCRIPT = r"""
() => {
  const problems = [];
  // The scheme as the browser's own URL parser reads it (it drops tabs and line breaks).
  const scheme = (value) => {
    try { return new URL(value, document.baseURI).protocol; } catch (error) { return ""; }
  };
  const dangerous = new Set(["javascript:", "vbscript:", "data:"]);
  const squash = (value) => value.replace(/[\u0000-\u0020\u007f]+/g, "").toLowerCase();
  const urlAttributes = new Set(["href", "src", "action", "formaction", "xlink:href", "poster",
    "data", "background", "codebase", "cite", "srcset", "ping", "to", "from", "values", "by"]);
  const origin = location.origin;
  for (const el of document.querySelectorAll("*")) {
    const tag = el.localName.toLowerCase();
    const where = `<${tag}${el.id ? " id=" + el.id : ""}>`;
    if (["iframe", "frame", "frameset", "object", "embed", "applet", "base", "portal"]
        .includes(tag)) problems.push(`${where} element`);
    if (["set", "animate", "animatemotion", "animatetransform", "handler", "listener"]
        .includes(tag)) problems.push(`${where} SVG animation element`);
    if (tag === "meta" && (el.getAttribute("http-equiv") || "").toLowerCase() === "refresh")
      problems.push("meta refresh");
    if (tag === "script") {
      const src = el.getAttribute("src");
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (src) {
        const url = new URL(src, location.href);
        if (url.origin !== origin || !url.pathname.startsWith("/static/"))
          problems.push(`script src=${src}`);
      } else if (type !== "application/ld+json") {
        problems.push(`inline script: ${el.textContent.slice(0, 120)}`);
      } else {
        try { JSON.parse(el.textContent); }
        catch (error) { problems.push(`JSON-LD that does not parse: ${error}`); }
      }
    }
    if (tag === "link" && !el.closest("head")) problems.push(`${where} outside <head>`);
    for (const attribute of el.attributes) {
      const name = attribute.name.toLowerCase();
      const value = attribute.value;
      if (name.startsWith("on")) problems.push(`${where} ${name}=${value.slice(0, 80)}`);
      if (name === "srcdoc") problems.push(`${where} srcdoc`);
      if (urlAttributes.has(name) && dangerous.has(scheme(value)))
        problems.push(`${where} ${name}=${value.slice(0, 80)}`);
      if (name === "style" && !el.closest(".katex, .katex-display, .pseudo-algorithm")) {
        const css = squash(value.replace(/\/\*.*?\*\//g, "").replace(/\\/g, ""));
        if (css.includes("expression(") || css.includes("javascript:"))
          problems.push(`${where} style=${value.slice(0, 80)}`);
      }
    }
  }
  return problems;
}
"""


class Watch:
    """Everything hostile content did, or could do, in one browser context."""

    def __init__(self, context, beacon: Beacon):
        self.beacon = beacon
        self.ran: list[str] = []
        self.latent: list[str] = []
        self.pages: list = []
        self.where = ""
        context.expose_function("__xssReport", lambda kind, text: self._ran(f"{kind}({text})"))
        context.add_init_script(WATCH_SCRIPT)
        context.on("request", self._request)
        context.on("page", self._page)

    def _ran(self, what: str) -> None:
        self.ran.append(f"{self.where}: {what}")

    def _request(self, request) -> None:
        if urlsplit(request.url).path == "/beacon":
            self._ran(f"request to {request.url}")

    def _page(self, page) -> None:
        if self.pages:
            self._ran(f"a popup opened at {page.url}")
        self.pages.append(page)
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self._ran(f"page error {error}"))
        page.on("console", self._console)

    def _dialog(self, dialog) -> None:
        if dialog.type == "beforeunload":  # the editor's own guard for unsaved text
            dialog.accept()
            return
        self._ran(f"{dialog.type} dialog {dialog.message!r}")
        dialog.dismiss()

    def _console(self, message) -> None:
        # The browser's own line for a missing image (`<img src=x>`) is no script running.
        if not message.text.startswith("Failed to load resource"):
            self._ran(f"console {message.type}: {message.text[:200]}")

    def visit(self, page, path: str, *, settle_ms: int = 0) -> None:
        """Load `path` and note what in its DOM could run."""
        self.where = path
        response = page.goto(path, wait_until="load")
        assert response is not None and response.status == 200, f"{path}: {response}"
        self.inspect(page, settle_ms=settle_ms)

    def visit_document(self, page, path: str) -> None:
        """Load a feed or index as a reader's browser would: rendered as a document (where an
        XHTML <script> in an XML feed would run) unless the browser downloads it."""
        self.where = path
        response = page.request.get(path)
        assert response.status == 200, path
        assert response.headers.get("x-content-type-options") == "nosniff", path
        try:
            page.goto(path, wait_until="load")
        except PlaywrightError as error:
            assert "Download is starting" in str(error), error
            return
        self.inspect(page)

    def inspect(self, page, *, settle_ms: int = 0) -> None:
        if settle_ms:
            page.wait_for_timeout(settle_ms)
        self.latent += [f"{self.where}: {problem}" for problem in page.evaluate(INSPECT_SCRIPT)]

    def assert_inert(self, page) -> None:
        page.wait_for_timeout(500)  # late timers and image errors
        problems = {
            "scripts that ran": self.ran,
            "beacon hits": list(self.beacon.hits),
            "markup that could run": self.latent,
        }
        problems = {name: found for name, found in problems.items() if found}
        assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)[:30_000]


def _documents_and_scripts_only(route) -> None:
    # Stylesheets, fonts and images cannot run script; skipping them keeps some hundred page
    # loads fast. A payload's image still fails to load, so its onerror would still fire.
    if route.request.resource_type in {"document", "script", "xhr", "fetch"}:
        route.continue_()
    else:
        route.abort()


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


def _build_plain() -> None:
    try:
        site_configure(config=SiteConfig(settings=PLAIN_SETTINGS), policy=REPLACE_ALL)
        for slug, layout in (("search", "search"), ("archives", "archives"), ("about", "")):
            page_import(
                source=PageSource(path=f"{slug}.md", slug=slug, body="About.", layout=layout)
            )
        author = Author(name="Plain Author", handle="plain-author")
        author.full_clean()
        author.save()
        note_import(
            source=NoteSource(
                path="plain.md", slug="plain", title="Plain", body="Text $x$.",
                date=timezone.now() - dt.timedelta(days=1), authors=["plain-author"],
                tags=["plain"],
            )
        )  # fmt: skip
    finally:
        connections.close_all()


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
