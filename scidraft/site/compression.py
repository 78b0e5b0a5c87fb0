"""Compressed public pages: each page the cache stores is compressed once, with brotli and
gzip, and every reader is served the encoding they accept.

A feed page is about 300 KB of HTML and 25 KB in brotli. Compressing when the page is stored,
not per response, costs one compression per page and content generation across all
processes (the encoded bytes travel with the page through the shared cache), so a hit costs
what it cost before. Brotli at quality 5 and gzip at level 6: 4 and 6 ms for a feed page,
against 120 ms to 750 ms for brotli's top qualities, which save 5-15 % more.

Each encoding is its own representation, with its own strong ETag (`"<hash>-br"`) and
`Vary: Accept-Encoding` on every one of them, the 304s included: a shared cache never hands a
brotli body to a client that did not ask for it, and a client revalidating its brotli copy gets
its 304 (RFC 9110 §8.8.3.3: a strong validator changes with the content coding).

BREACH. Compression leaks, through the length of the response, whether text an attacker
reflects into a page (a search query) repeats a secret in the same page. Only pages the page
cache stores are compressed, and those are by construction the same for every reader: stored
and served for anonymous requests only, never for anyone logged in (`private, no-store`), they
carry no CSRF token, no session data and nothing personal, since any reader may be served
them. With no secret in the body there is nothing to recover. Responses that can carry one
are never stored, hence never compressed here: every page of someone logged in (drafts in
the editor, the review queue, the logout form's CSRF token on the accounts pages) and every
form page, anonymous or not (the login and password-reset forms' CSRF tokens). nginx in front
(deploy/nginx.conf) compresses neither.
"""

from __future__ import annotations

import gzip

import brotli  # installed with whitenoise[brotli], which compresses the static files

# Below about one network packet the bytes saved do not pay for the work or the headers.
MIN_BYTES = 1024
BROTLI_QUALITY = 5
GZIP_LEVEL = 6
# An encoding is kept only if it saves at least this share (whitenoise's rule for static
# files): otherwise the client would decompress for nothing.
MAX_RATIO = 0.95
# Preferred first when the client accepts both equally: brotli is the smaller.
CODINGS = ("br", "gzip")

_TEXT_TYPES = {
    "application/json",
    "application/xml",
    "application/rss+xml",
    "application/atom+xml",
    "application/javascript",
    "application/x-bibtex",
    "application/x-research-info-systems",
    "image/svg+xml",
}


def compressible(content_type: str) -> bool:
    """Text, in any of the types the site serves; images and archives are already packed."""
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml"))


def encode(content: bytes, content_type: str) -> dict[str, bytes]:
    """The body in each encoding worth sending, by coding name; empty when none is."""
    if len(content) < MIN_BYTES or not compressible(content_type):
        return {}
    encoded = {
        "br": brotli.compress(content, quality=BROTLI_QUALITY, mode=brotli.MODE_TEXT),
        "gzip": gzip.compress(content, compresslevel=GZIP_LEVEL, mtime=0),
    }
    return {
        coding: body for coding, body in encoded.items() if len(body) <= len(content) * MAX_RATIO
    }


def _weights(accept_encoding: str) -> dict[str, float]:
    weights: dict[str, float] = {}
    for part in accept_encoding.split(","):
        coding, *parameters = (piece.strip() for piece in part.split(";"))
        if not coding:
            continue
        weight = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[coding.lower()] = weight
    return weights


def negotiate(accept_encoding: str, offered) -> str | None:
    """The coding to send, among `offered`, for this Accept-Encoding; None for the plain body.

    The highest q-value wins, brotli before gzip on a tie; `q=0` refuses a coding and `*`
    stands for any coding not named (RFC 9110 §12.5.3)."""
    weights = _weights(accept_encoding)
    best, best_weight = None, 0.0
    for coding in CODINGS:
        if coding not in offered:
            continue
        weight = weights.get(coding, weights.get("*", 0.0))
        if weight > best_weight:
            best, best_weight = coding, weight
    return best


def etag_for(etag: str, coding: str | None) -> str:
    """The entity tag of the page in `coding`: `"abc"` becomes `"abc-br"`."""
    if coding is None or not etag.endswith('"'):
        return etag
    return f'{etag[:-1]}-{coding}"'
