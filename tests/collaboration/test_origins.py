"""The handshake's origin check as Django's CSRF origin check: scheme, host and port of the
socket's own request (behind a TLS proxy too), or CSRF_TRUSTED_ORIGINS; anything else, "null"
or no Origin is refused."""

from __future__ import annotations

import pytest

from collaboration.origins import origin_allowed

PROXY = ("HTTP_X_FORWARDED_PROTO", "https")


def handshake(origin: str | None, host: str, **headers) -> dict:
    pairs = [(b"host", host.encode())] if host else []
    if origin is not None:
        pairs.append((b"origin", origin.encode()))
    pairs += [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return {"type": "websocket", "path": "/live/notes/1/", "headers": pairs}


SITE = "notes.example.com"
# How the request arrived: straight, or through a TLS proxy whose X-Forwarded-Proto says https
# or http; "spoofed": the header is there but SECURE_PROXY_SSL_HEADER does not trust it.
STRAIGHT, TLS, TLS_SAYS_HTTP, SPOOFED = "straight", "tls", "tls-says-http", "spoofed"
# name → (Origin, the request's Host, how it arrived, accepted)
MATRIX = {
    "same origin": (f"http://{SITE}", SITE, STRAIGHT, True),
    "same origin, default port named": (f"http://{SITE}:80", SITE, STRAIGHT, True),
    "same origin on a port": (f"http://{SITE}:8000", f"{SITE}:8000", STRAIGHT, True),
    "another port": (f"http://{SITE}:8080", SITE, STRAIGHT, False),
    "another port than the request's": (f"http://{SITE}", f"{SITE}:8000", STRAIGHT, False),
    "https page, plain socket": (f"https://{SITE}", SITE, STRAIGHT, False),
    "another allowed host": ("http://other.example.com", SITE, STRAIGHT, False),
    "a subdomain": (f"http://evil.{SITE}", SITE, STRAIGHT, False),
    "a host not allowed": ("http://rebound.example", "rebound.example", STRAIGHT, False),
    "no Origin": (None, SITE, STRAIGHT, False),
    "Origin null": ("null", SITE, STRAIGHT, False),
    "an origin with a path": (f"http://{SITE}/x", SITE, STRAIGHT, False),
    "behind TLS, https page": (f"https://{SITE}", SITE, TLS, True),
    "behind TLS, http page": (f"http://{SITE}", SITE, TLS, False),
    "behind TLS, proxy says http": (f"https://{SITE}", SITE, TLS_SAYS_HTTP, False),
    "forwarded https not trusted": (f"https://{SITE}", SITE, SPOOFED, False),
    "trusted exactly": ("https://editors.example.net", SITE, STRAIGHT, True),
    "trusted, other scheme": ("http://editors.example.net", SITE, STRAIGHT, False),
    "trusted, other port": ("https://editors.example.net:8443", SITE, STRAIGHT, False),
    "trusted wildcard, subdomain": ("https://a.example.org", SITE, STRAIGHT, True),
    "trusted wildcard, the domain": ("https://example.org", SITE, STRAIGHT, True),
    "trusted wildcard, other port": ("https://a.example.org:8443", SITE, STRAIGHT, False),
    "trusted wildcard, other scheme": ("http://a.example.org", SITE, STRAIGHT, False),
    "trusted wildcard, lookalike": ("https://a.example.org.evil.com", SITE, STRAIGHT, False),
}


@pytest.mark.parametrize(("origin", "host", "arrived", "accepted"), MATRIX.values(), ids=MATRIX)
def test_an_origin_is_the_requests_own_or_trusted(settings, origin, host, arrived, accepted):
    """Scheme, host and port must all match the request's (https as the trusted proxy says),
    or CSRF_TRUSTED_ORIGINS must name the origin (its `*.` entries on their scheme and port)."""
    settings.ALLOWED_HOSTS = [SITE, "other.example.com"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://editors.example.net", "https://*.example.org"]
    settings.SECURE_PROXY_SSL_HEADER = None if arrived in (STRAIGHT, SPOOFED) else PROXY
    headers = {} if arrived == STRAIGHT else {"x_forwarded_proto": "https"}
    if arrived == TLS_SAYS_HTTP:
        headers["x_forwarded_proto"] = "http"
    assert origin_allowed(handshake(origin, host, **headers)) is accepted


def test_a_forwarded_host_counts_only_when_django_would_use_it(settings):
    """X-Forwarded-Host names the request's host with USE_X_FORWARDED_HOST only, as in
    Django's get_host()."""
    settings.ALLOWED_HOSTS = ["notes.example.com", "internal"]
    scope = handshake("http://notes.example.com", "internal", x_forwarded_host="notes.example.com")
    settings.USE_X_FORWARDED_HOST = False
    refused = origin_allowed(scope)
    settings.USE_X_FORWARDED_HOST = True
    assert not refused and origin_allowed(scope)
