"""The Content-Security-Policy: settings.CONTENT_SECURITY_POLICY everywhere, and on the pages
for authors and reviewers (the editor, /write/, and the admin with its note preview) the
stricter directives of settings.AUTHORING_CSP_REPLACE.

Those pages show drafts: an image a draft loads from another site would tell that site who
read it, and when. Readers' pages keep the site's policy.
"""

from __future__ import annotations

from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

AUTHORING_NAMESPACES = frozenset({"editor", "admin"})


def is_authoring(request: HttpRequest) -> bool:
    """Whether the request was routed to an editor or admin view (by namespace, so that new
    URLs there are covered without a list of paths)."""
    match = getattr(request, "resolver_match", None)
    return match is not None and not AUTHORING_NAMESPACES.isdisjoint(match.namespaces)


class SiteCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, with the authoring pages' directives on top."""

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if not report_only and is_authoring(request):
            # Last, so that no view of these pages loosens it.
            parts.replace = {**(parts.replace or {}), **settings.AUTHORING_CSP_REPLACE}
        return parts
