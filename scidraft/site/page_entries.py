"""Cached pages as kept: the entry a response is stored as, the response it is served as, and
each process's memory of the pages it served last (scidraft.site.caching decides when).

An entry is the page with its body compressed once in brotli and gzip (scidraft.site.compression,
which also argues why no stored page is open to BREACH), the headers worth keeping, and what it
was rendered from: the content generation, the versions of the dependency tags the view named
(scidraft.site.dependencies; None when unknown), when, and a random id telling renders apart.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

from . import compression
from .sharedcache import safe

# Headers stored with a page. A hit is answered before the inner middleware runs, so the
# security headers it added when the page was rendered (CSP, frame options) are kept too.
# A response a view already encoded keeps its Content-Encoding and is not compressed again.
_KEPT_HEADERS = (
    "Content-Type", "Content-Disposition", "Location", "Content-Language", "Vary",
    "Content-Security-Policy", "X-Frame-Options", "Content-Encoding",
)  # fmt: skip


def store(response: HttpResponse, generation: int | None = None, tokens=None) -> dict:
    """The page as kept in the cache, rendered from `generation` and the tag versions
    `tokens`, with its body compressed once in each encoding worth sending."""
    content = response.content
    # A body a view already encoded is sent as it is.
    plain = not response.has_header("Content-Encoding")
    return {
        "status": response.status_code,
        "content": content,
        "encodings": (
            compression.encode(content, response.get("Content-Type", "")) if plain else {}
        ),
        "headers": {name: response[name] for name in _KEPT_HEADERS if response.has_header(name)},
        "etag": response["ETag"],
        "last_modified": response["Last-Modified"],
        "id": secrets.token_hex(8),
        "rendered_at": time.time(),
        "generation": generation,
        "tokens": tokens,
    }


def size(entry: dict) -> int:
    return len(entry["content"]) + sum(map(len, entry.get("encodings", {}).values()))


def encode(request: HttpRequest, response: HttpResponse, entry: dict) -> None:
    """Give `response` (the page of `entry`) the body in the encoding the request accepts, with
    that encoding's ETag. Entries stored before pages were compressed have no encodings."""
    encodings = entry.get("encodings") or {}
    coding = compression.negotiate(request.META.get("HTTP_ACCEPT_ENCODING", ""), encodings)
    if coding is not None:
        response.content = encodings[coding]
        response["Content-Encoding"] = coding
        response["ETag"] = compression.etag_for(entry["etag"], coding)
    response["Content-Length"] = str(len(response.content))


def restore(request: HttpRequest, entry: dict) -> HttpResponse:
    response = HttpResponse(entry["content"], status=entry["status"])
    for name, value in entry["headers"].items():
        response[name] = value
    response["ETag"] = entry["etag"]
    response["Last-Modified"] = entry["last_modified"]
    encode(request, response, entry)
    return response


class _LocalPages:
    """This process's most recently served pages: a hit on a page still fresh costs no shared
    cache round trip for the whole page (its freshness is checked all the same)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.size = 0
        self.entries: OrderedDict[str, dict] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> dict | None:
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None:
                self.entries.move_to_end(key)
            return entry

    def put(self, key: str, entry: dict) -> None:
        """Keep `entry` under `key`, replacing an older render of the page."""
        weight = size(entry)
        if weight > self.max_bytes // 4:
            return
        with self.lock:
            old = self.entries.pop(key, None)
            if old is not None:
                self.size -= size(old)
            self.entries[key] = entry
            self.size += weight
            while self.size > self.max_bytes:
                _, old = self.entries.popitem(last=False)
                self.size -= size(old)

    def drop(self, key: str) -> None:
        with self.lock:
            old = self.entries.pop(key, None)
            if old is not None:
                self.size -= size(old)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.size = 0


local_pages = _LocalPages(max_bytes=settings.SCIDRAFT_PAGE_LOCAL_BYTES)
# Pages keyed by query parameters (search results), apart: a flood of distinct searches pushes
# out only other searches, never the site's pages, and never reaches the shared cache.
local_queries = _LocalPages(max_bytes=settings.SCIDRAFT_PAGE_QUERY_LOCAL_BYTES)


def latest_key(key: str) -> str:
    """Where the shared cache keeps the id of the page's latest render beside the page: a
    process holding a stale copy asks for the id, a few bytes, before the page, which is the
    same render until someone stores a newer one."""
    return key + ":latest"


def keep(key: str, entry: dict, shared: bool = True) -> None:
    if shared:
        safe(
            cache.set_many,
            {key: entry, latest_key(key): entry["id"]},
            settings.SCIDRAFT_PAGE_CACHE_TTL,
            default=[],
        )
        local_pages.put(key, entry)
    else:
        local_queries.put(key, entry)


def forget(key: str, shared: bool = True) -> None:
    if shared:
        safe(cache.delete_many, [key, latest_key(key)])
        local_pages.drop(key)
    else:
        local_queries.drop(key)
