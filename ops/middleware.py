"""Probes answered ahead of the rest of the stack.

/healthz and /readyz must answer whatever state the site is in: with the database down (the
page cache reads the content generation from it), for any Host header (a container or load
balancer probe asks by address, not by the site's name), without sessions, CSRF or the page
cache. Placed right after SecurityMiddleware, which adds nosniff and Referrer-Policy and
exempts them from the HTTPS redirect (SECURE_REDIRECT_EXEMPT); the response is JSON that
echoes nothing from the request, so skipping host validation exposes nothing.
"""

from __future__ import annotations

from . import views

PROBES = {"/healthz": views.healthz, "/readyz": views.readyz}
# What XFrameOptionsMiddleware and django-csp would add further in: JSON needs no more.
HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
}


class ProbeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        view = PROBES.get(request.path_info)
        if view is None:
            return self.get_response(request)
        response = view(request)
        for name, value in HEADERS.items():
            response.setdefault(name, value)
        return response
