"""Whole-response caching of public pages, keyed by the site's content generation.

A page is cached under (host, path, the query parameters it uses, generation). Every write a
reader could see bumps
the generation in its transaction (scidraft.site.receivers), so a new key is used from the
moment the write commits; nothing is purged. A scheduled note going live needs no write: the
generation read here knows the next due time and bumps once it has passed.

Readers get `Cache-Control: public, max-age, stale-while-revalidate`, an ETag and 304s;
anyone logged in gets `private, no-store` and is never served from or stored in the cache.
Cache errors (Redis down) degrade to rendering the page, logged; they never raise. Readers who
miss the same key at the same moment (every hot page, right after a write) wait for one render
instead of each rendering it: within a process on an event, across processes on a claim in the
shared cache.

Only the query parameters a page declares (`cached_page(view, query=...)`: a search's `q` and
`page`) are part of its key. The others (utm_*, fbclid, a cache-buster, a flood of random ones)
are removed from the request before the view sees it, and the request is answered with the
canonical page: it costs neither a render nor an entry, keeps the canonical page's ETag and
304s, and no redirect round trip (which would also defeat a cache-busting `?v=`: the browser
could hold the canonical URL stale for max-age). Pages keyed by query parameters (search
results: any text, one entry per distinct search) are kept only in each process's memory,
within SCIDRAFT_PAGE_QUERY_LOCAL_BYTES, never in the shared cache: a flood of random searches
costs renders, not Redis memory.

A page is stored with its body compressed once in brotli and gzip, and each reader is sent the
encoding they accept, with that encoding's ETag and `Vary: Accept-Encoding`
(scidraft.site.compression, which also argues why no stored page is open to BREACH).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import Resolver404, get_resolver
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date, quote_etag

from . import compression
from .models import ContentGeneration

logger = logging.getLogger(__name__)

GENERATION_KEY = "site:generation"
# Callables returning the first moment after `since` (when the generation last changed) at
# which content becomes visible without a write (a scheduled note's date), or None; registered
# by the apps that have such content (notes). Counted from the last change, not from now, so
# that a process reading the generation after that moment has passed still sees it is due.
due_sources: list[Callable[[dt.datetime | None], dt.datetime | None]] = []


def _safe(operation, *args, default=None):
    try:
        return operation(*args)
    except Exception:  # a cache outage must cost speed, not pages
        logger.warning("cache %s failed", getattr(operation, "__name__", "call"), exc_info=True)
        return default


def _next_due(since: dt.datetime | None) -> dt.datetime | None:
    moments = [moment for source in due_sources if (moment := source(since)) is not None]
    return min(moments) if moments else None


def _load_generation() -> tuple[int, float | None]:
    row = ContentGeneration.objects.filter(pk=1).values_list("value", "changed_at").first()
    value, changed_at = row or (0, None)
    known = lease.due
    if known is not None and known[0] == value:
        return known
    due = _next_due(changed_at)
    state = (value, due.timestamp() if due else None)
    # Not kept from inside a transaction: it may roll back and its number go to another write.
    if not transaction.get_connection().in_atomic_block:
        lease.due = state
    return state


def _shared_generation() -> bool:
    """Whether the generation is kept in the cache. Only a cache every process shares can hold
    it: a local-memory cache (no REDIS_URL) would keep a number that another process's write
    (manage.py, another worker) has replaced, for SCIDRAFT_GENERATION_TTL seconds.
    Without one it is read from the database, leased as with one."""
    return settings.SCIDRAFT_GENERATION_TTL > 0


class _Lease:
    """The generation this process read last, reusable until its lease ends.

    A page hit would otherwise cost a shared-cache round trip for one small number. The lease
    is timed from before the read was sent, and every writer waits one lease after publishing
    a new generation (publish_generation) before it answers: so any copy read before that
    publication has expired by the time anyone can know the write happened.
    """

    def __init__(self):
        # One tuple, replaced whole: threads read it without a lock.
        self.current: tuple[tuple[int, float | None], float] | None = None
        # The last generation read, lease or not: what pages are keyed by while neither the
        # shared cache nor the database can say (no write commits while the database is down).
        self.last: tuple[int, float | None] | None = None
        # The generation last read from the database, with its next due time: that can change
        # only with a write, and every write gives a new number, so a read of the database
        # costs one query (the number), not two.
        self.due: tuple[int, float | None] | None = None

    def held(self) -> tuple[int, float | None] | None:
        current = self.current
        return current[0] if current is not None and time.monotonic() < current[1] else None

    def hold(self, state: tuple[int, float | None], since: float) -> None:
        self.last = state
        seconds = settings.SCIDRAFT_GENERATION_LEASE_MS / 1000
        if seconds > 0:
            self.current = (state, since + seconds)

    def drop(self) -> None:
        self.current = None
        self.due = None


lease = _Lease()


def _read_generation() -> tuple[int, float | None]:
    state = lease.held()
    if state is not None:
        return state
    since = time.monotonic()
    shared = _shared_generation()
    state = _safe(cache.get, GENERATION_KEY) if shared else None
    if state is None:
        try:
            state = _load_generation()
        except DatabaseError:
            if lease.last is None:
                raise
            # A write that failed with the database left the key deleted: cached pages stay
            # servable under the last generation seen rather than all answering 503.
            logger.warning("generation unreadable (database down); using the last one seen")
            return lease.last
        # add, not set: a value read before a concurrent write committed must not replace the
        # writer's (writers set; see publish_generation).
        if shared:
            _safe(cache.add, GENERATION_KEY, state, settings.SCIDRAFT_GENERATION_TTL)
    lease.hold(state, since)
    return state


def current_generation() -> int:
    """The generation pages are keyed by; bumps it once a scheduled note has come due."""
    value, due = _read_generation()
    if due is not None and timezone.now().timestamp() >= due:
        with transaction.atomic():
            bump_generation()
        state = _load_generation()
        if _shared_generation():
            _safe(cache.set, GENERATION_KEY, state, settings.SCIDRAFT_GENERATION_TTL)
        lease.drop()
        value = state[0]
    return value


def request_generation(request: HttpRequest) -> int:
    """The content generation, read once per request: the page key and everything the page is
    rendered from (scidraft.site.snapshot) agree on it."""
    generation = getattr(request, "_content_generation", None)
    if generation is None:
        generation = request._content_generation = current_generation()
    return generation


_deferral = threading.local()


@contextmanager
def deferred_bumps():
    """Within the block, bumps are collected and made once at its end (a bulk import saves
    thousands of rows; readers need one new generation, not thousands)."""
    depth = getattr(_deferral, "depth", 0)
    _deferral.depth = depth + 1
    if depth == 0:
        _deferral.pending = False
    try:
        yield
    finally:
        _deferral.depth = depth
        if depth == 0 and _deferral.pending:
            _deferral.pending = False
            bump_generation()


def bump_generation() -> None:
    """Call inside the write's transaction; readers see the new generation once it commits."""
    from django.db.models import F

    if getattr(_deferral, "depth", 0):
        _deferral.pending = True
        return

    changed = ContentGeneration.objects.filter(pk=1)
    if not changed.update(value=F("value") + 1, changed_at=timezone.now()):
        ContentGeneration.objects.get_or_create(pk=1, defaults={"value": 1})
    # Forget the cached number now (this transaction reads its own write) and publish the new
    # one once committed: that replaces any old value a concurrent reader added meanwhile.
    _safe(cache.delete, GENERATION_KEY)
    lease.drop()
    if not _publication_pending():
        transaction.on_commit(publish_generation)


def _publication_pending() -> bool:
    """publish_generation already waits for this transaction's commit: one publication (and
    one lease wait) per transaction, however many rows it changed."""
    connection = transaction.get_connection()
    return connection.in_atomic_block and any(
        entry[1] is publish_generation for entry in connection.run_on_commit
    )


def publish_generation() -> None:
    """After the write commits: the new generation goes to the shared cache, then the writer
    waits out one lease, so that no process still holds an older one when it answers."""
    if _shared_generation():
        _safe(cache.set, GENERATION_KEY, _load_generation(), settings.SCIDRAFT_GENERATION_TTL)
    lease.drop()
    seconds = settings.SCIDRAFT_GENERATION_LEASE_MS / 1000
    if seconds > 0:
        time.sleep(seconds)


def _personal(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


def page_key(request: HttpRequest, generation: int, query: str = "") -> str:
    """`query`: the canonical query string of the parameters the page uses (canonical_query)."""
    raw = f"{request.get_host()}|{request.path}|{query}|{generation}"
    return "page:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


# What cached_page is told a page reads from its query string: names, or a callable given the
# request and the view's arguments (a standalone page reads `q` only if it is the search page).
QueryParameters = Iterable[str] | Callable[..., Iterable[str]]


def page_query_parameters(request: HttpRequest) -> frozenset[str] | None:
    """The query parameters the page at this path uses; None if it is not a cached page (then
    nothing under its URL is ever stored, whatever the query)."""
    try:
        match = get_resolver(getattr(request, "urlconf", None)).resolve(request.path_info)
    except Resolver404:
        return None
    declared = getattr(match.func, "page_query", None)
    if declared is None:
        return None
    if callable(declared):
        declared = declared(request, *match.args, **match.kwargs)
    return frozenset(declared)


def canonical_query(request: HttpRequest, names: frozenset[str]) -> str:
    """Keep only the parameters in `names`, in the request itself too (so the view renders
    exactly what the key says), and return them as the key's query string: sorted by name,
    each name's values in the order sent. `?q=a&q=b` and `?q=b&q=a` are different searches
    (a view reads the last value), so they never share a key."""
    query = request.GET
    kept = [(name, value) for name in sorted(names & query.keys()) for value in query.getlist(name)]
    canonical = urlencode(kept)
    if canonical != request.META.get("QUERY_STRING", ""):
        request.META["QUERY_STRING"] = canonical
        request.GET = QueryDict(canonical, encoding=request.encoding)
    return canonical


# Headers stored with a page. A hit is answered before the inner middleware runs, so the
# security headers it added when the page was rendered (CSP, frame options) are kept too.
# A response a view already encoded keeps its Content-Encoding and is not compressed again.
_KEPT_HEADERS = (
    "Content-Type", "Content-Disposition", "Location", "Content-Language", "Vary",
    "Content-Security-Policy", "X-Frame-Options", "Content-Encoding",
)  # fmt: skip


def _store(response: HttpResponse) -> dict:
    """The page as kept in the cache, with its body compressed once in each encoding worth
    sending (scidraft.site.compression, where why this is safe from BREACH is argued)."""
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
    }


def _size(entry: dict) -> int:
    return len(entry["content"]) + sum(map(len, entry.get("encodings", {}).values()))


def _encode(request: HttpRequest, response: HttpResponse, entry: dict) -> None:
    """Give `response` (the page of `entry`) the body in the encoding the request accepts, with
    that encoding's ETag. Entries stored before pages were compressed have no encodings."""
    encodings = entry.get("encodings") or {}
    coding = compression.negotiate(request.META.get("HTTP_ACCEPT_ENCODING", ""), encodings)
    if coding is not None:
        response.content = encodings[coding]
        response["Content-Encoding"] = coding
        response["ETag"] = compression.etag_for(entry["etag"], coding)
    response["Content-Length"] = str(len(response.content))


def _restore(request: HttpRequest, entry: dict) -> HttpResponse:
    response = HttpResponse(entry["content"], status=entry["status"])
    for name, value in entry["headers"].items():
        response[name] = value
    response["ETag"] = entry["etag"]
    response["Last-Modified"] = entry["last_modified"]
    _encode(request, response, entry)
    return response


class _LocalPages:
    """This process's most recently served pages. A page key includes the generation, so the
    content under a key never changes: keeping it here is always safe, and saves the shared
    cache round trip of a whole page on every hit (the generation read still goes there)."""

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
        weight = _size(entry)
        if weight > self.max_bytes // 4:
            return
        with self.lock:
            if key in self.entries:
                return
            self.entries[key] = entry
            self.size += weight
            while self.size > self.max_bytes:
                _, old = self.entries.popitem(last=False)
                self.size -= _size(old)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.size = 0


local_pages = _LocalPages(max_bytes=settings.SCIDRAFT_PAGE_LOCAL_BYTES)
# Pages keyed by query parameters (search results), apart: a flood of distinct searches pushes
# out only other searches, never the site's pages, and never reaches the shared cache.
local_queries = _LocalPages(max_bytes=settings.SCIDRAFT_PAGE_QUERY_LOCAL_BYTES)


def _lookup(key: str, shared: bool = True) -> dict | None:
    if not shared:
        return local_queries.get(key)
    entry = local_pages.get(key)
    if entry is None:
        entry = _safe(cache.get, key)
        if entry is not None:
            local_pages.put(key, entry)
    return entry


class _Renders:
    """Pages some thread of this process is rendering now, by key. After a write, every hot page
    misses at once and each of a worker's threads would render the same page; instead the first
    renders and the others wait for it, then are served what it stored. The key includes the
    generation, so what a waiter is served is exactly what it would have rendered."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pending: dict[str, threading.Event] = {}

    def claim(self, key: str) -> tuple[threading.Event, bool]:
        """The key's event, and whether this caller renders (else it waits on the event)."""
        with self.lock:
            event = self.pending.get(key)
            if event is not None:
                return event, False
            event = self.pending[key] = threading.Event()
            return event, True

    def release(self, key: str, event: threading.Event) -> None:
        with self.lock:
            if self.pending.get(key) is event:
                del self.pending[key]
        event.set()


renders = _Renders()


class _SharedRenders:
    """Pages some process is rendering now, as claims in the shared cache. After a write, every
    worker misses every hot page at the same moment; without this each would render each page,
    and at a few publishes a second the renders alone would take every core. The first process
    to claim a key renders it; the others poll the cache for what it stores (a Redis round trip
    every few milliseconds, cheaper than a render) and render it themselves once the claim is
    gone without a page: the render failed, was not cacheable, or the claim expired. With the
    cache down, no claim is seen and every process renders, as before."""

    PREFIX = "render:"
    FIRST_POLL, LAST_POLL = 0.005, 0.05  # seconds between polls, doubling

    def claim(self, key: str) -> bool:
        """Whether this process renders the page (else another one is rendering it)."""
        seconds = max(1, -(-settings.SCIDRAFT_PAGE_RENDER_WAIT_MS // 1000))
        return bool(_safe(cache.add, self.PREFIX + key, 1, seconds, default=True))

    def release(self, key: str) -> None:
        _safe(cache.delete, self.PREFIX + key)

    def wait(self, key: str, deadline: float) -> dict | None:
        """The page the claiming process stored, or None once it is clear none is coming."""
        claim, delay = self.PREFIX + key, self.FIRST_POLL
        while True:
            found = _safe(cache.get_many, [key, claim], default={})
            if found.get(key) is not None:
                return found[key]
            remaining = deadline - time.monotonic()
            if claim not in found or remaining <= 0:
                return None
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, self.LAST_POLL)


shared_renders = _SharedRenders()


def _hit(request: HttpRequest, entry: dict) -> HttpResponse:
    response = _restore(request, entry)
    response["X-Cache"] = "hit"
    # What _public writes, without parsing a header the restored page lacks.
    response["Cache-Control"] = (
        f"public, max-age={settings.SCIDRAFT_PAGE_MAX_AGE}, "
        f"stale-while-revalidate={settings.SCIDRAFT_PAGE_STALE_WHILE_REVALIDATE}"
    )
    return _revalidated(request, response)


def _revalidated(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    if response.status_code != 200:
        return response
    conditional = get_conditional_response(request, etag=response["ETag"], response=response)
    return conditional if conditional is not None else response


def _public(response: HttpResponse) -> None:
    patch_cache_control(
        response,
        public=True,
        max_age=settings.SCIDRAFT_PAGE_MAX_AGE,
        stale_while_revalidate=settings.SCIDRAFT_PAGE_STALE_WHILE_REVALIDATE,
    )


class PageCacheMiddleware:
    """Serves cached public pages before sessions, auth and the view run.

    Placed right after whitenoise: a cached page costs about what a static file costs. Only
    requests without a session cookie are answered from the cache (anyone with a session may be
    logged in). On the way out it stores responses that a `cached_page` view rendered, with the
    headers the inner middleware added (CSP, frame options).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method not in ("GET", "HEAD") or (
            settings.SESSION_COOKIE_NAME in request.COOKIES
        ):
            return self.get_response(request)
        query = ""
        if request.META.get("QUERY_STRING"):
            names = page_query_parameters(request)
            if names is None:  # not a cached page: nothing under this URL is ever stored
                return self.get_response(request)
            query = canonical_query(request, names)
        shared = not query  # see the module's docstring
        key = page_key(request, request_generation(request), query)
        entry = _lookup(key, shared)
        if entry is not None:
            return _hit(request, entry)
        event, first = renders.claim(key)
        if not first:
            event.wait(settings.SCIDRAFT_PAGE_RENDER_WAIT_MS / 1000)
            entry = _lookup(key, shared)
            if entry is not None:
                return _hit(request, entry)
            # Not stored (an error, a page that is not cached) or too slow: render it here.
            return self._render(request, key, shared)
        try:
            if not shared:  # another process never stores it where this one could find it
                return self._render(request, key, shared)
            return self._render_once(request, key)
        finally:
            renders.release(key, event)

    def _render_once(self, request: HttpRequest, key: str) -> HttpResponse:
        """Render the page, unless another process is rendering it: then wait for its copy."""
        if not shared_renders.claim(key):
            deadline = time.monotonic() + settings.SCIDRAFT_PAGE_RENDER_WAIT_MS / 1000
            entry = shared_renders.wait(key, deadline)
            if entry is not None:
                local_pages.put(key, entry)
                return _hit(request, entry)
            return self._render(request, key)
        try:
            return self._render(request, key)
        finally:
            shared_renders.release(key)

    def _render(self, request: HttpRequest, key: str, shared: bool = True) -> HttpResponse:
        response = self.get_response(request)
        if (
            getattr(request, "_page_cacheable", False)
            and response.status_code in (200, 301, 302, 404)
            and not getattr(response, "streaming", False)
            and not _personal(request)
        ):
            entry = _store(response)
            if shared:
                _safe(cache.set, key, entry, settings.SCIDRAFT_PAGE_CACHE_TTL)
                local_pages.put(key, entry)
            else:
                local_queries.put(key, entry)
            # The first reader gets the stored encoding too, and its ETag: compared again, a
            # client revalidating its compressed copy gets its 304 from this render as well.
            _encode(request, response, entry)
            return _revalidated(request, response)
        return response


def not_final(request: HttpRequest) -> None:
    """The page shows a render cut short by time (notes.rendering.INCOMPLETE): it is neither
    stored here nor kept by browsers, so that readers get the complete one as soon as it is
    stored (writing it does not move the content generation past a page cached meanwhile:
    the page must not be cached at all)."""
    request._page_not_final = True


def cached_page(view, *, query: QueryParameters = ()):
    """Mark a public view cacheable: readers get ETag, 304s and public Cache-Control, and
    PageCacheMiddleware stores the response; anyone logged in gets private, no-store.

    `query` names the query parameters the view reads (or is a callable given the request and
    the view's arguments that returns them): only those reach the view and the page's key."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        response = view(request, *args, **kwargs)
        if request.method not in ("GET", "HEAD") or _personal(request):
            patch_cache_control(response, private=True, no_store=True)
            return response
        if getattr(request, "_page_not_final", False):
            patch_cache_control(response, no_cache=True, no_store=True)
            return response
        if getattr(response, "streaming", False):
            return response
        request._page_cacheable = True
        # PageCacheMiddleware serves the page compressed to those who accept it.
        patch_vary_headers(response, ("Accept-Encoding",))
        response["ETag"] = quote_etag(hashlib.sha256(response.content).hexdigest()[:32])
        response["Last-Modified"] = http_date()
        response["X-Cache"] = "miss"
        _public(response)
        return _revalidated(request, response)

    wrapper.page_query = query if callable(query) else tuple(query)
    return wrapper
