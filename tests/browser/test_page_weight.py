"""What a reader downloads: a page with no diagram costs at most 30 KB of
JavaScript and CSS compressed, and the home page at most 40 KB of HTML on the wire.

HTML is measured as Chromium received it, encoded (`request.sizes()`), from the live server
with the page cache middleware compressing as in production. Static files are served to the
live server by Django's static handler, uncompressed; in production whitenoise serves the
`.br` or `.gz` file collectstatic wrote beside each one. So each script and stylesheet the
browser fetched is compressed here by whitenoise's own Compressor, and counted in the
encoding whitenoise would pick for the Accept-Encoding the browser sent (brotli first), or
whole where that compression is not effective (as whitenoise then writes no file).
"""

from __future__ import annotations

import re

import pytest
from whitenoise.compress import Compressor

from notes.models import Note

from .worker import in_worker

pytestmark = pytest.mark.browser

JS_CSS_BUDGET = 30 * 1024
HOME_HTML_BUDGET = 40 * 1024
# Notes of the demo a reader opens without a diagram: math, code, an algorithm, references.
NO_DIAGRAM_NOTES = (
    "result-theorem-gronwall-inequality",
    "method-code-simulation-project-layout",
    "method-citations-two-bibliographies",
)


def _whitenoise_size(body: bytes, url: str, accept_encoding: str) -> tuple[int, str]:
    """The bytes whitenoise sends for this static file, and their encoding."""
    compressor = Compressor(quiet=True)
    if not compressor.should_compress(url):
        return len(body), "identity"
    codings = {coding.split(";")[0].strip() for coding in accept_encoding.split(",")}
    for coding, compress in (
        ("br", compressor.compress_brotli),
        ("gzip", compressor.compress_gzip),
    ):
        if coding not in codings:
            continue
        compressed = compress(body)
        if len(compressed) <= len(body) * 0.95:  # whitenoise's is_compressed_effectively
            return len(compressed), coding
    return len(body), "identity"


def _weigh(new_page, path: str) -> dict:
    """Load `path` in a fresh context (an empty browser cache: every file travels) and return
    its HTML and JS/CSS transfers: {url: (bytes, encoding)}."""
    page, _ = new_page()
    responses = []

    def record(response):
        responses.append(response)

    page.on("response", record)
    page.goto(path, wait_until="networkidle")
    page.remove_listener("response", record)
    html, assets, cache = {}, {}, None
    for response in responses:
        kind = response.headers.get("content-type", "")
        url = response.url
        if response.request.resource_type == "document":
            sizes = response.request.sizes()
            html[url] = (sizes["responseBodySize"], response.headers.get("content-encoding", ""))
            cache = response.headers.get("x-cache")
        elif re.search(r"\.(js|css)$", url.split("?")[0]) or "css" in kind or "javascript" in kind:
            accept = response.request.all_headers().get("accept-encoding", "")
            encoding = response.headers.get("content-encoding")
            if encoding:  # compressed by the app (the site's custom CSS): as received
                assets[url] = (response.request.sizes()["responseBodySize"], encoding)
            else:
                assets[url] = _whitenoise_size(response.body(), url, accept)
    links = page.eval_on_selector_all("article.note-card a[href]", "as => as.map(a => a.pathname)")
    return {"html": html, "assets": assets, "cache": cache, "links": set(links)}


def _report(path: str, weighed: dict) -> str:
    lines = [path]
    for group in ("html", "assets"):
        for url, (size, encoding) in weighed[group].items():
            lines.append(f"  {size:>8,} B  {encoding or 'identity':<8} {url}")
    return "\n".join(lines)


def _diagram_behind_card() -> set[str]:
    """Published notes with a diagram outside their preview region."""
    notes = Note.objects.published().filter(render_flags__has_mermaid=True)
    return {
        f"/notes/{note.slug}/" for note in notes if not note.render_flags.get("card_has_mermaid")
    }


def _diagram_free(slugs) -> list[str]:
    notes = Note.objects.published().filter(slug__in=slugs)
    return [note.slug for note in notes if not (note.render_flags or {}).get("has_mermaid")]


def test_pages_without_a_diagram_stay_within_30_kb_of_js_and_css(new_page):
    """The home page (its first page of cards holds no diagram, though a note behind one has
    one) and notes with math, code and references load no Mermaid and at most 30 KB of
    JavaScript and CSS as whitenoise sends them."""
    slugs = in_worker(_diagram_free, NO_DIAGRAM_NOTES)
    assert slugs, "the demo's notes without a diagram are not published"
    behind = in_worker(_diagram_behind_card)
    for path in ["/", *(f"/notes/{slug}/" for slug in slugs)]:
        weighed = _weigh(new_page, path)
        print(_report(path, weighed))
        if path == "/":  # a card on page 1 hides a diagram
            assert weighed["links"] & behind, "no card of page 1 has a diagram behind it"
        urls = weighed["assets"]
        assert not any("mermaid" in url for url in urls), path
        total = sum(size for size, _ in urls.values())
        assert 0 < total <= JS_CSS_BUDGET, (
            f"{path}: {total:,} B of JS and CSS\n{_report(path, weighed)}"
        )


def test_home_html_within_40_kb_on_the_wire(new_page):
    """The home page's HTML arrives compressed, within 40 KB as Chromium counts it: on the
    render that stores it and on the hit after."""
    for attempt in ("miss", "hit"):
        weighed = _weigh(new_page, "/")
        print(attempt, _report("/", weighed))
        assert weighed["cache"] == attempt
        ((size, encoding),) = weighed["html"].values()
        assert encoding in ("br", "gzip"), attempt
        assert 0 < size <= HOME_HTML_BUDGET, f"{attempt}: {size:,} B of HTML"
