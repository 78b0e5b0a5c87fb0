"""scidraft.site.compression and the page cache: pages compressed once when stored, served in
the encoding each reader accepts, with an ETag per encoding, Vary, 304s and HEAD, and never
to anyone logged in (BREACH)."""

from __future__ import annotations

import gzip
import os

import brotli
import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.urls import path

from scidraft.site import compression
from scidraft.site.caching import cached_page, local_pages

BROWSER = "gzip, deflate, br, zstd"
# Text long enough to compress, different on each line so that it is not trivially small.
PAGE = "".join(f"<p>Line {n}: the page cache stores this page once.</p>\n" for n in range(400))
GZIPPED = gzip.compress(PAGE.encode(), mtime=0)


def _page(request):
    return HttpResponse(PAGE)


def _small(request):
    return HttpResponse("<p>short</p>")


def _already_encoded(request):
    response = HttpResponse(GZIPPED, content_type="text/html")
    response["Content-Encoding"] = "gzip"
    return response


def _png(request):
    return HttpResponse(os.urandom(4096), content_type="image/png")


urlpatterns = [
    path("page/", cached_page(_page)),
    path("small/", cached_page(_small)),
    path("encoded/", cached_page(_already_encoded)),
    path("image/", cached_page(_png)),
]

in_this_module = pytest.mark.urls(__name__)


# --- negotiation, encoding, entity tags --------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "offered", "chosen"),
    [
        (BROWSER, ("br", "gzip"), "br"),
        ("gzip, deflate", ("br", "gzip"), "gzip"),
        ("br;q=0.5, gzip;q=0.8", ("br", "gzip"), "gzip"),
        ("br;q=0, gzip", ("br", "gzip"), "gzip"),
        ("*", ("br", "gzip"), "br"),
        ("*;q=0.1, gzip;q=0", ("br", "gzip"), "br"),
        ("gzip;q=0, br;q=0", ("br", "gzip"), None),
        ("identity", ("br", "gzip"), None),
        ("", ("br", "gzip"), None),
        (BROWSER, ("gzip",), "gzip"),
        (BROWSER, (), None),
        ("br;q=nonsense, gzip", ("br", "gzip"), "gzip"),
        ("  BR , ", ("br", "gzip"), "br"),
    ],
)
def test_negotiate_follows_accept_encoding(accept, offered, chosen):
    """The highest q-value among the encodings stored wins, brotli first on a tie; q=0 refuses
    one, `*` stands for the others, and no acceptable encoding means the plain body."""
    assert compression.negotiate(accept, offered) == chosen


def test_encode_keeps_encodings_that_decode_to_the_page():
    """A text page gets a brotli and a gzip body, each decoding to the page and smaller."""
    body = PAGE.encode()
    encoded = compression.encode(body, "text/html; charset=utf-8")
    assert set(encoded) == {"br", "gzip"}
    assert brotli.decompress(encoded["br"]) == body
    assert gzip.decompress(encoded["gzip"]) == body
    assert all(len(value) < len(body) for value in encoded.values())


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<p>short</p>", "text/html"),  # under MIN_BYTES: nothing to gain
        (PAGE.encode(), "image/png"),  # not text
        (os.urandom(8192), "text/plain"),  # shrinks by less than 5 %
    ],
)
def test_encode_skips_what_is_not_worth_it(body, content_type):
    """Small bodies, non-text types and bodies that do not shrink by 5 % get no encoding."""
    assert compression.encode(body, content_type) == {}


def test_feeds_bibliographies_and_json_are_compressible():
    """The site's text formats are compressed; images and archives are not."""
    for kind in ("text/html; charset=utf-8", "application/rss+xml", "application/json",
                 "application/x-bibtex", "application/vnd.citationstyles.csl+json",
                 "text/css", "image/svg+xml"):  # fmt: skip
        assert compression.compressible(kind), kind
    for kind in ("image/png", "application/zip", "application/octet-stream", ""):
        assert not compression.compressible(kind), kind


def test_etag_for_names_the_encoding():
    """Each encoding has its own strong entity tag; the plain body keeps the page's."""
    assert compression.etag_for('"abc"', "br") == '"abc-br"'
    assert compression.etag_for('"abc"', None) == '"abc"'


# --- through the page cache --------------------------------------------------------------------


def _get(client, url, accept=BROWSER, **headers):
    return client.get(url, HTTP_ACCEPT_ENCODING=accept, **headers)


def _varies(response) -> bool:
    return "accept-encoding" in response.get("Vary", "").lower()


@in_this_module
@pytest.mark.django_db
def test_miss_and_hit_serve_the_accepted_encoding(client):
    """The render and every later hit send brotli to a browser, gzip to a gzip-only client and
    the plain page to one that accepts neither: each with its own ETag, a Content-Length of
    the bytes sent, and Vary: Accept-Encoding."""
    miss, hit = _get(client, "/page/"), _get(client, "/page/")
    assert (miss["X-Cache"], hit["X-Cache"]) == ("miss", "hit")
    for response in (miss, hit):
        assert response["Content-Encoding"] == "br"
        assert brotli.decompress(response.content) == PAGE.encode()
        assert response["Content-Length"] == str(len(response.content))
        assert _varies(response)
    assert miss["ETag"] == hit["ETag"] and miss["ETag"].endswith('-br"')
    zipped = _get(client, "/page/", accept="gzip")
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.content) == PAGE.encode()
    plain = _get(client, "/page/", accept="")
    assert "Content-Encoding" not in plain and plain.content == PAGE.encode()
    assert _varies(plain)
    etags = {miss["ETag"], zipped["ETag"], plain["ETag"]}
    assert len(etags) == 3
    assert zipped["ETag"] == compression.etag_for(plain["ETag"], "gzip")


@in_this_module
@pytest.mark.django_db
def test_a_page_is_compressed_once_for_all_its_readers(client, monkeypatch):
    """Compression happens when the page is stored, not per response."""
    calls = []
    real = compression.encode
    monkeypatch.setattr(compression, "encode", lambda *a: calls.append(a) or real(*a))
    for accept in (BROWSER, "gzip", "", BROWSER, BROWSER):
        assert _get(client, "/page/", accept=accept).status_code == 200
    assert len(calls) == 1


@in_this_module
@pytest.mark.django_db
def test_revalidating_an_encoded_copy_answers_304(client):
    """A client holding the brotli copy sends its ETag back and gets 304 (hit and render
    alike), with Vary; the same tag from a client that now gets gzip is a new representation."""
    etag = _get(client, "/page/")["ETag"]
    hit = _get(client, "/page/", HTTP_IF_NONE_MATCH=etag)
    assert hit.status_code == 304 and hit.content == b""
    assert hit["ETag"] == etag and _varies(hit)
    local_pages.clear()
    from django.core.cache import cache

    cache.clear()
    rendered = _get(client, "/page/", HTTP_IF_NONE_MATCH=etag)
    assert rendered.status_code == 304 and _varies(rendered)
    other = _get(client, "/page/", accept="gzip", HTTP_IF_NONE_MATCH=etag)
    assert other.status_code == 200 and other["Content-Encoding"] == "gzip"
    plain_etag = _get(client, "/page/", accept="")["ETag"]
    assert _get(client, "/page/", accept="", HTTP_IF_NONE_MATCH=plain_etag).status_code == 304


@in_this_module
@pytest.mark.django_db
def test_head_says_what_get_sends(client):
    """HEAD gives GET's encoding, ETag and Content-Length, without a body."""
    got = _get(client, "/page/")
    head = client.head("/page/", HTTP_ACCEPT_ENCODING=BROWSER)
    assert head.content == b""
    for name in ("Content-Encoding", "ETag", "Content-Length", "Vary"):
        assert head[name] == got[name], name


@in_this_module
@pytest.mark.django_db
def test_small_and_binary_responses_are_sent_as_they_are(client):
    """A page under MIN_BYTES and an image are sent unencoded (still Vary: they are pages whose
    representation could be encoded)."""
    for url in ("/small/", "/image/"):
        for response in (_get(client, url), _get(client, url)):
            assert "Content-Encoding" not in response, url
            assert response["Content-Length"] == str(len(response.content))
    assert _get(client, "/small/").content == b"<p>short</p>"


@in_this_module
@pytest.mark.django_db
def test_an_already_encoded_response_is_not_encoded_again(client):
    """A view's own gzip body keeps its Content-Encoding, on the render and from the cache,
    whatever the client prefers: decoded once, it is the page."""
    for response in (_get(client, "/encoded/"), _get(client, "/encoded/")):
        assert response["Content-Encoding"] == "gzip"
        assert response.content == GZIPPED
        assert gzip.decompress(response.content) == PAGE.encode()


@pytest.mark.django_db
def test_an_entry_stored_before_compression_is_served_plain(client, demo_loaded):
    """Pages cached by the previous release (no encodings) are still served, unencoded."""
    from django.core.cache import cache

    _get(client, "/")
    for key, entry in list(local_pages.entries.items()):
        old = {name: value for name, value in entry.items() if name != "encodings"}
        local_pages.entries[key] = old
        cache.set(key, old)
    response = _get(client, "/")
    assert response["X-Cache"] == "hit" and "Content-Encoding" not in response
    assert b"notes-feed" in response.content


@pytest.mark.django_db
def test_pages_with_a_token_or_for_someone_logged_in_are_never_compressed(client, demo_loaded):
    """BREACH: a page with a CSRF token (the login form, anonymous or not) and every page of
    someone logged in (personal: never stored) are sent uncompressed whatever the browser
    accepts, while the anonymous pages, which carry no secret, are compressed."""
    assert _get(client, "/search/?q=matrix")["Content-Encoding"] == "br"
    login = _get(client, "/accounts/login/")
    assert b"csrfmiddlewaretoken" in login.content and "Content-Encoding" not in login
    user = User.objects.create_user("reader", password="correct horse battery")
    client.force_login(user)
    login = _get(client, "/accounts/login/")
    assert b"csrfmiddlewaretoken" in login.content and "Content-Encoding" not in login
    for url in ("/", "/search/?q=matrix", "/notes/result-theorem-gronwall-inequality/"):
        response = _get(client, url)
        assert response.status_code == 200, url
        assert "Content-Encoding" not in response, url
