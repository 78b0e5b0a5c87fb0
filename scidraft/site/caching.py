"""Whole-response caching of public pages, keyed by the site's content generation.

A page is cached under (host, path, query, generation). Every write a reader could see bumps
the generation in its transaction (scidraft.site.receivers), so a new key is used from the
moment the write commits; nothing is purged. A scheduled note going live needs no write: the
generation read here knows the next due time and bumps once it has passed.

Readers get `Cache-Control: public, max-age, stale-while-revalidate`, an ETag and 304s;
anyone logged in gets `private, no-store` and is never served from or stored in the cache.
Cache errors (Redis down) degrade to rendering the page, logged; they never raise.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import http_date, quote_etag

from .models import ContentGeneration

logger = logging.getLogger(__name__)

GENERATION_KEY = "site:generation"
# Callables returning the next moment content becomes visible without a write (a scheduled
# note's date); registered by the apps that have such content (notes).
due_sources: list[Callable[[], dt.datetime | None]] = []


def _safe(operation, *args, default=None):
    try:
        return operation(*args)
    except Exception:  # a cache outage must cost speed, not pages
        logger.warning("cache %s failed", getattr(operation, "__name__", "call"), exc_info=True)
        return default


def _next_due() -> dt.datetime | None:
    moments = [moment for source in due_sources if (moment := source()) is not None]
    return min(moments) if moments else None


def _load_generation() -> tuple[int, float | None]:
    row = ContentGeneration.objects.filter(pk=1).values_list("value", flat=True).first()
    due = _next_due()
    return (row or 0, due.timestamp() if due else None)


def current_generation() -> int:
    """The generation pages are keyed by; bumps it once a scheduled note has come due."""
    state = _safe(cache.get, GENERATION_KEY)
    if state is None:
        state = _load_generation()
        # add, not set: a value read before a concurrent write committed must not replace the
        # writer's (writers set; see publish_generation).
        _safe(cache.add, GENERATION_KEY, state, settings.SCIDRAFT_GENERATION_TTL)
    value, due = state
    if due is not None and timezone.now().timestamp() >= due:
        with transaction.atomic():
            bump_generation()
        state = _load_generation()
        _safe(cache.set, GENERATION_KEY, state, settings.SCIDRAFT_GENERATION_TTL)
        value = state[0]
    return value


def bump_generation() -> None:
    """Call inside the write's transaction; readers see the new generation once it commits."""
    from django.db.models import F

    if not ContentGeneration.objects.filter(pk=1).update(value=F("value") + 1):
        ContentGeneration.objects.get_or_create(pk=1, defaults={"value": 1})
    # Forget the cached number now (this transaction reads its own write) and publish the new
    # one once committed: that replaces any old value a concurrent reader added meanwhile.
    _safe(cache.delete, GENERATION_KEY)
    transaction.on_commit(publish_generation)


def publish_generation() -> None:
    _safe(cache.set, GENERATION_KEY, _load_generation(), settings.SCIDRAFT_GENERATION_TTL)


def _personal(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


def page_key(request: HttpRequest, generation: int) -> str:
    query = "&".join(sorted(request.GET.urlencode().split("&"))) if request.GET else ""
    raw = f"{request.get_host()}|{request.path}|{query}|{generation}"
    return "page:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


_KEPT_HEADERS = ("Content-Type", "Content-Disposition", "Location", "Content-Language")


def _store(response: HttpResponse) -> dict:
    return {
        "status": response.status_code,
        "content": response.content,
        "headers": {name: response[name] for name in _KEPT_HEADERS if response.has_header(name)},
        "etag": response["ETag"],
        "last_modified": response["Last-Modified"],
    }


def _restore(entry: dict) -> HttpResponse:
    response = HttpResponse(entry["content"], status=entry["status"])
    for name, value in entry["headers"].items():
        response[name] = value
    response["ETag"] = entry["etag"]
    response["Last-Modified"] = entry["last_modified"]
    return response


def cached_page(view):
    """Cache a public view's anonymous GET responses (200, 301, 302, 404)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs):
        if request.method not in ("GET", "HEAD") or _personal(request):
            response = view(request, *args, **kwargs)
            patch_cache_control(response, private=True, no_store=True)
            return response
        generation = current_generation()
        key = page_key(request, generation)
        entry = _safe(cache.get, key)
        if entry is not None:
            response = _restore(entry)
            response["X-Cache"] = "hit"
        else:
            response = view(request, *args, **kwargs)
            if getattr(response, "streaming", False) or response.status_code not in (
                200, 301, 302, 404,
            ):  # fmt: skip
                return response
            response["ETag"] = quote_etag(
                hashlib.sha256(response.content).hexdigest()[:32] + f"-{generation}"
            )
            response["Last-Modified"] = http_date()
            if not _personal(request):  # the view may have logged someone in: then don't
                _safe(cache.set, key, _store(response), settings.SCIDRAFT_PAGE_CACHE_TTL)
            response["X-Cache"] = "miss"
        patch_cache_control(
            response,
            public=True,
            max_age=settings.SCIDRAFT_PAGE_MAX_AGE,
            stale_while_revalidate=settings.SCIDRAFT_PAGE_STALE_WHILE_REVALIDATE,
        )
        if response.status_code == 200:
            conditional = get_conditional_response(
                request, etag=response["ETag"], response=response
            )
            if conditional is not response:
                return conditional
        return response

    return wrapper
