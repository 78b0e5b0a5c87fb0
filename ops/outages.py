"""Riding out an unreachable database or cache.

`DatabaseOutageMiddleware` turns a lost database into a clear 503, never a 500: a page for
people and, for the editor's autosave (which the browser retries), the JSON
`{"status": "error", "error": "database unavailable, retrying"}`. Every write runs in one
transaction (notes.services), so a write cut off by the outage leaves nothing behind. Anonymous
pages already in the page cache are answered before anything needs the database
(scidraft.site.caching), so readers keep getting them. Once PostgreSQL is back, the next
request's connection health check (CONN_HEALTH_CHECKS) reconnects: no restart needed.

The middleware sits right after the probes, outside the page cache and sessions, because those
fail too (the content generation, a session read). Django turns an exception inside a
middleware into a 500 response before an outer middleware sees it, so the exception is noted
on the request (`got_request_exception`) and the 500 replaced here; a view's own exception is
caught first by `process_exception`.

`OutageLog` keeps the log readable during an outage: one warning when it starts, then at most
one per interval with the number of failures meanwhile (the cache backend uses it too).
"""

from __future__ import annotations

import logging
import sys
import threading
import time

from django.core.signals import got_request_exception
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve

logger = logging.getLogger(__name__)

DATABASE_ERRORS = (OperationalError, InterfaceError)
LOG_INTERVAL = 30.0
RETRY_AFTER_SECONDS = 5
# Endpoints called by scripts, not people: they get JSON (the editor retries its autosave).
JSON_VIEWS = frozenset({"editor:autosave"})
JSON_BODY = {"status": "error", "error": "database unavailable, retrying"}
# What XFrameOptionsMiddleware and django-csp, further in, would have added; the page loads
# only the site's stylesheet.
HEADERS = {
    "Retry-After": str(RETRY_AFTER_SECONDS),
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; frame-ancestors 'none'",
}


class OutageLog:
    """Logs a dependency's outage: at its first failure, then at most every `interval` seconds
    with the count of failures since, and once more when it answers again."""

    def __init__(self, name: str, interval: float = LOG_INTERVAL, log=logger):
        self.name = name
        self.interval = interval
        self.log = log
        self.down = False
        self.last_failure = 0.0
        self._since = 0.0
        self._last_report = 0.0
        self._unreported = 0
        self._failures = 0
        self._lock = threading.Lock()

    def failed(self, operation: str, error: BaseException) -> None:
        now = time.monotonic()
        with self._lock:
            # A failure long after the last one starts a new outage (nothing reports success
            # for the database).
            new = not self.down or now - self.last_failure > self.interval
            self.last_failure = now
            if new:
                self.down, self._since, self._failures = True, now, 0
            self._failures += 1
            if not new and now - self._last_report < self.interval:
                self._unreported += 1
                return
            unreported, self._unreported, self._last_report = self._unreported, 0, now
            lasting = now - self._since
        if new:
            self.log.warning(
                "%s unavailable (%s in %s: %s); degrading",
                self.name, type(error).__name__, operation, error,
            )  # fmt: skip
        else:
            self.log.warning(
                "%s still unavailable after %.0f s (%d more failures; last %s in %s: %s)",
                self.name, lasting, unreported + 1, type(error).__name__, operation, error,
            )  # fmt: skip

    def succeeded(self) -> None:
        if not self.down:  # the common case: no lock
            return
        with self._lock:
            if not self.down:
                return
            self.down = False
            lasting, failures = time.monotonic() - self._since, self._failures
        self.log.warning(
            "%s reachable again after %.1f s (%d failed calls)", self.name, lasting, failures
        )


database_outage = OutageLog("database")


def _wants_json(request: HttpRequest) -> bool:
    match = request.resolver_match
    if match is None:  # failed before URL resolution (the page cache, a middleware)
        try:
            match = resolve(request.path_info)
        except Resolver404:
            match = None
    if match is not None and match.view_name in JSON_VIEWS:
        return True
    return request.content_type == "application/json"


def outage_response(request: HttpRequest) -> HttpResponse:
    """503 without touching the database: a standalone template (no context processors)."""
    if _wants_json(request):
        response = JsonResponse(JSON_BODY, status=503)
    else:
        response = HttpResponse(render_to_string("503.html"), status=503)
    for name, value in HEADERS.items():
        response[name] = value
    # Django would log every one of these as an error; OutageLog reports the outage instead.
    response._has_been_logged = True
    return response


def _note_database_error(sender, request=None, **kwargs) -> None:
    # Sent while Django handles the exception, so sys.exc_info() is the error itself.
    if request is not None and isinstance(sys.exc_info()[1], DATABASE_ERRORS):
        request._database_unavailable = sys.exc_info()[1]


class DatabaseOutageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        got_request_exception.connect(_note_database_error, dispatch_uid=__name__)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            response = self.get_response(request)
        except DATABASE_ERRORS as error:  # raised while an inner layer handled another error
            return self._unavailable(request, error)
        error = getattr(request, "_database_unavailable", None)
        if error is not None:
            return self._unavailable(request, error)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception):
        if isinstance(exception, DATABASE_ERRORS):
            return self._unavailable(request, exception)
        return None

    def _unavailable(self, request: HttpRequest, error: BaseException) -> HttpResponse:
        database_outage.failed(f"{request.method} {request.path}", error)
        return outage_response(request)
