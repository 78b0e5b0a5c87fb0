"""Whole-response caching of public pages: served at once, fresh or briefly stale, and
rendered again in the background when what they show has changed.

A page is kept under (host, path, the query parameters it uses) with what it was rendered from
(scidraft.site.page_entries): the content generation, and the versions of the dependency tags
its view named (scidraft.site.dependencies). A write gives new versions to the tags of what it
changed (scidraft.site.generation), so it makes stale exactly the pages that show it; a page
whose view named no tags is stale once any write has moved the generation.

A fresh page is a hit. A stale page is served at once (`X-Cache: stale`) while one process
renders it again in the background (scidraft.site.render_claims), for at most
SCIDRAFT_PAGE_STALE_MAX_SECONDS after the latest change it misses: past that the reader renders
it, as on a miss, and so does everyone when the background render keeps failing. A reader
therefore never waits for a render someone else's write caused. A page never stored yet is
rendered once however many readers ask for it at once (within a process on an event, across
processes on a claim in the shared cache), the others waiting for it.

With SCIDRAFT_PAGE_INVALIDATION = "generation", or without a shared cache (no REDIS_URL: a
local-memory cache cannot hold versions every process sees), every page falls back to the
generation and a stale page is rendered as on a miss, readers waiting for it.

Readers get `Cache-Control: public, max-age, stale-while-revalidate`, an ETag and 304s;
anyone logged in gets `private, no-store` and is never served from or stored in the cache, so
a writer sees their own change at once. Cache errors (Redis down) degrade to rendering the
page, logged; they never raise.

Only the query parameters a page declares (`cached_page(view, query=...)`: a search's `q` and
`page`) are part of its key. The others (utm_*, fbclid, a cache-buster, a flood of random ones)
are removed from the request before the view sees it, and the request is answered with the
canonical page: it costs neither a render nor an entry, keeps the canonical page's ETag and
304s, and no redirect round trip (which would also defeat a cache-busting `?v=`: the browser
could hold the canonical URL stale for max-age). Pages keyed by query parameters (search
results: any text, one entry per distinct search) are kept only in each process's memory,
within SCIDRAFT_PAGE_QUERY_LOCAL_BYTES, never in the shared cache: a flood of random searches
costs renders, not Redis memory. They are never served stale.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import Resolver404, get_resolver
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date, quote_etag

from . import dependencies, generation
from .page_entries import (
    encode,
    forget,
    keep,
    latest_key,
    local_pages,
    local_queries,
    restore,
    store,
)
from .render_claims import refreshes, renders, shared_renders
from .sharedcache import safe

__all__ = [
    "PageCacheMiddleware", "cached_page", "canonical_query", "local_pages", "local_queries",
    "not_final", "page_key", "page_query_parameters", "refreshes", "renders", "shared_renders",
]  # fmt: skip


def _personal(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


def page_key(request: HttpRequest, query: str = "") -> str:
    """`query`: the canonical query string of the parameters the page uses (canonical_query).
    One key per page, whatever it was rendered from: an entry says that itself."""
    raw = f"{request.get_host()}|{request.path}|{query}"
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


def staleness(entry: dict, current: int) -> float | bool:
    """False if `entry` is fresh at generation `current`; else when the latest change it
    misses was made (a timestamp; 0 when unknown)."""
    tokens = entry.get("tokens")
    if tokens is not None and dependencies.by_dependencies():
        changed = dependencies.changed_since(tokens)
        if changed is not None:
            return changed
        # The shared cache cannot say: the generation (from the database) decides.
    if entry.get("generation") == current:
        return False
    return generation.changed_at() or 0.0


def _find(key: str, shared: bool, current: int) -> tuple[dict | None, float | bool]:
    """The freshest entry under `key` (this process's copy, else the shared cache's) and its
    staleness."""
    local = (local_pages if shared else local_queries).get(key)
    verdict = staleness(local, current) if local is not None else 0.0
    if verdict is False or not shared:
        return local, verdict
    if local is not None and _servable_stale(verdict) and not _due_for_refresh(local):
        # Served as it is until due, as a copy it fetched would be: another process may have
        # stored a newer render meanwhile, but this one asks once its copy is due, so a change
        # still shows within the interval and a render, and the stale reads before then cost
        # no round trip to the shared cache.
        return local, verdict
    if local is not None and safe(cache.get, latest_key(key)) == local.get("id"):
        return local, verdict  # the shared copy is the same render: not fetched
    found = safe(cache.get, key)
    if found is None or (local is not None and found.get("id") == local.get("id")):
        return local, verdict
    found_verdict = staleness(found, current)
    newer = local is None or found.get("rendered_at", 0) >= local.get("rendered_at", 0)
    if found_verdict is False or newer:
        local_pages.put(key, found)
        return found, found_verdict
    return local, verdict


def _hit(request: HttpRequest, entry: dict, state: str = "hit") -> HttpResponse:
    response = restore(request, entry)
    response["X-Cache"] = state
    # What _public writes, without parsing a header the restored page lacks; a stale page is
    # not to be kept as it is (the fresh one is being rendered).
    max_age = 0 if state == "stale" else settings.SCIDRAFT_PAGE_MAX_AGE
    response["Cache-Control"] = (
        f"public, max-age={max_age}, "
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


def _servable_stale(since: float | bool) -> bool:
    return (
        since is not False
        and dependencies.by_dependencies()
        and time.time() - since <= settings.SCIDRAFT_PAGE_STALE_MAX_SECONDS
    )


def _due_for_refresh(entry: dict) -> bool:
    """Whether a stale page has been kept long enough to be rendered again
    (SCIDRAFT_PAGE_REFRESH_MS): until then its readers are served it as it is, and a later one
    starts the render, so a burst of writes to what it shows costs one render, not one each.
    A change is thus visible within that interval and one render, never past the stale bound."""
    age = time.time() - entry.get("rendered_at", 0)
    return age * 1000 >= settings.SCIDRAFT_PAGE_REFRESH_MS


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
        key = page_key(request, query)
        # Read before anything the page is rendered from: see scidraft.site.dependencies.
        current = generation.request_generation(request)
        entry, since = _find(key, shared, current)
        if entry is not None and since is False:
            return _hit(request, entry)
        if entry is not None and shared and _servable_stale(since):
            if _due_for_refresh(entry):
                refreshes.start(key, request, lambda fresh: self._refresh(fresh, key))
            return _hit(request, entry, "stale")
        old = entry.get("id") if entry is not None else None
        event, first = renders.claim(key)
        if not first:
            event.wait(settings.SCIDRAFT_PAGE_RENDER_WAIT_MS / 1000)
            entry, since = _find(key, shared, current)
            if entry is not None and (since is False or entry.get("id") != old):
                return _hit(request, entry)
            # Not stored (an error, a page that is not cached) or too slow: render it here.
            return self._render(request, key, shared)
        try:
            if not shared:  # another process never stores it where this one could find it
                return self._render(request, key, shared)
            return self._render_once(request, key, old)
        finally:
            renders.release(key, event)

    def _render_once(self, request: HttpRequest, key: str, old: str | None) -> HttpResponse:
        """Render the page, unless another process is rendering it: then wait for its copy."""
        if not shared_renders.claim(key):
            deadline = time.monotonic() + settings.SCIDRAFT_PAGE_RENDER_WAIT_MS / 1000
            entry = shared_renders.wait(key, deadline, old)
            if entry is not None:
                local_pages.put(key, entry)
                return _hit(request, entry)
            return self._render(request, key)
        with shared_renders.kept(key):
            return self._render(request, key)

    def _refresh(self, request: HttpRequest, key: str) -> None:
        """A stale page rendered again in the background (render_claims.refreshes), from a
        request of its own: the render is checked against what it reads now."""
        generation.request_generation(request)
        self._render(request, key)

    def _render(self, request: HttpRequest, key: str, shared: bool = True) -> HttpResponse:
        response = self.get_response(request)
        if (
            getattr(request, "_page_cacheable", False)
            and response.status_code in (200, 301, 302, 404)
            and not getattr(response, "streaming", False)
            and not _personal(request)
        ):
            rendered_from = getattr(request, "_content_generation", None)
            tags = dependencies.page_tags(request)
            tokens = None
            if tags is not None and rendered_from is not None and dependencies.by_dependencies():
                tokens = dependencies.recorded(tags, rendered_from)
            entry = store(response, rendered_from, tokens)
            keep(key, entry, shared)
            # The first reader gets the stored encoding too, and its ETag: compared again, a
            # client revalidating its compressed copy gets its 304 from this render as well.
            encode(request, response, entry)
            return _revalidated(request, response)
        if response.status_code in (404, 410):
            # Gone (a note unpublished, trashed or renamed): its stale copy must not be served
            # on, nor checked by every reader until it expires.
            forget(key, shared)
        return response


def not_final(request: HttpRequest) -> None:
    """The page shows a render cut short by time (notes.rendering.INCOMPLETE): it is neither
    stored here nor kept by browsers, so that readers get the complete one as soon as it is
    stored (writing it makes no page stale: the page must not be cached at all)."""
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
