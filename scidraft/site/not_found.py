"""The site's own 404 page while DEBUG is on.

Django answers a 404 with its technical page (the URL patterns tried) whenever DEBUG is on, so
`make run` showed a local reader something no reader of the site ever sees. This middleware
renders templates/404.html instead, as production does, unless DEBUG_TECHNICAL_404 asks for
Django's page. With DEBUG off it does nothing: Django already renders the site's page.
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.defaults import page_not_found


def _active() -> bool:
    return settings.DEBUG and not settings.DEBUG_TECHNICAL_404


class SiteNotFoundMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # No view was reached: the URL matched no pattern (Django's page came from resolving).
        if response.status_code == 404 and _active() and request.resolver_match is None:
            return page_not_found(request, Http404())
        return response

    def process_exception(self, request: HttpRequest, exception: Exception):
        if isinstance(exception, Http404) and _active():
            return page_not_found(request, exception)
        return None
